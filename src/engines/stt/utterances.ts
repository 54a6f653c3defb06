// Cutting a PCM stream into utterances for engines that decode one utterance at a time.
//
// Two flavours over the same per-frame energy measure:
// - UtteranceSplitter (batch): sees up to maxUtteranceMs ahead, so it can pick the best pause to cut at.
// - PauseDetector (streaming): causal; declares an end of utterance after a run of silence following speech.
// Both are deliberately simple energy detectors: the cut only has to fall between words, not classify speech
// perfectly, and the engine models silence itself.

export const FRAME_SAMPLES = 160; // 10 ms at 16 kHz
const FRAME_MS = 10;
const MIN_DB = -100;

/** Energy of each complete 10 ms frame of `samples`, in dBFS (floored at -100). */
export function frameEnergiesDb(samples: Int16Array, frameSamples = FRAME_SAMPLES): Float64Array {
  const n = Math.floor(samples.length / frameSamples);
  const out = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    let sum = 0;
    for (let i = f * frameSamples, end = i + frameSamples; i < end; i++) {
      const v = samples[i]!;
      sum += v * v;
    }
    const meanSquare = sum / frameSamples / (32768 * 32768);
    out[f] = Math.max(MIN_DB, 10 * Math.log10(meanSquare + 1e-12));
  }
  return out;
}

export interface Utterance {
  /** Absolute index (in samples from the start of the stream) of the first sample. */
  startSample: number;
  samples: Int16Array;
}

export interface SplitterOptions {
  /** Cut before an utterance grows past this (default 20 s). */
  maxUtteranceMs?: number;
  /** Do not cut an utterance shorter than this at a pause (default 4 s): longer utterances give the engine context. */
  minUtteranceMs?: number;
  /** A pause is at least this much quiet audio (default 250 ms). */
  minPauseMs?: number;
}

/** Growable Int16 buffer with cheap consumption from the front. */
class SampleQueue {
  private buf = new Int16Array(16_000 * 4);
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  push(samples: Int16Array): void {
    if (this.end + samples.length > this.buf.length) {
      const live = this.length;
      const size = Math.max(this.buf.length, (live + samples.length) * 2);
      // Same size: compact in place (TypedArray#set copes with overlapping ranges of one buffer).
      const next = size === this.buf.length ? this.buf : new Int16Array(size);
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
      this.start = 0;
      this.end = live;
    }
    this.buf.set(samples, this.end);
    this.end += samples.length;
  }

  view(from = 0, to = this.length): Int16Array {
    return this.buf.subarray(this.start + from, this.start + to);
  }

  /** Remove and return (a copy of) the first n samples. */
  shift(n: number): Int16Array {
    const out = this.buf.slice(this.start, this.start + n);
    this.start += n;
    if (this.start === this.end) this.start = this.end = 0;
    return out;
  }
}

export class UtteranceSplitter {
  private readonly maxFrames: number;
  private readonly minFrames: number;
  private readonly minPauseFrames: number;
  private readonly queue = new SampleQueue();
  private offset = 0;

  constructor(options: SplitterOptions = {}) {
    this.maxFrames = Math.max(100, Math.round((options.maxUtteranceMs ?? 20_000) / FRAME_MS));
    this.minFrames = Math.min(this.maxFrames - 1, Math.round((options.minUtteranceMs ?? 4_000) / FRAME_MS));
    this.minPauseFrames = Math.max(1, Math.round((options.minPauseMs ?? 250) / FRAME_MS));
  }

  /** Add audio; returns the utterances that are now complete. */
  push(samples: Int16Array): Utterance[] {
    this.queue.push(samples);
    const out: Utterance[] = [];
    while (this.queue.length > this.maxFrames * FRAME_SAMPLES) out.push(this.take(this.chooseCut()));
    return out;
  }

  /** End of stream: returns the remaining audio as utterances (none when nothing is left). */
  flush(): Utterance[] {
    const out: Utterance[] = [];
    while (this.queue.length > this.maxFrames * FRAME_SAMPLES) out.push(this.take(this.chooseCut()));
    if (this.queue.length > 0) out.push(this.take(this.queue.length));
    return out;
  }

  private take(nSamples: number): Utterance {
    const startSample = this.offset;
    const samples = this.queue.shift(nSamples);
    this.offset += nSamples;
    return { startSample, samples };
  }

  /** Where to end the next utterance, in samples from the queue start; always within maxFrames. */
  private chooseCut(): number {
    const energies = frameEnergiesDb(this.queue.view(0, this.maxFrames * FRAME_SAMPLES));
    const smooth = movingAverage(energies, 5);
    // Quiet = within 6–10 dB of the quietest frames (further up when the level spread is large).
    const floor = percentile(smooth, 0.02);
    const threshold = floor + Math.min(10, Math.max(6, (percentile(smooth, 0.5) - floor) / 2));
    // Longest quiet run that ends after minFrames; prefer later ones on ties (longer utterances).
    let best: { start: number; len: number } | undefined;
    let runStart = -1;
    for (let f = 0; f <= smooth.length; f++) {
      const quiet = f < smooth.length && smooth[f]! <= threshold;
      if (quiet && runStart < 0) runStart = f;
      if (!quiet && runStart >= 0) {
        const len = f - runStart;
        const center = runStart + Math.floor(len / 2);
        if (len >= this.minPauseFrames && center >= this.minFrames && (!best || len >= best.len)) {
          best = { start: runStart, len };
        }
        runStart = -1;
      }
    }
    if (best) return (best.start + Math.floor(best.len / 2)) * FRAME_SAMPLES;
    // No pause: cut at the quietest 100 ms in the second half.
    const wide = movingAverage(energies, 10);
    let quietest = Math.floor(this.maxFrames / 2);
    for (let f = quietest; f < wide.length; f++) if (wide[f]! < wide[quietest]!) quietest = f;
    return Math.max(1, quietest) * FRAME_SAMPLES;
  }
}

export interface Endpoint {
  /** Absolute sample index (frame-aligned) where the utterance ends. */
  sample: number;
  /** Loudest 10 ms frame of the utterance, dBFS. */
  peakDb: number;
}

/**
 * Utterances whose loudest frame stays below this are treated as containing no speech at all. Engines hallucinate
 * words on (near-)digital silence (pocketsphinx's language model always wants a word), so such audio is not decoded.
 */
export const SILENCE_PEAK_DB = -60;

/** Loudest 10 ms frame of `samples`, dBFS (-100 for empty input). */
export function peakDb(samples: Int16Array): number {
  let peak = MIN_DB;
  for (const e of frameEnergiesDb(samples)) if (e > peak) peak = e;
  return peak;
}

export interface PauseDetectorOptions {
  /** Trailing silence after speech that ends an utterance, ms; 0 disables pause endpoints (default 600). */
  silenceMs?: number;
  /** Force an end of utterance after this long, ms (default 30 s). */
  maxUtteranceMs?: number;
  /** Speech must be this much louder than the tracked noise floor, dB (default 10). */
  marginDb?: number;
}

/**
 * Causal end-of-utterance detector. Tracks a noise floor (fast down, 5 dB/s up), calls a frame speech when it is
 * marginDb above the floor and above -70 dBFS, and reports an endpoint after `silenceMs` of non-speech that follows
 * at least 50 ms of speech, or when the utterance reaches maxUtteranceMs.
 */
export class PauseDetector {
  private readonly silenceFrames: number;
  private readonly maxFrames: number;
  private readonly marginDb: number;
  private carry = new Int16Array(0);
  private position = 0; // absolute frame index of the next frame
  private uttStartFrame = 0;
  private floor: number | undefined;
  private speechFrames = 0;
  private silentRun = 0;
  private peak = MIN_DB;
  private recent: number[] = [];

  constructor(options: PauseDetectorOptions = {}) {
    const silenceMs = options.silenceMs ?? 600;
    this.silenceFrames = silenceMs > 0 ? Math.max(1, Math.round(silenceMs / FRAME_MS)) : Infinity;
    this.maxFrames = Math.max(10, Math.round((options.maxUtteranceMs ?? 30_000) / FRAME_MS));
    this.marginDb = options.marginDb ?? 10;
  }

  /** True once the current utterance has contained speech. */
  get heardSpeech(): boolean {
    return this.speechFrames >= 5;
  }

  /** Loudest 10 ms frame of the current utterance so far, dBFS. */
  get peakDb(): number {
    return this.peak;
  }

  /** Feed samples; returns where utterances should end (frame-aligned absolute sample indexes) and their peaks. */
  push(samples: Int16Array): Endpoint[] {
    let data = samples;
    if (this.carry.length > 0) {
      data = new Int16Array(this.carry.length + samples.length);
      data.set(this.carry, 0);
      data.set(samples, this.carry.length);
    }
    const energies = frameEnergiesDb(data);
    this.carry = data.slice(energies.length * FRAME_SAMPLES);
    const endpoints: Endpoint[] = [];
    for (const e of energies) {
      this.recent.push(e);
      if (this.recent.length > 3) this.recent.shift();
      const smoothed = this.recent.reduce((a, b) => a + b, 0) / this.recent.length;
      // Start low (a stream may begin with speech) and rise at most 5 dB/s towards louder backgrounds.
      if (this.floor === undefined) this.floor = Math.min(smoothed, -55);
      else this.floor = smoothed < this.floor ? smoothed : Math.min(smoothed, this.floor + 0.05);
      const speech = e > this.floor + this.marginDb && e > -70;
      this.position++;
      if (e > this.peak) this.peak = e;
      if (speech) {
        this.speechFrames++;
        this.silentRun = 0;
      } else {
        this.silentRun++;
      }
      const uttFrames = this.position - this.uttStartFrame;
      if ((this.heardSpeech && this.silentRun >= this.silenceFrames) || uttFrames >= this.maxFrames) {
        endpoints.push({ sample: this.position * FRAME_SAMPLES, peakDb: this.peak });
        this.startUtterance();
      }
    }
    return endpoints;
  }

  /** The caller ended the utterance itself (finalize): start counting afresh from the current position. */
  startUtterance(): void {
    this.uttStartFrame = this.position;
    this.speechFrames = 0;
    this.silentRun = 0;
    this.peak = MIN_DB;
  }
}

function movingAverage(values: Float64Array, width: number): Float64Array {
  const out = new Float64Array(values.length);
  const half = Math.floor(width / 2);
  let sum = 0;
  let count = 0;
  // Sliding window [f - half, f + half].
  let lo = 0;
  let hi = -1;
  for (let f = 0; f < values.length; f++) {
    while (hi < Math.min(values.length - 1, f + half)) {
      hi++;
      sum += values[hi]!;
      count++;
    }
    while (lo < f - half) {
      sum -= values[lo]!;
      count--;
      lo++;
    }
    out[f] = sum / count;
  }
  return out;
}

function percentile(values: Float64Array, q: number): number {
  if (values.length === 0) return MIN_DB;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
