// Engine-only, in-process figure (not the product's: no server, socket, pacing or finalize; `npm run bench -- live`
// measures the product): final-token accuracy of live sessions against file transcription on the same real recordings
// (pocketsphinx-testdata: librivox read speech and the cards set), through the engine's own code paths in this process:
//   - async: Recognizer.transcribe (the file path: VAD segments, batch decoders)
//   - live, one pass: Recognizer.stream with the second pass off (the streaming decoder's own finals)
//   - live, two passes: Recognizer.stream with the second pass on (the default)
// Each clip is streamed alone (0.5 s of a -60 dBFS noise floor around it) and all clips one after another in one
// session (1 s of noise between them: several utterances through one decoder, as in a conversation). Audio is fed
// in 20 ms chunks as fast as the engine takes it (accuracy does not depend on pace; latency is measured apart).
import { PocketsphinxEngine } from '../src/engines/stt/pocketsphinx/engine.js';
import { testdataClips, werOf } from '../test/real-speech.js';
import type { Recognizer, Token } from '../src/engines/stt/interface.js';
import { noiseFloor, pcm16k } from './lib.js';

async function* chunks(pcm: Buffer): AsyncIterable<Uint8Array> {
  for (let off = 0; off < pcm.length; off += 640) yield pcm.subarray(off, off + 640);
}

async function live(recognizer: Recognizer, pcm: Buffer): Promise<string> {
  const session = await recognizer.stream();
  const finals: Token[] = [];
  session.on('final', (t) => finals.push(...t));
  for await (const c of chunks(pcm)) await session.write(c);
  await session.end();
  return finals.map((t) => t.text).join(' ');
}

/** WER per mode; the second pass gets as long as it needs (this measures words, not a loaded machine's timing). */
export async function liveWer(waitMs = 600_000): Promise<Record<string, { wer: number; words: number; errors: number }>> {
  const clips = testdataClips();
  const audio = await Promise.all(clips.map((c) => pcm16k(c.file)));
  const results: Record<string, { wer: number; words: number; errors: number }> = {};
  for (const secondPass of [false, true]) {
    const engine = new PocketsphinxEngine({ secondPass: secondPass ? { waitMs, budgetMs: Number.POSITIVE_INFINITY } : false, warmStreams: 0 });
    try {
      const recognizer = await engine.load('en-us');
      if (!secondPass) {
        const texts = await Promise.all(audio.map(async (a) => (await recognizer.transcribe(chunks(a))).map((t) => t.text).join(' ')));
        results.async = werOf(clips.map((c, i) => ({ reference: c.reference, text: texts[i]! })));
      }
      const alone: string[] = [];
      for (const a of audio) alone.push(await live(recognizer, Buffer.concat([noiseFloor(500), a, noiseFloor(500, 7)])));
      results[`live ${secondPass ? 'two-pass' : 'one-pass'}, clip per session`] = werOf(clips.map((c, i) => ({ reference: c.reference, text: alone[i]! })));
      const joined = Buffer.concat(audio.flatMap((a, i) => [noiseFloor(1000, i + 3), a]).concat([noiseFloor(1000, 99)]));
      const text = await live(recognizer, joined);
      results[`live ${secondPass ? 'two-pass' : 'one-pass'}, all clips in one session`] = werOf([{ reference: clips.map((c) => c.reference).join(' '), text }]);
    } finally {
      await engine.close();
    }
  }
  return results;
}
