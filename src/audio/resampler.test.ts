// The streaming resampler on synthetic tones: frequency and length kept, content above the new Nyquist removed,
// and the same output however the input is split.
import { describe, expect, it } from 'vitest';
import { StreamResampler } from './resampler.js';

const tone = (rate: number, hz: number, seconds: number, amp = 0.5) =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => amp * Math.sin((2 * Math.PI * hz * i) / rate));

function resample(x: Float32Array, inRate: number, outRate: number, pieces: number[] = [x.length]): Float32Array {
  const r = new StreamResampler(inRate, outRate);
  const parts: Float32Array[] = [];
  let at = 0;
  for (const n of pieces) {
    parts.push(r.push(x.subarray(at, at + n)));
    at += n;
  }
  if (at < x.length) parts.push(r.push(x.subarray(at)));
  parts.push(r.flush());
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Sign changes per second over the middle of the signal (edges skipped). */
function crossingsPerSecond(y: Float32Array, rate: number): number {
  const from = Math.round(rate * 0.1);
  const to = y.length - from;
  let n = 0;
  for (let i = from + 1; i < to; i++) if (y[i - 1]! < 0 !== y[i]! < 0) n++;
  return n / ((to - from - 1) / rate);
}

/** Byte-exact comparison (toEqual walks typed arrays element by element, slowly). */
const bytes = (y: Float32Array) => Buffer.from(y.buffer, y.byteOffset, y.byteLength).toString('base64');

const rms = (y: Float32Array, from = 0, to = y.length) => {
  let s = 0;
  for (let i = from; i < to; i++) s += y[i]! ** 2;
  return Math.sqrt(s / (to - from));
};

/** Random piece sizes (seeded) covering `total`, including empty and one-sample pieces. */
function randomPieces(total: number, seed: number): number[] {
  const out: number[] = [];
  let s = seed;
  for (let left = total; left > 0;) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const n = Math.min(left, [0, 1, 2, 7, 160, 441, 1000, 4096][(s >>> 16) % 8]!);
    out.push(n);
    left -= n;
  }
  return out;
}

describe('StreamResampler', () => {
  it.each([44_100, 22_050, 11_025, 48_000, 8_000, 32_000, 12_345, 96_000])('%i Hz → 16 kHz keeps a 440 Hz tone and the length', (rate) => {
    const x = tone(rate, 440, 1.5);
    const y = resample(x, rate, 16_000);
    expect(y.length).toBe(Math.ceil((x.length * 16_000) / rate));
    expect(crossingsPerSecond(y, 16_000)).toBeCloseTo(880, -1);
    const mid = [Math.round(16_000 * 0.1), y.length - Math.round(16_000 * 0.1)] as const;
    expect(rms(y, ...mid)).toBeCloseTo(0.5 / Math.SQRT2, 2);
  });

  it('removes content above the new Nyquist frequency instead of folding it back', () => {
    // 10 kHz at 44.1 kHz would alias to 6 kHz at 16 kHz without the low-pass.
    const y = resample(tone(44_100, 10_000, 1), 44_100, 16_000);
    expect(rms(y, 1600, y.length - 1600)).toBeLessThan(0.005);
    // A 3 kHz tone in the pass band goes through at full level.
    const z = resample(tone(44_100, 3000, 1), 44_100, 16_000);
    expect(rms(z, 1600, z.length - 1600)).toBeGreaterThan(0.34);
  });

  it.each([44_100, 8_000, 12_345])('gives the same samples however the input is split (%i Hz)', (rate) => {
    const x = tone(rate, 300, 0.5);
    const whole = resample(x, rate, 16_000);
    for (const seed of [1, 2, 3]) expect(bytes(resample(x, rate, 16_000, randomPieces(x.length, seed)))).toBe(bytes(whole));
    expect(bytes(resample(x, rate, 16_000, Array<number>(x.length).fill(1)))).toBe(bytes(whole));
  });

  it('passes 16 kHz through untouched', () => {
    const x = tone(16_000, 440, 0.1);
    expect(bytes(resample(x, 16_000, 16_000))).toBe(bytes(x));
  });
});
