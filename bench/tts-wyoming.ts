// Wyoming streaming synthesis as Home Assistant drives it with an LLM reply (issue 37, item 1): `synthesize-start`,
// the first sentence in two `synthesize-chunk`s, then the rest and `synthesize-stop`. Measured: from writing the chunk
// that completes the first sentence (its end mark and a space) to the first `audio-chunk` of its block — the number to
// hold against POST /tts's first byte for the same sentence.
import { performance } from 'node:perf_hooks';
import { WyomingClient } from '../test/wyoming-client.js';

/** One streamed reply on `c`: ms from the first sentence's completing chunk to its first audio. */
export async function wyomingFirstAudio(c: WyomingClient, voice: string, first: [string, string], rest: string): Promise<number> {
  c.write('synthesize-start', { voice: { name: voice } });
  c.write('synthesize-chunk', { text: first[0] });
  const t0 = performance.now();
  c.write('synthesize-chunk', { text: first[1] });
  let firstAudio = -1;
  for (;;) {
    const e = await c.read();
    if (e.type === 'error') throw new Error(`wyoming error: ${JSON.stringify(e.data)}`);
    if (e.type === 'audio-chunk') {
      firstAudio = performance.now() - t0;
      break;
    }
  }
  c.write('synthesize-chunk', { text: rest });
  c.write('synthesize-stop');
  const tail = await c.readUntil('synthesize-stopped', 'error');
  if (tail.at(-1)!.type === 'error') throw new Error(`wyoming error: ${JSON.stringify(tail.at(-1)!.data)}`);
  return firstAudio;
}
