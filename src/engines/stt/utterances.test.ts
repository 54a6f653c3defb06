import { describe, expect, it } from 'vitest';
import { frameEnergiesDb, peakDb, PauseDetector, type Endpoint } from './utterances.js';

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
    const e = frameEnergiesDb(signal([[0.1, 32000], [0.1, 0]]));
    expect(e.length).toBe(20);
    expect(e[0]).toBeGreaterThan(-4);
    expect(e[19]).toBeLessThan(-55);
  });
});

describe('PauseDetector', () => {
  it('ends an utterance after the configured silence following speech', () => {
    const d = new PauseDetector({ silenceMs: 600 });
    const ends = d.push(signal([[0.5, 0], [1, 8000], [1.5, 0], [1, 8000], [0.3, 0]]));
    expect(ends).toHaveLength(1);
    const t = ends[0]!.sample / RATE;
    expect(ends[0]!.peakDb).toBeGreaterThan(-20);
    // Speech ends at 1.5 s; the endpoint follows 600 ms later.
    expect(t).toBeGreaterThanOrEqual(2.05);
    expect(t).toBeLessThanOrEqual(2.2);
    expect(ends[0]!.sample % 160).toBe(0);
    expect(ends[0]!.reason).toBe('pause');
  });

  it('gives the same endpoints whatever the chunking', () => {
    const input = signal([[1, 8000], [1, 0], [1, 8000], [1, 0]]);
    const whole = new PauseDetector().push(input);
    const chunked = new PauseDetector();
    const ends: Endpoint[] = [];
    for (let off = 0; off < input.length; off += 1601) ends.push(...chunked.push(input.subarray(off, off + 1601)));
    expect(ends).toEqual(whole);
    expect(whole).toHaveLength(2);
  });

  it('reports the peak level of utterances', () => {
    const d = new PauseDetector({ maxUtteranceMs: 1_000 });
    const [silent] = d.push(new Int16Array(RATE));
    expect(silent!.peakDb).toBe(-100);
    expect(peakDb(new Int16Array(0))).toBe(-100);
    expect(peakDb(signal([[0.2, 0], [0.2, 16000]]))).toBeGreaterThan(-10);
    d.push(signal([[0.3, 16000]]));
    expect(d.peakDb).toBeGreaterThan(-10);
  });

  it('does not end on silence without speech, nor when pause endpoints are disabled', () => {
    expect(new PauseDetector().push(signal([[3, 0]]))).toEqual([]);
    expect(new PauseDetector({ silenceMs: 0 }).push(signal([[1, 8000], [2, 0]]))).toEqual([]);
  });

  it('forces an endpoint at the maximum utterance length', () => {
    const ends = new PauseDetector({ maxUtteranceMs: 2_000 }).push(signal([[5, 8000]]));
    expect(ends.map((e) => e.sample / RATE)).toEqual([2, 4]);
    expect(ends.map((e) => e.reason)).toEqual(['max_length', 'max_length']);
  });
});
