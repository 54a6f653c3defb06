// Segmentation of long audio at pauses, with the real Silero VAD on flite speech.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeToBuffer } from '../../audio/decode.js';
import { loadVad, VAD_FRAME_SAMPLES, type Vad } from '../../audio/vad.js';
import { VadSegmenter, type SegmenterOptions, type SpeechSegment } from './segmenter.js';

const run = promisify(execFile);
const BYTES_PER_MS = 32;
const SENTENCES: [string, string][] = [
  ['slt', 'the quick brown fox jumps over the lazy dog'],
  ['rms', 'we will meet at the station at nine in the morning'],
  ['awb', 'i would like to book a table for two people'],
  ['kal16', 'please call me back when you get home tonight'],
  ['slt', 'the weather today is cold and windy with some rain'],
  ['rms', 'she sold her old car and bought a new bicycle'],
];

let dir: string;
let vad: Vad;
let clips: Buffer[];

/** Clips separated by the given gaps (ms of digital silence); returns the audio and each clip's [start, end) samples. */
function compose(gapsMs: number[], order = clips.map((_, i) => i)): { pcm: Buffer; spans: [number, number][] } {
  const parts: Buffer[] = [];
  const spans: [number, number][] = [];
  let at = 0;
  order.forEach((c, i) => {
    const gap = Buffer.alloc(gapsMs[i % gapsMs.length]! * BYTES_PER_MS);
    parts.push(gap, clips[c]!);
    at += gap.length / 2;
    spans.push([at, at + clips[c]!.length / 2]);
    at += clips[c]!.length / 2;
  });
  return { pcm: Buffer.concat(parts), spans };
}

async function segment(pcm: Buffer, options: SegmenterOptions = {}, chunk = 16_000): Promise<{ segments: SpeechSegment[]; segmenter: VadSegmenter }> {
  const segmenter = new VadSegmenter(vad.createStream(), options);
  const segments: SpeechSegment[] = [];
  for (let off = 0; off < pcm.length; off += chunk) segments.push(...(await segmenter.push(pcm.subarray(off, off + chunk))));
  segments.push(...(await segmenter.flush()));
  return { segments, segmenter };
}

function expectExactSlices(segments: SpeechSegment[], pcm: Buffer, maxMs: number): void {
  let previousEnd = 0;
  for (const s of segments) {
    expect(s.startSample % VAD_FRAME_SAMPLES).toBe(0);
    expect(s.startSample).toBeGreaterThanOrEqual(previousEnd);
    expect(s.samples.length).toBeLessThanOrEqual(maxMs * 16);
    expect(s.samples.byteOffset).toBe(0);
    expect(s.samples.buffer.byteLength).toBe(s.samples.byteLength); // transferable as is
    const original = pcm.subarray(s.startSample * 2, (s.startSample + s.samples.length) * 2);
    expect(Buffer.compare(Buffer.from(s.samples.buffer), original)).toBe(0);
    previousEnd = s.startSample + s.samples.length;
  }
}

beforeAll(async () => {
  try {
    execFileSync('flite', ['-lv'], { stdio: 'ignore' });
  } catch {
    throw new Error('flite is not installed (Debian package flite): it synthesizes the test speech');
  }
  dir = await mkdtemp(join(tmpdir(), 'parlance-segmenter-'));
  clips = await Promise.all(
    SENTENCES.map(async ([voice, text], i) => {
      const wav = join(dir, `${i}.wav`);
      await run('flite', ['-voice', voice, '-t', text, '-o', wav]);
      return decodeToBuffer(wav);
    }),
  );
  vad = await loadVad();
  expect(vad.backend).toBe('silero');
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('VadSegmenter', () => {
  it('cuts at long pauses, skips the silence and keeps every clip whole, at its exact position', async () => {
    const { pcm, spans } = compose([3000, 1500, 2000]);
    const { segments, segmenter } = await segment(pcm);
    expectExactSlices(segments, pcm, 20_000);
    expect(segments).toHaveLength(clips.length); // one per clip: every gap is longer than skipPauseMs
    spans.forEach(([start, end], i) => {
      const s = segments[i]!;
      // Each segment holds its clip (flite's own lead-in and tail are quiet, so a little may be trimmed off them).
      expect(s.startSample).toBeLessThanOrEqual(start + 200 * 16);
      expect(s.startSample + s.samples.length).toBeGreaterThanOrEqual(end - 200 * 16);
      expect(s.startSample).toBeGreaterThanOrEqual(start - 600 * 16);
      expect(s.speechMs).toBeGreaterThan(1000);
    });
    const stats = segmenter.stats;
    expect(stats.segments).toBe(clips.length);
    // Nothing lost or counted twice: handed out + skipped = everything.
    expect(stats.segmentMs + stats.skippedMs).toBeCloseTo(pcm.length / BYTES_PER_MS, 3);
    expect(stats.skippedMs).toBeGreaterThan(10_000);
  });

  it('keeps short pauses inside a segment and cuts long speech in a pause before the maximum length', async () => {
    // 18 clips with 300 ms pauses: about 55 s with no pause long enough to end a segment by itself.
    const order = [...clips.keys(), ...clips.keys(), ...clips.keys()];
    const { pcm, spans } = compose([300], order);
    const maxMs = 10_000;
    const { segments, segmenter } = await segment(pcm, { maxSegmentMs: maxMs, minSegmentMs: 3000 });
    expectExactSlices(segments, pcm, maxMs);
    console.info(`segments (s): ${segments.map((s) => `${(s.startSample / 16_000).toFixed(2)}+${(s.samples.length / 16_000).toFixed(2)}`).join(' ')}`);
    expect(segments.length).toBeGreaterThanOrEqual(Math.ceil(pcm.length / BYTES_PER_MS / maxMs));
    const inPause = (sample: number): boolean => spans.some(([start], k) => k > 0 && sample > spans[k - 1]![1] - 100 * 16 && sample < start + 100 * 16);
    for (let i = 1; i < segments.length; i++) {
      // Each cut falls inside one of the 300 ms pauses, not inside a word; the next segment starts in the same pause
      // (at most the rest of the pause, less padding, is skipped).
      const cut = segments[i - 1]!.startSample + segments[i - 1]!.samples.length;
      const next = segments[i]!.startSample;
      expect(inPause(cut), `cut at ${(cut / 16_000).toFixed(2)} s`).toBe(true);
      expect(inPause(next), `next segment at ${(next / 16_000).toFixed(2)} s`).toBe(true);
      expect(next - cut).toBeLessThan(300 * 16);
    }
    // Memory stays flat: never more than one window plus the piece just pushed (16 000 bytes = 0.5 s).
    expect(segmenter.stats.maxBufferedSamples).toBeLessThanOrEqual(maxMs * 16 + 8000 + VAD_FRAME_SAMPLES);
  });

  it('cuts back-to-back speech at the maximum length, skipping nothing but a part of a short pause', async () => {
    const { pcm } = compose([0], [0, 1, 2, 3, 4, 5]); // ~17 s; only flite's own short lead-ins and tails are quiet
    const { segments } = await segment(pcm, { maxSegmentMs: 5000, minSegmentMs: 2000 }, 3333);
    expectExactSlices(segments, pcm, 5000);
    expect(segments.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < segments.length; i++) {
      const gap = segments[i]!.startSample - (segments[i - 1]!.startSample + segments[i - 1]!.samples.length);
      expect(gap).toBeGreaterThanOrEqual(0);
      expect(gap).toBeLessThan(200 * 16);
    }
    expect(segments[0]!.startSample).toBeLessThan(300 * 16);
    const last = segments.at(-1)!;
    expect(last.startSample + last.samples.length).toBeGreaterThan(pcm.length / 2 - 300 * 16);
  });

  it('gives the same segments whatever the chunking', async () => {
    const { pcm } = compose([1200, 400, 900]);
    const a = await segment(pcm, {}, 1001);
    const b = await segment(pcm, {}, 64 * 1024);
    expect(a.segments.map((s) => [s.startSample, s.samples.length])).toEqual(b.segments.map((s) => [s.startSample, s.samples.length]));
  });

  it('hands out nothing for silence or noise, and emits speech that runs to the end of the input', async () => {
    expect((await segment(Buffer.alloc(5000 * BYTES_PER_MS))).segments).toEqual([]);
    expect((await segment(Buffer.alloc(0))).segments).toEqual([]);
    const noise = new Int16Array(16_000 * 4);
    let seed = 3;
    for (let i = 0; i < noise.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      noise[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * 800);
    }
    const noisy = await segment(Buffer.from(noise.buffer));
    expect(noisy.segments).toEqual([]);
    expect(noisy.segmenter.stats.skippedMs).toBeCloseTo(4000, 3);
    // Speech up to the last sample: the final segment ends exactly there.
    const tail = Buffer.concat([Buffer.alloc(2000 * BYTES_PER_MS), clips[0]!.subarray(0, clips[0]!.length - 4000)]);
    const { segments } = await segment(tail);
    expect(segments).toHaveLength(1);
    expect(segments[0]!.startSample + segments[0]!.samples.length).toBe(tail.length / 2);
  });
});
