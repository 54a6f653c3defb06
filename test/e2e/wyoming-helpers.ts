// What the Wyoming test files share: the protocol client (../wyoming-client.ts), a streamed synthesis's audio
// blocks checked against the protocol, and a look at the TTS slots.
import { expect } from 'vitest';
import type { Parlance } from '../harness.js';
import type { Event } from '../wyoming-client.js';

export { type Event, freePort, WyomingClient } from '../wyoming-client.js';

/** TTS requests and streams holding a concurrency slot of the server's project now. */
export async function ttsActive(s: Parlance): Promise<number> {
  const res = await s.request('/v1/concurrency-limits');
  return ((await res.json()) as { project: { current: { tts_concurrent: number } } }).project.current.tts_concurrent;
}

export interface Blocks {
  /** Each audio-start … audio-stop block's PCM. */
  pcm: Buffer[];
  rate: number;
  /** Events outside the blocks. */
  others: Event[];
}

/** Audio blocks as the wyoming package defines them: audio-start, audio-chunks with the same format, audio-stop. */
export function blocks(events: Event[]): Blocks {
  const out: Blocks = { pcm: [], rate: 0, others: [] };
  let open: Buffer[] | undefined;
  let format: Record<string, unknown> | undefined;
  for (const e of events) {
    if (e.type === 'audio-start') {
      expect(open).toBeUndefined();
      expect(e.data).toEqual({ rate: expect.any(Number) as number, width: 2, channels: 1 });
      format = e.data;
      out.rate ||= e.data.rate as number;
      expect(e.data.rate).toBe(out.rate);
      open = [];
    } else if (e.type === 'audio-chunk') {
      expect(open).toBeDefined();
      expect(e.data).toEqual(format);
      expect(e.payload?.length).toBeGreaterThan(0);
      // 1024 samples of 16-bit audio, the last of a block shorter.
      expect(e.payload!.length).toBeLessThanOrEqual(2048);
      open!.push(e.payload!);
    } else if (e.type === 'audio-stop') {
      expect(open?.length).toBeGreaterThan(0);
      out.pcm.push(Buffer.concat(open!));
      open = undefined;
    } else {
      expect(open, `${e.type} inside an audio block`).toBeUndefined();
      out.others.push(e);
    }
  }
  expect(open).toBeUndefined();
  return out;
}
