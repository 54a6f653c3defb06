// Uncompressed output formats made in-process from mono s16le: resampling (StreamResampler), sample format
// (s16le/be, f32le, G.711 mu-law and A-law) and a streamed WAV header; plus the silence bounds of a segment.
// Pure and typed-array based; run on the audio worker thread (audio-thread.ts), never on the event loop.
import { StreamResampler } from './resampler.js';
import { S16leReader } from './s16le.js';

export const RAW_OUTPUT_FORMATS = ['pcm_f32le', 'pcm_s16le', 'pcm_s16be', 'pcm_mulaw', 'pcm_alaw', 'wav'] as const;
export type RawOutputFormat = (typeof RAW_OUTPUT_FORMATS)[number];

export function isRawOutputFormat(format: string): format is RawOutputFormat {
  return (RAW_OUTPUT_FORMATS as readonly string[]).includes(format);
}

export interface RawOutputOptions {
  inputRate: number;
  outputRate: number;
  format: RawOutputFormat;
}

/** G.711 mu-law of one sample in the int16 range. */
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

/** G.711 A-law of one sample in the int16 range. */
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

/** Samples in the int16 range → the bytes of `format` (wav: s16le; its header is written separately). */
export function toFormat(samples: Float32Array, format: RawOutputFormat): Buffer {
  const n = samples.length;
  const clamp = (v: number) => Math.max(-32768, Math.min(32767, Math.round(v)));
  switch (format) {
    case 'pcm_f32le': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = Math.max(-1, Math.min(1, samples[i]! / 32768));
      return Buffer.from(out.buffer);
    }
    case 'pcm_s16be': {
      const b = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) {
        const v = clamp(samples[i]!);
        b[2 * i] = (v >> 8) & 0xff;
        b[2 * i + 1] = v & 0xff;
      }
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
      const out = new Int16Array(n);
      for (let i = 0; i < n; i++) out[i] = clamp(samples[i]!);
      return Buffer.from(out.buffer);
    }
  }
}

/** One output stream: s16le pieces of any length in, bytes of the format out (the WAV header before the first). */
export class RawOutputEncoder {
  private readonly reader = new S16leReader();
  private readonly resampler: StreamResampler;
  private started = false;

  constructor(private readonly opts: RawOutputOptions) {
    this.resampler = new StreamResampler(opts.inputRate, opts.outputRate);
  }

  push(bytes: Uint8Array): Buffer {
    const ints = this.reader.read(bytes);
    const floats = new Float32Array(ints.length);
    for (let i = 0; i < ints.length; i++) floats[i] = ints[i]!;
    return this.withHeader(toFormat(this.resampler.push(floats), this.opts.format));
  }

  /** The resampler's held-back tail (and the header of an empty WAV). */
  end(): Buffer {
    return this.withHeader(toFormat(this.resampler.flush(), this.opts.format));
  }

  private withHeader(body: Buffer): Buffer {
    if (this.started || this.opts.format !== 'wav') return body;
    this.started = true;
    return Buffer.concat([wavHeader(this.opts.outputRate), body]);
  }
}

/** Quieter than this (int16) is silence for reduce_silence. */
const SILENCE_THRESHOLD = 400;
/** Kept around the sound, so word onsets and releases are not clipped. */
const PAD_SECONDS = 0.06;

/**
 * Byte range of mono s16le `pcm` without its leading and trailing silence, keeping a short pad; [0, 0] when it is
 * all silence.
 */
export function silenceBounds(pcm: Uint8Array, rate: number): [number, number] {
  const n = pcm.length >> 1;
  const view = new DataView(pcm.buffer, pcm.byteOffset, n * 2);
  const loud = (i: number) => Math.abs(view.getInt16(i * 2, true)) >= SILENCE_THRESHOLD;
  let first = 0;
  while (first < n && !loud(first)) first++;
  if (first >= n) return [0, 0];
  let last = n - 1;
  while (last > first && !loud(last)) last--;
  const pad = Math.round(rate * PAD_SECONDS);
  return [Math.max(0, first - pad) * 2, Math.min(n, last + 1 + pad) * 2];
}
