import { describe, expect, it } from 'vitest';
import { RawOutputEncoder, silenceBounds, toFormat, wavHeader } from './raw-output.js';

function sine(rate: number, seconds: number, hz = 440, amplitude = 10000): Buffer {
  const n = Math.round(rate * seconds);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)), i * 2);
  return b;
}

/** Push `src` in odd-sized pieces (half samples included), then end. */
function encodeAll(enc: RawOutputEncoder, src: Buffer, piece = 2 * 997 + 1): Buffer {
  const out: Buffer[] = [];
  for (let off = 0; off < src.length; off += piece) out.push(enc.push(src.subarray(off, Math.min(src.length, off + piece))));
  out.push(enc.end());
  return Buffer.concat(out);
}

describe('RawOutputEncoder', () => {
  it('keeps the duration across piece boundaries (22050 → 24000, 8000, 22050 Hz)', () => {
    for (const out of [24000, 8000, 22050]) {
      const bytes = encodeAll(new RawOutputEncoder({ inputRate: 22050, outputRate: out, format: 'pcm_s16le' }), sine(22050, 1));
      expect(Math.abs(bytes.length / 2 - out)).toBeLessThanOrEqual(2);
    }
  });

  it('gives the same bytes however the input is split', () => {
    const src = sine(22050, 0.5);
    const whole = encodeAll(new RawOutputEncoder({ inputRate: 22050, outputRate: 16000, format: 'pcm_s16le' }), src, src.length);
    const pieces = encodeAll(new RawOutputEncoder({ inputRate: 22050, outputRate: 16000, format: 'pcm_s16le' }), src, 333);
    expect(pieces.equals(whole)).toBe(true);
  });

  it('keeps a tone in band and removes one above the new Nyquist frequency when downsampling', () => {
    const rms = (b: Buffer) => {
      let s = 0;
      for (let i = 0; i < b.length; i += 2) s += b.readInt16LE(i) ** 2;
      return Math.sqrt(s / (b.length / 2));
    };
    const kept = encodeAll(new RawOutputEncoder({ inputRate: 22050, outputRate: 8000, format: 'pcm_s16le' }), sine(22050, 0.5, 1000));
    const removed = encodeAll(new RawOutputEncoder({ inputRate: 22050, outputRate: 8000, format: 'pcm_s16le' }), sine(22050, 0.5, 6000));
    expect(rms(kept)).toBeGreaterThan(6000);
    expect(rms(removed)).toBeLessThan(700);
  });

  it('puts a streamed WAV header before the first bytes, also of an empty stream', () => {
    const bytes = encodeAll(new RawOutputEncoder({ inputRate: 16000, outputRate: 16000, format: 'wav' }), sine(16000, 0.1));
    expect(bytes.subarray(0, 44).equals(wavHeader(16000))).toBe(true);
    expect(bytes.length).toBe(44 + 1600 * 2);
    expect(new RawOutputEncoder({ inputRate: 16000, outputRate: 24000, format: 'wav' }).end().equals(wavHeader(24000))).toBe(true);
  });
});

describe('toFormat', () => {
  it('writes the sample sizes of each format, and G.711 silence bytes', () => {
    const s = Float32Array.from([0, 1000, -1000]);
    expect(toFormat(s, 'pcm_s16le').length).toBe(6);
    expect(toFormat(s, 'pcm_s16le').readInt16LE(4)).toBe(-1000);
    expect(toFormat(s, 'pcm_s16be').readInt16BE(2)).toBe(1000);
    expect(toFormat(s, 'pcm_s16be').readInt16BE(4)).toBe(-1000);
    expect(toFormat(s, 'pcm_f32le').readFloatLE(4)).toBeCloseTo(1000 / 32768, 5);
    expect(toFormat(Float32Array.from([40000]), 'pcm_s16le').readInt16LE(0)).toBe(32767);
    expect(toFormat(Float32Array.from([0]), 'pcm_mulaw')[0]).toBe(0xff);
    expect(toFormat(Float32Array.from([0]), 'pcm_alaw')[0]).toBe(0xd5);
  });

  it('streams a WAV header with open-ended sizes', () => {
    const h = wavHeader(16000);
    expect(h.toString('ascii', 0, 4)).toBe('RIFF');
    expect(h.readUInt32LE(24)).toBe(16000);
    expect(h.toString('ascii', 36, 40)).toBe('data');
  });
});

describe('silenceBounds', () => {
  it('cuts leading and trailing silence, keeping 60 ms around the sound', () => {
    const rate = 16000;
    const pcm = Buffer.concat([Buffer.alloc(rate * 2 * 0.5), sine(rate, 0.25), Buffer.alloc(rate * 2 * 0.5)]);
    const [start, end] = silenceBounds(pcm, rate);
    // The sine's first sample is 0 and the next few are under the threshold: the start lies a little after 0.5 s - pad.
    expect(start / 2 / rate).toBeGreaterThan(0.5 - 0.06 - 0.001);
    expect(start / 2 / rate).toBeLessThan(0.5 - 0.06 + 0.002);
    expect(end / 2 / rate).toBeGreaterThan(0.75 + 0.06 - 0.002);
    expect(end / 2 / rate).toBeLessThanOrEqual(0.75 + 0.06 + 0.001);
  });

  it('gives an empty range for silence, and reads a view into a larger buffer at its own offset', () => {
    expect(silenceBounds(Buffer.alloc(3200), 16000)).toEqual([0, 0]);
    const big = Buffer.concat([sine(16000, 0.1), Buffer.alloc(3200)]);
    expect(silenceBounds(big.subarray(big.length - 3200), 16000)).toEqual([0, 0]);
  });
});
