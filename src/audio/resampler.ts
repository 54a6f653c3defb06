// Streaming resampler for mono float samples, any input rate to any output rate (44.1 kHz, 22.05 kHz, 11.025 kHz,
// 48 kHz, 8 kHz... to 16 kHz for the recognizer).
// - Downsampling: windowed sinc, low-pass at 92 % of the new Nyquist frequency, Blackman window over 12 zero
//   crossings each side: speech keeps its band, content above the new Nyquist is removed instead of folding back.
// - Upsampling (8 kHz telephony, 11.025 kHz): linear interpolation, as the converter before it did at 8 kHz. Its
//   spectral images above the input's Nyquist are deliberate: the 16 kHz acoustic model recognises telephone-band
//   speech with them and mostly fails on a cleanly band-limited signal (test/e2e/realtime.test.ts, "s16le 8 kHz").
// - Output sample k sits at input position k * in / out, kept as an exact integer fraction, and is computed only
//   once every input sample it needs has arrived: the output is identical however the input is split into pushes.
// - It holds back about 12 / cutoff input samples (under 1 ms; one sample when upsampling); flush() emits the tail.
// - The kernel is tabulated once per instance (256 points per zero crossing, linear interpolation between them); when
//   the rates have few distinct output phases (44.1 kHz → 16 kHz: 160) the weights of every phase are precomputed
//   too, so an output sample is one dot product (about 3 ms of CPU per second of 48 kHz audio).

const ZERO_CROSSINGS = 12;
const TABLE_STEPS = 256;
const PASSBAND = 0.92;
/** Largest precomputed weight bank (floats); rates with more phases compute the weights per output sample. */
const MAX_BANK = 1 << 18;

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

export class StreamResampler {
  /** Input / output rates reduced by their gcd: output k is at input position k * step / den. */
  private readonly step: number;
  private readonly den: number;
  /** Cutoff relative to the input Nyquist frequency; 0 for linear interpolation (upsampling). */
  private readonly cutoff: number;
  /** Kernel half-width in input samples (whole samples, rounded up). */
  private readonly half: number;
  private readonly taps: number;
  private readonly table: Float32Array;
  /** Normalised weights of every phase (frac) one after another, when small enough; else computed into `scratch`. */
  private readonly bank: Float32Array | undefined;
  private readonly scratch: Float32Array;
  /** Input history: buf[0] is input sample number `bufStart`. */
  private buf = new Float32Array(4096);
  private bufStart = 0;
  private bufLen = 0;
  /** Position of the next output sample: ipos + frac / den. */
  private ipos = 0;
  private frac = 0;
  /** Input samples received. */
  private total = 0;
  readonly identity: boolean;

  constructor(inRate: number, outRate: number) {
    if (!(inRate > 0 && outRate > 0 && Number.isInteger(inRate) && Number.isInteger(outRate))) throw new RangeError(`bad rates ${inRate} → ${outRate}`);
    const g = gcd(inRate, outRate);
    this.step = inRate / g;
    this.den = outRate / g;
    this.identity = inRate === outRate;
    this.cutoff = outRate < inRate ? (outRate / inRate) * PASSBAND : 0;
    this.half = this.cutoff ? Math.ceil(ZERO_CROSSINGS / this.cutoff) : 1;
    // table[j] = sinc(u) * blackman(u / ZERO_CROSSINGS) at u = j / TABLE_STEPS zero crossings; two zeros pad the end.
    this.table = new Float32Array(ZERO_CROSSINGS * TABLE_STEPS + 2);
    for (let j = 0; j < ZERO_CROSSINGS * TABLE_STEPS; j++) {
      const u = j / TABLE_STEPS;
      const sinc = j === 0 ? 1 : Math.sin(Math.PI * u) / (Math.PI * u);
      const w = u / ZERO_CROSSINGS;
      this.table[j] = sinc * (0.42 + 0.5 * Math.cos(Math.PI * w) + 0.08 * Math.cos(2 * Math.PI * w));
    }
    this.taps = 2 * this.half;
    this.scratch = new Float32Array(this.taps);
    if (!this.identity && this.den * this.taps <= MAX_BANK) {
      this.bank = new Float32Array(this.den * this.taps);
      for (let frac = 0; frac < this.den; frac++) this.weights(frac, this.bank, frac * this.taps);
    }
  }

  /** Weights of the taps ipos - half + 1 ... ipos + half for an output at ipos + frac / den, summing to 1. */
  private weights(frac: number, into: Float32Array, at: number): void {
    const { half, taps, table } = this;
    const f = frac / this.den;
    const scale = this.cutoff * TABLE_STEPS;
    let norm = 0;
    for (let j = 0; j < taps; j++) {
      const d = Math.abs(j - half + 1 - f);
      const t = d * scale;
      const k = Math.floor(t);
      const w = !scale ? Math.max(0, 1 - d) : k >= ZERO_CROSSINGS * TABLE_STEPS ? 0 : table[k]! + (t - k) * (table[k + 1]! - table[k]!);
      into[at + j] = w;
      norm += w;
    }
    for (let j = 0; j < taps; j++) into[at + j]! /= norm;
  }

  /** Resampled output of `x`, as far as the input so far allows. */
  push(x: Float32Array): Float32Array {
    if (this.identity) return x;
    this.append(x);
    this.total += x.length;
    return this.produce(this.total);
  }

  /** The remaining output at the end of the stream (the input continued by silence): ceil(total * out / in) in all. */
  flush(): Float32Array {
    if (this.identity) return new Float32Array(0);
    this.append(new Float32Array(this.half + 1));
    return this.produce(this.total, true);
  }

  private append(x: Float32Array): void {
    // Drop history no future output needs (positions only grow), then make room.
    const keepFrom = Math.max(this.bufStart, this.ipos - this.half);
    const drop = keepFrom - this.bufStart;
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.bufLen);
      this.bufLen -= drop;
      this.bufStart = keepFrom;
    }
    if (this.bufLen + x.length > this.buf.length) {
      const grown = new Float32Array(Math.max(this.buf.length * 2, this.bufLen + x.length));
      grown.set(this.buf.subarray(0, this.bufLen));
      this.buf = grown;
    }
    this.buf.set(x, this.bufLen);
    this.bufLen += x.length;
  }

  /** Every output whose window lies inside the buffered input; at the end, only those positioned before `total`. */
  private produce(total: number, end = false): Float32Array {
    const { step, den, half, buf, bufStart } = this;
    const bufEnd = bufStart + this.bufLen;
    // Outputs available: positions p with floor(p) + half < bufEnd (and floor(p) < total at the end).
    const lastIpos = end ? Math.min(total - 1, bufEnd - half - 1) : bufEnd - half - 1;
    if (this.ipos > lastIpos) return new Float32Array(0);
    const count = Math.max(0, Math.ceil(((lastIpos + 1) * den - (this.ipos * den + this.frac)) / step));
    const out = new Float32Array(count);
    const { bank, scratch, taps } = this;
    let ipos = this.ipos;
    let frac = this.frac;
    for (let k = 0; k < count; k++) {
      let w = scratch;
      let at = 0;
      if (bank) {
        w = bank;
        at = frac * taps;
      } else this.weights(frac, scratch, 0);
      // Input index of the first tap in `buf`; samples before the stream start are silence.
      const base = ipos - half + 1 - bufStart;
      let acc = 0;
      for (let j = base < 0 ? -base : 0; j < taps; j++) acc += buf[base + j]! * w[at + j]!;
      out[k] = acc;
      frac += step;
      ipos += Math.floor(frac / den);
      frac %= den;
    }
    this.ipos = ipos;
    this.frac = frac;
    return out;
  }
}
