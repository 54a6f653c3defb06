import { describe, expect, it } from 'vitest';
import { frameEnergiesDb, peakDb } from './utterances.js';

const RATE = 16_000;

/** Segments of [seconds, amplitude]: amplitude 0 is silence, otherwise a 300 Hz tone over faint noise. */
function signal(parts: [number, number][]): Int16Array {
  const total = parts.reduce((n, [s]) => n + Math.round(s * RATE), 0);
  const out = new Int16Array(total);
  let i = 0;
  let seed = 1;
  for (const [seconds, amp] of parts) {
    for (let k = 0; k < Math.round(seconds * RATE); k++, i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const noise = ((seed / 0x7fffffff) * 2 - 1) * 30; // about -60 dBFS
      out[i] = Math.round(noise + amp * Math.sin((2 * Math.PI * 300 * i) / RATE));
    }
  }
  return out;
}

describe('frameEnergiesDb', () => {
  it('measures full-scale and silent frames', () => {
    const e = frameEnergiesDb(
      signal([
        [0.1, 32000],
        [0.1, 0],
      ]),
    );
    expect(e.length).toBe(20);
    expect(e[0]).toBeGreaterThan(-4);
    expect(e[19]).toBeLessThan(-55);
  });
});

describe('peakDb', () => {
  it('is the loudest 10 ms frame, and -100 for nothing', () => {
    expect(peakDb(new Int16Array(0))).toBe(-100);
    const quietThenLoud = signal([
      [0.2, 0],
      [0.05, 16000],
    ]);
    expect(peakDb(quietThenLoud)).toBeGreaterThan(-10);
    expect(peakDb(quietThenLoud.subarray(0, 3200))).toBeLessThan(-55);
  });
});
