// Interleaved PCM sample bytes (any integer/float width, either byte order, G.711 mu-law/A-law, any channel count)
// to mono float samples in [-1, 1], for the in-process live paths (raw formats and WAV data chunks). Bytes may arrive
// split anywhere: a partial frame is carried to the next call. Little-endian data is read through typed-array views
// (the host is little-endian, as everywhere else in the project); big-endian through a DataView.

export interface SampleEncoding {
  kind: 'int' | 'uint' | 'float' | 'mulaw' | 'alaw';
  /** Bits per sample as stored: 8, 16, 24, 32 or 64 (float only). */
  bits: number;
  bigEndian: boolean;
}

/** The encoding of a raw `audio_format` (pcm_s16le, pcm_u8, pcm_f64be, mulaw, ...), or undefined if unknown. */
export function rawEncoding(format: string): SampleEncoding | undefined {
  if (format === 'mulaw' || format === 'alaw') return { kind: format, bits: 8, bigEndian: false };
  const m = /^pcm_([suf])(8|16|24|32|64)(le|be)?$/.exec(format);
  if (!m) return undefined;
  const kind = m[1] === 's' ? 'int' : m[1] === 'u' ? 'uint' : 'float';
  const bits = Number(m[2]);
  if (kind === 'float' ? bits !== 32 && bits !== 64 : bits === 64) return undefined;
  // Wider than a byte needs a byte order (8-bit formats may carry a meaningless one).
  if (bits > 8 && !m[3]) return undefined;
  return { kind, bits, bigEndian: m[3] === 'be' };
}

// G.711 expansion exactly as ffmpeg's pcm_mulaw / pcm_alaw decoders (so both paths give the same samples).
const MULAW = new Float32Array(256);
const ALAW = new Float32Array(256);
for (let i = 0; i < 256; i++) {
  const u = ~i & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  MULAW[i] = (u & 0x80 ? 0x84 - t : t - 0x84) / 32768;
  const a = i ^ 0x55;
  const seg = (a & 0x70) >> 4;
  let v = ((a & 0x0f) << 1) + 1;
  v = seg ? (v + 32) << (seg + 2) : v << 3;
  ALAW[i] = (a & 0x80 ? v : -v) / 32768;
}

type TypedCtor<T> = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; BYTES_PER_ELEMENT: number };

/** A typed view of the first `n` elements of `bytes`, copying only when the bytes are not aligned for it. */
function view<T>(Ctor: TypedCtor<T>, bytes: Uint8Array, n: number): T {
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(bytes.buffer, bytes.byteOffset, n);
  // A real copy (Buffer#slice would share the memory, and its .buffer is the whole pool).
  return new Ctor(new Uint8Array(bytes.subarray(0, n * Ctor.BYTES_PER_ELEMENT)).buffer, 0, n);
}

const EMPTY = new Float32Array(0);

export class SampleDecoder {
  readonly frameBytes: number;
  private carry: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly enc: SampleEncoding,
    private readonly channels: number,
  ) {
    this.frameBytes = (enc.bits / 8) * channels;
  }

  /** Mono samples of the whole frames in the carried bytes plus `bytes`. */
  decode(bytes: Uint8Array): Float32Array {
    const { frames, x } = this.interleaved(bytes);
    if (!frames) return EMPTY;
    const ch = this.channels;
    if (ch === 1) return x;
    const mono = new Float32Array(frames);
    for (let f = 0, i = 0; f < frames; f++) {
      let s = 0;
      for (let c = 0; c < ch; c++) s += x[i++]!;
      mono[f] = s / ch;
    }
    return mono;
  }

  /** The samples of each channel apart (multichannel sessions), of the whole frames in the carried bytes plus `bytes`. */
  decodeChannels(bytes: Uint8Array): Float32Array[] {
    const { frames, x } = this.interleaved(bytes);
    const ch = this.channels;
    const out = Array.from({ length: ch }, () => new Float32Array(frames));
    for (let f = 0, i = 0; f < frames; f++) for (let c = 0; c < ch; c++) out[c]![f] = x[i++]!;
    return out;
  }

  /** The whole frames of the carried bytes plus `bytes` as interleaved floats; the rest is carried. */
  private interleaved(bytes: Uint8Array): { frames: number; x: Float32Array } {
    let buf = bytes;
    if (this.carry.length) {
      buf = new Uint8Array(this.carry.length + bytes.length);
      buf.set(this.carry);
      buf.set(bytes, this.carry.length);
    }
    const frames = Math.floor(buf.length / this.frameBytes);
    this.carry = new Uint8Array(buf.subarray(frames * this.frameBytes));
    return { frames, x: frames ? this.toFloat(buf, frames * this.channels) : EMPTY };
  }

  /** The first `n` samples of `b`, interleaved, as floats. */
  private toFloat(b: Uint8Array, n: number): Float32Array {
    const { kind, bits, bigEndian } = this.enc;
    const out = new Float32Array(n);
    if (kind === 'mulaw' || kind === 'alaw') {
      const table = kind === 'mulaw' ? MULAW : ALAW;
      for (let i = 0; i < n; i++) out[i] = table[b[i]!]!;
      return out;
    }
    if (bits === 8) {
      for (let i = 0; i < n; i++) out[i] = kind === 'uint' ? (b[i]! - 128) / 128 : ((b[i]! << 24) >> 24) / 128;
      return out;
    }
    if (bits === 24) {
      const [lo, hi] = bigEndian ? [2, 0] : [0, 2];
      const bias = kind === 'uint' ? 0x800000 : 0;
      for (let i = 0, o = 0; i < n; i++, o += 3) {
        const v = b[o + lo]! | (b[o + 1]! << 8) | (b[o + hi]! << 16);
        out[i] = (kind === 'uint' ? v - bias : (v << 8) >> 8) / 0x800000;
      }
      return out;
    }
    if (bigEndian) {
      const dv = new DataView(b.buffer, b.byteOffset, n * (bits / 8));
      for (let i = 0; i < n; i++) out[i] = readBE(dv, i, kind, bits);
      return out;
    }
    if (kind === 'float') {
      if (bits === 32) out.set(view(Float32Array, b, n));
      else out.set(view(Float64Array, b, n));
    } else if (bits === 16) {
      if (kind === 'int') {
        const v = view(Int16Array, b, n);
        for (let i = 0; i < n; i++) out[i] = v[i]! / 32768;
      } else {
        const v = view(Uint16Array, b, n);
        for (let i = 0; i < n; i++) out[i] = (v[i]! - 32768) / 32768;
      }
    } else if (kind === 'int') {
      const v = view(Int32Array, b, n);
      for (let i = 0; i < n; i++) out[i] = v[i]! / 2147483648;
    } else {
      const v = view(Uint32Array, b, n);
      for (let i = 0; i < n; i++) out[i] = (v[i]! - 2147483648) / 2147483648;
    }
    return out;
  }
}

function readBE(dv: DataView, i: number, kind: SampleEncoding['kind'], bits: number): number {
  if (kind === 'float') return bits === 32 ? dv.getFloat32(i * 4) : dv.getFloat64(i * 8);
  if (bits === 16) return kind === 'int' ? dv.getInt16(i * 2) / 32768 : (dv.getUint16(i * 2) - 32768) / 32768;
  return kind === 'int' ? dv.getInt32(i * 4) / 2147483648 : (dv.getUint32(i * 4) - 2147483648) / 2147483648;
}

/** Float samples to s16le, as ffmpeg converts them (scaled by 32768, clipped; NaN becomes 0). */
export function floatToS16(x: Float32Array): Buffer {
  const out = new Int16Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const v = Math.round(x[i]! * 32768);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v || 0;
  }
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
