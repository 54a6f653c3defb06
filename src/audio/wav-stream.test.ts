// The incremental WAV reader on hand-built headers: chunk layouts, streamed sizes, the formats decoded in-process,
// the ones left to ffmpeg, and malformed headers. Real ffmpeg-written WAVs are covered in live-pcm.test.ts.
import { describe, expect, it } from 'vitest';
import { AudioDecodeError } from './pcm-source.js';
import { WavNotInProcess, WavStream } from './wav-stream.js';

function chunk(id: string, body: Buffer, size = body.length): Buffer {
  const h = Buffer.alloc(8);
  h.write(id, 0, 'latin1');
  h.writeUInt32LE(size, 4);
  return Buffer.concat([h, body, body.length & 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

interface Fmt {
  tag?: number;
  channels?: number;
  rate?: number;
  bits?: number;
  blockAlign?: number;
  /** WAVE_FORMAT_EXTENSIBLE with this subformat tag. */
  sub?: number;
}

function fmtBody({ tag = 1, channels = 1, rate = 16_000, bits = 16, blockAlign, sub }: Fmt): Buffer {
  const b = Buffer.alloc(sub === undefined ? 16 : 40);
  b.writeUInt16LE(sub === undefined ? tag : 0xfffe, 0);
  b.writeUInt16LE(channels, 2);
  b.writeUInt32LE(rate, 4);
  const align = blockAlign ?? (channels * bits) / 8;
  b.writeUInt32LE(rate * align, 8);
  b.writeUInt16LE(align, 12);
  b.writeUInt16LE(bits, 14);
  if (sub !== undefined) {
    b.writeUInt16LE(22, 16);
    b.writeUInt16LE(bits, 18);
    b.writeUInt16LE(sub, 24);
    Buffer.from('000000001000800000aa00389b71', 'hex').copy(b, 26);
  }
  return b;
}

function wav(opts: Fmt & { data: Buffer; dataSize?: number; before?: Buffer[]; after?: Buffer[]; riff?: string }): Buffer {
  const body = Buffer.concat([
    Buffer.from('WAVE'),
    ...(opts.before ?? []),
    chunk('fmt ', fmtBody(opts)),
    chunk('data', opts.data, opts.dataSize ?? opts.data.length),
    ...(opts.after ?? []),
  ]);
  return Buffer.concat([chunk(opts.riff ?? 'RIFF', Buffer.alloc(0), body.length + 4).subarray(0, 8), body]);
}

const s16 = (...v: number[]) => Buffer.from(Int16Array.from(v).buffer);

/** All samples read from `bytes` written in pieces of `size`. */
function read(bytes: Buffer, size = bytes.length): { samples: number[]; rate: number } {
  const w = new WavStream();
  const samples: number[] = [];
  for (let i = 0; i < bytes.length; i += size) for (const s of w.push(bytes.subarray(i, i + size))) samples.push(...s);
  w.end();
  return { samples, rate: w.sampleRate };
}

const err = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
};

describe('WavStream', () => {
  const data = s16(0, 16384, -16384, 32767, -32768, 8192);
  const expected = [0, 0.5, -0.5, 32767 / 32768, -1, 0.25];

  it('reads PCM with extra chunks before and after the data, in one piece or byte by byte', () => {
    const bytes = wav({
      data,
      before: [chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00abcde')), chunk('fact', Buffer.alloc(4))],
      after: [chunk('id3 ', Buffer.alloc(9))],
    });
    for (const size of [bytes.length, 1, 3, 7]) {
      const r = read(bytes, size);
      expect(r.rate).toBe(16_000);
      expect(r.samples).toEqual(expected.map((v) => Math.fround(v)));
    }
  });

  it.each([0, 0xffffffff])('takes a data size of %i as "to the end of the stream"', (dataSize) => {
    expect(read(wav({ data, dataSize }), 5).samples).toHaveLength(6);
  });

  it('stops at the end of a sized data chunk and ignores what follows', () => {
    const bytes = Buffer.concat([wav({ data, dataSize: 4 }), s16(1, 2, 3)]);
    expect(read(bytes).samples).toEqual([0, 0.5]);
  });

  it('reads RF64 with its ds64 data size', () => {
    const ds64 = Buffer.alloc(28);
    ds64.writeUInt32LE(8, 8); // data size: 4 samples
    const bytes = wav({ riff: 'RF64', data: Buffer.concat([data, Buffer.from('junk')]), dataSize: 0xffffffff, before: [chunk('ds64', ds64)] });
    expect(read(bytes, 2).samples).toHaveLength(4);
  });

  it('averages channels and reads 8/24/32-bit integers, 32/64-bit floats, A-law, mu-law and EXTENSIBLE', () => {
    const stereo = read(wav({ channels: 2, data: s16(16384, 0, -16384, -16384) })).samples;
    expect(stereo).toEqual([0.25, -0.5]);
    expect(read(wav({ bits: 8, data: Buffer.from([128, 192, 0]) })).samples).toEqual([0, 0.5, -1]);
    expect(read(wav({ bits: 24, data: Buffer.from([0, 0, 0x40, 0, 0, 0xc0]) })).samples).toEqual([0.5, -0.5]);
    const i32 = Buffer.alloc(8);
    i32.writeInt32LE(-(2 ** 30), 0);
    i32.writeInt32LE(2 ** 29, 4);
    expect(read(wav({ bits: 32, data: i32, sub: 1 })).samples).toEqual([-0.5, 0.25]);
    expect(read(wav({ tag: 3, bits: 32, data: Buffer.from(Float32Array.from([0.25, -0.75]).buffer) })).samples).toEqual([0.25, -0.75]);
    expect(read(wav({ sub: 3, bits: 64, data: Buffer.from(Float64Array.from([0.5]).buffer) })).samples).toEqual([0.5]);
    // G.711 silence and full-scale codes.
    expect(read(wav({ tag: 7, bits: 8, data: Buffer.from([0xff, 0x80]) })).samples).toEqual([0, 32124 / 32768]);
    expect(read(wav({ tag: 6, bits: 8, data: Buffer.from([0xd5, 0xaa]) })).samples).toEqual([8 / 32768, 32256 / 32768]);
  });

  it('leaves other codecs to ffmpeg, with every byte received for replay', () => {
    const bytes = wav({ tag: 0x11, bits: 4, blockAlign: 256, data: Buffer.alloc(512) });
    const w = new WavStream();
    w.push(bytes.subarray(0, 10));
    const e = err(() => w.push(bytes.subarray(10)));
    expect(e).toBeInstanceOf(WavNotInProcess);
    expect(Buffer.concat(w.replay()).equals(bytes)).toBe(true);
    expect(err(() => new WavStream().push(wav({ bits: 64, data: Buffer.alloc(8) })))).toBeInstanceOf(WavNotInProcess);
  });

  it.each<[string, () => Buffer]>([
    ['RIFF then garbage', () => Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40, 0x37)])],
    ['no RIFF at all', () => Buffer.alloc(64, 7)],
    ['zero channels', () => wav({ channels: 0, blockAlign: 2, data })],
    ['12 bits per sample', () => wav({ bits: 12, blockAlign: 2, data })],
    ['16-bit float', () => wav({ tag: 3, bits: 16, data })],
    ['sample rate 0', () => wav({ rate: 0, data })],
    ['data before fmt', () => Buffer.concat([Buffer.from('RIFF\xff\xff\xff\xffWAVE', 'latin1'), chunk('data', data)])],
    ['a binary chunk id', () => Buffer.concat([Buffer.from('RIFF\xff\xff\xff\xffWAVE', 'latin1'), chunk('\x00\x01\x02\x03', data)])],
    ['a short fmt chunk', () => Buffer.concat([Buffer.from('RIFF\xff\xff\xff\xffWAVE', 'latin1'), chunk('fmt ', Buffer.alloc(8))])],
    ['a block alignment too small', () => wav({ channels: 2, blockAlign: 2, data })],
    ['the end inside the header', () => wav({ data }).subarray(0, 30)],
  ])('refuses %s as not a valid WAV stream', (_name, make) => {
    const e = err(() => read(make(), 1));
    expect(e).toBeInstanceOf(AudioDecodeError);
    expect(e.message).toMatch(/not a valid WAV stream/);
  });

  it('an empty stream is not an error (nothing was sent)', () => {
    expect(read(Buffer.alloc(0)).samples).toEqual([]);
  });
});
