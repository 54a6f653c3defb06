import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/harness.js';
import { decodeToBuffer } from './decode.js';
import { pcmToFloat, pitchTrack, SpectralFrameStream, spectralFrames, voiceProfile } from './features.js';

const execFileP = promisify(execFile);
const dir = tempDir('parlance-features-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.';

/** espeak-ng speech at a given pitch (0-99) and rate (words per minute), decoded to 16 kHz floats. */
async function espeak(name: string, pitch: number, wpm: number): Promise<Float32Array> {
  const file = path.join(dir, `${name}.wav`);
  await execFileP('espeak-ng', ['-v', 'en-us', '-p', String(pitch), '-s', String(wpm), '-w', file, TEXT]);
  return pcmToFloat(await decodeToBuffer(file));
}

async function tone(hz: number, seconds: number): Promise<Float32Array> {
  const file = path.join(dir, `tone-${hz}.wav`);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=${hz}:duration=${seconds}`, '-y', file]);
  return pcmToFloat(await decodeToBuffer(file));
}

describe('audio features', () => {
  it('tracks the pitch of a pure tone and reports silence as unvoiced', async () => {
    const f0 = pitchTrack(await tone(220, 1));
    const voiced = Array.from(f0).filter((v) => v > 0);
    expect(voiced.length).toBeGreaterThan(f0.length * 0.9);
    for (const v of voiced) expect(Math.abs(v - 220)).toBeLessThan(5);
    expect(Array.from(pitchTrack(new Float32Array(16_000))).every((v) => v === 0)).toBe(true);
  });

  it('orders voices by pitch and speaking rate the way they were synthesized', async () => {
    const low = voiceProfile(await espeak('low', 10, 160));
    const high = voiceProfile(await espeak('high', 90, 160));
    const fast = voiceProfile(await espeak('fast', 50, 260));
    const slow = voiceProfile(await espeak('slow', 50, 110));
    expect(high.pitchMedianHz).toBeGreaterThan(low.pitchMedianHz * 1.3);
    expect(low.pitchMedianHz).toBeGreaterThan(60);
    expect(fast.syllablesPerSecond).toBeGreaterThan(slow.syllablesPerSecond * 1.4);
    expect(slow.syllablesPerSecond).toBeGreaterThan(1);
    expect(low.voicedRatio).toBeGreaterThan(0.2);
    expect(low.mfccMean).toHaveLength(13);
    expect(low.pitchRangeSemitones).toBeGreaterThan(0);
  });

  it('gives one 13-coefficient MFCC vector per 10 ms hop and leaves the input untouched', async () => {
    const samples = await tone(440, 0.5);
    const copy = samples.slice();
    const f = spectralFrames(samples);
    expect(f.mfcc.length).toBe(Math.floor((samples.length - 512) / 160) + 1);
    expect(f.mfcc[0]).toHaveLength(13);
    expect(Math.abs(f.centroidHz[10]! - 440)).toBeLessThan(120);
    expect(samples).toEqual(copy);
  });
});

describe('SpectralFrameStream', () => {
  it('gives the same frames, on the same grid, as spectralFrames over the whole signal, whatever the chunking', async () => {
    const samples = await espeak('stream', 50, 170);
    const whole = spectralFrames(samples);
    const stream = new SpectralFrameStream();
    const mfcc: Float32Array[] = [];
    let first = -1;
    // Uneven pieces, some shorter than one frame.
    for (let i = 0, k = 0; i < samples.length; k++) {
      const n = [37, 700, 4000, 161][k % 4]!;
      const out = stream.push(samples.slice(i, i + n), true);
      if (first < 0 && out.mfcc.length) first = out.first;
      expect(out.pitchHz).toHaveLength(out.mfcc.length);
      mfcc.push(...out.mfcc);
      i += n;
    }
    expect(first).toBe(0);
    expect(mfcc.length).toBe(whole.mfcc.length);
    for (const i of [0, 100, Math.floor(mfcc.length / 2), mfcc.length - 1]) {
      for (let c = 0; c < 13; c++) expect(mfcc[i]![c]).toBeCloseTo(whole.mfcc[i]![c]!, 3);
    }
  });
});
