import { describe, expect, it } from 'vitest';
import { Resampler, toFormat, wavHeader } from './pcm.js';

function sine(rate: number, seconds: number, hz = 440): Buffer {
  const n = Math.round(rate * seconds);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(10000 * Math.sin((2 * Math.PI * hz * i) / rate)), i * 2);
  return b;
}

describe('Resampler', () => {
  it('keeps duration across chunk boundaries (22050 → 24000 and → 8000)', () => {
    for (const out of [24000, 8000, 22050]) {
      const rs = new Resampler(22050, out);
      const src = sine(22050, 1);
      let total = 0;
      for (let off = 0; off < src.length; off += 2 * 997) total += rs.push(src.subarray(off, Math.min(src.length, off + 2 * 997))).length;
      expect(Math.abs(total - out)).toBeLessThanOrEqual(2);
    }
  });
});

describe('toFormat', () => {
  it('writes the sample sizes of each format, and G.711 silence bytes', () => {
    const s = Float64Array.from([0, 1000, -1000]);
    expect(toFormat(s, 'pcm_s16le').length).toBe(6);
    expect(toFormat(s, 'pcm_s16be').readInt16BE(2)).toBe(1000);
    expect(toFormat(s, 'pcm_f32le').readFloatLE(4)).toBeCloseTo(1000 / 32768, 5);
    expect(toFormat(Float64Array.from([0]), 'pcm_mulaw')[0]).toBe(0xff);
    expect(toFormat(Float64Array.from([0]), 'pcm_alaw')[0]).toBe(0xd5);
  });

  it('streams a WAV header with open-ended sizes', () => {
    const h = wavHeader(16000);
    expect(h.toString('ascii', 0, 4)).toBe('RIFF');
    expect(h.readUInt32LE(24)).toBe(16000);
    expect(h.toString('ascii', 36, 40)).toBe('data');
  });
});
