import { describe, expect, it } from 'vitest';
import { S16leReader } from './s16le.js';

describe('S16leReader', () => {
  it('gives the same samples whatever the pieces, odd lengths and empty ones included', () => {
    const whole = new Int16Array(1000);
    for (let i = 0; i < whole.length; i++) whole[i] = ((i * 7919) % 65536) - 32768;
    const bytes = new Uint8Array(whole.buffer);
    for (const sizes of [[1], [3], [0, 1, 2], [999], [2000], [7, 0, 0, 5]]) {
      const reader = new S16leReader();
      const out: number[] = [];
      for (let off = 0, k = 0; off < bytes.length; k++) {
        const n = sizes[k % sizes.length]!;
        const piece = reader.read(bytes.subarray(off, off + n));
        expect(piece.byteOffset).toBe(0);
        out.push(...piece);
        off += n;
      }
      expect(Int16Array.from(out)).toEqual(whole);
    }
  });

  it('keeps a lone trailing byte until its partner comes', () => {
    const reader = new S16leReader();
    expect(reader.read(Uint8Array.of(0x34))).toEqual(new Int16Array(0));
    expect(reader.read(new Uint8Array(0))).toEqual(new Int16Array(0));
    expect(Array.from(reader.read(Uint8Array.of(0x12, 0x01)))).toEqual([0x1234]);
    expect(Array.from(reader.read(Uint8Array.of(0x00, 0x80)))).toEqual([0x0001]);
    expect(Array.from(reader.read(Uint8Array.of(0x00)))).toEqual([0x0080]);
  });
});
