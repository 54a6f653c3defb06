// Energy measures and the causal end-of-utterance detector used by live (streaming) decoding.
//
// - PauseDetector: declares an end of utterance after a run of silence following speech. A deliberately simple
//   energy detector: the cut only has to fall between words, not classify speech perfectly, and the engine models
//   silence itself.
// Batch decoding cuts files with a voice activity detector instead (segmenter.ts, src/audio/vad.ts).

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

export interface Endpoint {
  /** Absolute sample index (frame-aligned) where the utterance ends. */
  sample: number;
  /** Loudest 10 ms frame of the utterance, dBFS. */
  peakDb: number;
  /** Why it ends: the speaker paused, or the utterance reached maxUtteranceMs (a forced cut mid-speech). */
  reason: 'pause' | 'max_length';
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
      const paused = this.heardSpeech && this.silentRun >= this.silenceFrames;
      if (paused || uttFrames >= this.maxFrames) {
        endpoints.push({ sample: this.position * FRAME_SAMPLES, peakDb: this.peak, reason: paused ? 'pause' : 'max_length' });
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
