// The speech map of a real recording (Asterisk's "You are now unmuted.", Allison Smith) with silence put around it,
// through both detectors; and the share arithmetic on maps made by hand.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeToBuffer } from './decode.js';
import { FRAME_MS, nonSpeechShare, speechMapOf } from './speech-map.js';
import { loadVad } from './vad.js';

const UNMUTED = '/usr/share/asterisk/sounds/en_US_f_Allison/conf-unmuted.wav';
const BYTES_PER_MS = 32;

async function* chunks(pcm: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < pcm.length; at += size) yield pcm.subarray(at, at + size);
}

describe('nonSpeechShare', () => {
  const map = { speech: Uint8Array.from([0, 0, 1, 1, 1, 1, 0, 0]), durationMs: 8 * FRAME_MS };

  it('is the part of the stretch the detector did not call speech, frames weighed by their overlap', () => {
    expect(nonSpeechShare(map, 2 * FRAME_MS, 6 * FRAME_MS)).toBe(0);
    expect(nonSpeechShare(map, 0, 8 * FRAME_MS)).toBe(0.5);
    expect(nonSpeechShare(map, 0, 2 * FRAME_MS)).toBe(1);
    // Half a silent frame and one speech frame.
    expect(nonSpeechShare(map, 1.5 * FRAME_MS, 3 * FRAME_MS)).toBe(0.3333);
  });

  it('counts audio past the end as no speech, and judges an empty stretch by its frame', () => {
    expect(nonSpeechShare(map, 4 * FRAME_MS, 12 * FRAME_MS)).toBe(0.75);
    expect(nonSpeechShare(map, 3 * FRAME_MS, 3 * FRAME_MS)).toBe(0);
    expect(nonSpeechShare(map, FRAME_MS, FRAME_MS)).toBe(1);
    expect(nonSpeechShare({ speech: new Uint8Array(0), durationMs: 0 }, 0, 100)).toBe(1);
  });
});

describe.skipIf(!existsSync(UNMUTED))('speechMapOf', () => {
  it('maps a recording between silences: its speech mostly speech, the silences none, whatever the chunking', async () => {
    const speech = await decodeToBuffer(UNMUTED);
    const lead = 1000;
    const pcm = Buffer.concat([Buffer.alloc(lead * BYTES_PER_MS), speech, Buffer.alloc(1500 * BYTES_PER_MS)]);
    const speechEnd = lead + speech.length / BYTES_PER_MS;
    for (const backend of ['silero', 'energy'] as const) {
      const vad = await loadVad({ backend });
      const map = await speechMapOf(chunks(pcm, 1001), vad.createStream());
      expect(map.durationMs).toBe(pcm.length / BYTES_PER_MS);
      expect(map.speech.length).toBe(Math.ceil(map.durationMs / FRAME_MS));
      expect(nonSpeechShare(map, 0, lead), backend).toBe(1);
      // The detector holds speech a little past its end (hysteresis): judged from 300 ms after.
      expect(nonSpeechShare(map, speechEnd + 300, map.durationMs), backend).toBe(1);
      expect(nonSpeechShare(map, lead, speechEnd), backend).toBeLessThan(0.5);
      expect(await speechMapOf(chunks(pcm, 64 * 1024), vad.createStream())).toEqual(map);
    }
  });
});
