// The pause detector of streaming-model sessions on real speech and Silero: an utterance ends once, after enough
// non-speech follows speech, and not in the noise before any speech or in a shorter pause.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadVad, type Vad } from '../../../audio/vad.js';
import { noiseFloorSamples } from '../../../audio/noise-floor.js';
import { pcm16k } from '../../../../test/real-model.js';
import { testdataClips } from '../../../../test/real-speech.js';
import { PauseDetector } from './pauses.js';

let vad: Vad;
let speech: Buffer;
beforeAll(async () => {
  vad = await loadVad({ log: () => {} });
  speech = pcm16k(testdataClips()[0]!.file);
});

const floor = (ms: number, seed: number) => Buffer.from(noiseFloorSamples(ms, seed).buffer);

/** Feed `pcm` in 20 ms pieces; the byte offsets (in the whole fed so far) after which the detector said "ended". */
async function feed(d: PauseDetector, pcm: Buffer, at = { bytes: 0 }): Promise<number[]> {
  const ends: number[] = [];
  for (let off = 0; off < pcm.length; off += 640) {
    if (await d.push(pcm.subarray(off, off + 640))) ends.push(at.bytes + Math.min(pcm.length, off + 640));
  }
  at.bytes += pcm.length;
  return ends;
}

describe('PauseDetector', () => {
  it('ends an utterance once, after 600 ms of the noise floor that follows speech, and never in noise alone', async () => {
    const d = new PauseDetector(vad.createStream(), 600 * 16);
    const at = { bytes: 0 };
    expect(await feed(d, floor(1500, 1), at)).toEqual([]);
    const speechEnd = at.bytes + speech.length;
    const ends = [...(await feed(d, speech, at)), ...(await feed(d, floor(2000, 2), at))];
    expect(ends).toHaveLength(1);
    // Not before 600 ms after the speech (the recording has its own short tail of silence).
    expect(ends[0]!).toBeGreaterThanOrEqual(speechEnd - 1000 * 32 + 600 * 32);
    expect(ends[0]!).toBeLessThanOrEqual(speechEnd + 1000 * 32);
  });

  it('does not end at a pause shorter than the endpoint, and needs new speech after finalize', async () => {
    const d = new PauseDetector(vad.createStream(), 1500 * 16);
    expect(await feed(d, Buffer.concat([speech, floor(800, 3), speech]))).toEqual([]);
    d.closed();
    expect(await feed(d, floor(2000, 4))).toEqual([]);
  });
});
