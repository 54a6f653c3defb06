// In-process raw output: resampling of mono s16le and the uncompressed formats (pcm_* and a streamed WAV).
// These need no codec, so they skip the ffmpeg encoder and its start-up time (first audio byte in a few
// milliseconds after the engine's first segment); compressed formats go through encoder.ts.
import type { AudioFormat } from './encoder.js';

export const RAW_FORMATS: readonly AudioFormat[] = ['pcm_f32le', 'pcm_s16le', 'pcm_s16be', 'pcm_mulaw', 'pcm_alaw', 'wav'];

/** Streaming linear-interpolation resampler with a moving-average low-pass when downsampling. */
export class Resampler {
  private readonly step: number;
  private readonly width: number;
  private pos = 0;
  private carry: number[] = [];
  private hist: number[] = [];
  private sum = 0;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
  ) {
    this.step = inRate / outRate;
    // Averaging over ~one output period removes most content above the new Nyquist frequency.
    this.width = this.step > 1.3 ? Math.round(this.step) : 1;
  }

  /** s16le in → float samples out (in the int16 range). */
  push(pcm: Buffer): Float64Array {
    const n = pcm.length >> 1;
    const x: number[] = this.carry.slice();
    for (let i = 0; i < n; i++) {
      let v = pcm.readInt16LE(i * 2);
      if (this.width > 1) {
        this.hist.push(v);
        this.sum += v;
        if (this.hist.length > this.width) this.sum -= this.hist.shift()!;
        v = this.sum / this.hist.length;
      }
      x.push(v);
    }
    if (this.inRate === this.outRate) {
      this.carry = [];
      return Float64Array.from(x);
    }
    const out: number[] = [];
    let p = this.pos;
    while (p + 1 < x.length) {
      const i = Math.floor(p);
      const f = p - i;
      out.push(x[i]! * (1 - f) + x[i + 1]! * f);
      p += this.step;
    }
    const keepFrom = Math.max(0, x.length - 1);
    this.pos = p - keepFrom;
    this.carry = x.slice(keepFrom);
    return Float64Array.from(out);
  }
}

function linearToMulaw(sample: number): number {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function linearToAlaw(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = s >= 0 ? 0x80 : 0;
  if (!sign) s = -s - 1;
  s >>= 3; // 13-bit magnitude
  let out: number;
  if (s < 32) out = s >> 1;
  else {
    let seg = 1;
    for (let v = s >> 5; v > 1 && seg < 7; v >>= 1) seg++;
    out = (seg << 4) | ((s >> seg) & 0x0f);
  }
  return (out | sign) ^ 0x55;
}

/** A streamed WAV header: sizes unknown, so set to the maximum (readers take the data up to EOF). */
export function wavHeader(rate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(0xffffffff, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(0xffffffff, 40);
  return h;
}

/** Convert resampled samples to the bytes of `format` (wav: s16le; its header is sent separately). */
export function toFormat(samples: Float64Array, format: AudioFormat): Buffer {
  const n = samples.length;
  const clamp = (v: number) => Math.max(-32768, Math.min(32767, Math.round(v)));
  switch (format) {
    case 'pcm_f32le': {
      const b = Buffer.alloc(n * 4);
      for (let i = 0; i < n; i++) b.writeFloatLE(Math.max(-1, Math.min(1, samples[i]! / 32768)), i * 4);
      return b;
    }
    case 'pcm_s16be': {
      const b = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) b.writeInt16BE(clamp(samples[i]!), i * 2);
      return b;
    }
    case 'pcm_mulaw': {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = linearToMulaw(samples[i]!);
      return b;
    }
    case 'pcm_alaw': {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = linearToAlaw(samples[i]!);
      return b;
    }
    default: {
      const b = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) b.writeInt16LE(clamp(samples[i]!), i * 2);
      return b;
    }
  }
}

/** Raw-format output of a PCM stream, chunk for chunk. */
export async function* rawEncode(source: AsyncIterable<Buffer>, opts: { inputRate: number; outputRate: number; format: AudioFormat }): AsyncGenerator<Buffer> {
  const rs = new Resampler(opts.inputRate, opts.outputRate);
  let first = true;
  for await (const pcm of source) {
    const body = toFormat(rs.push(pcm), opts.format);
    if (first && opts.format === 'wav') {
      first = false;
      yield Buffer.concat([wavHeader(opts.outputRate), body]);
      continue;
    }
    first = false;
    if (body.length) yield body;
  }
  if (first && opts.format === 'wav') yield wavHeader(opts.outputRate);
}
