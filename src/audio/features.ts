// Speaker-level acoustic features of 16 kHz mono PCM: the one place that turns samples into pitch, MFCC and
// speaking-rate measurements. Voice cloning compares a reference clip with built-in voices on these; diarization
// clusters speech windows on them. Meyda computes the spectral features (MFCC, RMS, centroid) and pitchfinder's
// YIN the fundamental frequency, rather than hand-written DSP.
import meydaModule from 'meyda';
import { YIN } from 'pitchfinder';
import { PCM_SAMPLE_RATE } from './decode.js';

/** Analysis frame: 32 ms at 16 kHz (Meyda needs a power of two). */
export const FEATURE_FRAME_SAMPLES = 512;
/** Hop between frames: 10 ms at 16 kHz, so frame i starts at i * 10 ms. */
export const FEATURE_HOP_SAMPLES = 160;
export const MFCC_COEFFICIENTS = 13;
/** Fundamental frequency range of adult and child speech; YIN estimates outside it are octave errors or noise. */
const PITCH_MIN_HZ = 60;
const PITCH_MAX_HZ = 500;

// meyda ships ESM typings over a CommonJS build: under NodeNext the default import is typed as the namespace.
type MeydaApi = (typeof meydaModule)['default'];
const Meyda = ((meydaModule as unknown as { default?: MeydaApi }).default ?? meydaModule) as MeydaApi;

/** s16le bytes (or samples) → floats in [-1, 1]. */
export function pcmToFloat(pcm: Buffer | Int16Array): Float32Array {
  const ints = pcm instanceof Int16Array ? pcm : new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.byteLength / 2));
  const out = new Float32Array(ints.length);
  for (let i = 0; i < ints.length; i++) out[i] = ints[i]! / 32768;
  return out;
}

export interface FrameFeatures {
  /** One MFCC vector (13 coefficients) per frame. */
  mfcc: Float32Array[];
  /** Root-mean-square energy per frame. */
  rms: Float32Array;
  /** Spectral centroid per frame, in Hz. */
  centroidHz: Float32Array;
}

/** Frame-level spectral features, frame i covering samples [i * hop, i * hop + 512). */
export function spectralFrames(samples: Float32Array, sampleRate = PCM_SAMPLE_RATE): FrameFeatures {
  Meyda.bufferSize = FEATURE_FRAME_SAMPLES;
  Meyda.sampleRate = sampleRate;
  Meyda.numberOfMFCCCoefficients = MFCC_COEFFICIENTS;
  Meyda.windowingFunction = 'hanning';
  const count = samples.length < FEATURE_FRAME_SAMPLES ? 0 : Math.floor((samples.length - FEATURE_FRAME_SAMPLES) / FEATURE_HOP_SAMPLES) + 1;
  const mfcc: Float32Array[] = [];
  const rms = new Float32Array(count);
  const centroidHz = new Float32Array(count);
  const binHz = sampleRate / FEATURE_FRAME_SAMPLES;
  for (let i = 0; i < count; i++) {
    // Meyda windows its input in place: hand it a copy, never a view of the caller's samples.
    const frame = samples.slice(i * FEATURE_HOP_SAMPLES, i * FEATURE_HOP_SAMPLES + FEATURE_FRAME_SAMPLES);
    const f = Meyda.extract(['mfcc', 'rms', 'spectralCentroid'], frame) as { mfcc: number[]; rms: number; spectralCentroid: number } | null;
    mfcc.push(Float32Array.from(f?.mfcc ?? new Array<number>(MFCC_COEFFICIENTS).fill(0)));
    rms[i] = f?.rms ?? 0;
    // Meyda reports the centroid as a bin index; silence gives NaN.
    centroidHz[i] = Number.isFinite(f?.spectralCentroid) ? f!.spectralCentroid * binHz : 0;
  }
  return { mfcc, rms, centroidHz };
}

/**
 * spectralFrames over a stream: push samples of any length, get the frames that became complete, numbered on one
 * grid from the stream's first sample (frame i covers samples [i * hop, i * hop + 512)). Holds under one frame.
 */
export class SpectralFrameStream {
  private tail = new Float32Array(0);
  /** Index of the next frame to emit; it starts at sample next * hop. */
  private next = 0;

  constructor(private readonly sampleRate = PCM_SAMPLE_RATE) {}

  /** With `pitch`, also the YIN pitch of each frame (0 when unvoiced, or when its 40 ms window is not complete yet). */
  push(samples: Float32Array, pitch = false): FrameFeatures & { first: number; pitchHz?: Float32Array } {
    const buf = new Float32Array(this.tail.length + samples.length);
    buf.set(this.tail);
    buf.set(samples, this.tail.length);
    const out = spectralFrames(buf, this.sampleRate);
    const first = this.next;
    const count = out.rms.length;
    let pitchHz: Float32Array | undefined;
    if (pitch) {
      pitchHz = new Float32Array(count);
      pitchHz.set(pitchTrack(buf, this.sampleRate).subarray(0, count));
    }
    this.next += count;
    // Keep from the start of the next frame on.
    this.tail = buf.slice(count * FEATURE_HOP_SAMPLES);
    return { ...out, first, pitchHz };
  }
}

/** Fundamental frequency per 10 ms hop (40 ms YIN window), 0 where unvoiced. */
export function pitchTrack(samples: Float32Array, sampleRate = PCM_SAMPLE_RATE): Float32Array {
  const windowSamples = Math.round(sampleRate * 0.04);
  const hop = Math.round((sampleRate * FEATURE_HOP_SAMPLES) / PCM_SAMPLE_RATE);
  const detect = YIN({ sampleRate, threshold: 0.2 });
  const count = samples.length < windowSamples ? 0 : Math.floor((samples.length - windowSamples) / hop) + 1;
  const f0 = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const window = samples.subarray(i * hop, i * hop + windowSamples);
    const rms = rmsOf(window);
    if (rms < 0.005) continue; // silence: YIN would find "pitch" in noise
    // pitchfinder seeds its cumulative mean with a constant 1, which swamps the difference function of quiet
    // windows (a 220 Hz sine at -18 dBFS came out as 7 kHz): scale every window to unit RMS first.
    const hz = detect(window.map((v) => v / rms));
    if (hz !== null && hz >= PITCH_MIN_HZ && hz <= PITCH_MAX_HZ) f0[i] = hz;
  }
  return f0;
}

export interface VoiceProfile {
  /** Seconds of audio analysed. */
  durationSeconds: number;
  /** Share of 10 ms frames with a pitch. */
  voicedRatio: number;
  pitchMedianHz: number;
  pitchP10Hz: number;
  pitchP90Hz: number;
  /** Pitch range in semitones between the 10th and 90th percentiles. */
  pitchRangeSemitones: number;
  /** Estimated syllables per second of speech (voiced energy peaks over the time between the first and last). */
  syllablesPerSecond: number;
  spectralCentroidHz: number;
  mfccMean: number[];
  mfccStd: number[];
}

/** Speaker-level summary of a speech clip (pitch, range, rate, spectral envelope). */
export function voiceProfile(samples: Float32Array, sampleRate = PCM_SAMPLE_RATE): VoiceProfile {
  const f0 = pitchTrack(samples, sampleRate);
  const voiced = Array.from(f0)
    .filter((v) => v > 0)
    .sort((a, b) => a - b);
  const spectral = spectralFrames(samples, sampleRate);
  const speechFrames = speechFrameIndexes(spectral.rms);
  const mfccMean = new Array<number>(MFCC_COEFFICIENTS).fill(0);
  const mfccStd = new Array<number>(MFCC_COEFFICIENTS).fill(0);
  for (const i of speechFrames) for (let c = 0; c < MFCC_COEFFICIENTS; c++) mfccMean[c]! += spectral.mfcc[i]![c]! / speechFrames.length;
  for (const i of speechFrames) for (let c = 0; c < MFCC_COEFFICIENTS; c++) mfccStd[c]! += (spectral.mfcc[i]![c]! - mfccMean[c]!) ** 2 / speechFrames.length;
  for (let c = 0; c < MFCC_COEFFICIENTS; c++) mfccStd[c] = Math.sqrt(mfccStd[c]!);
  const centroid = speechFrames.length ? speechFrames.reduce((s, i) => s + spectral.centroidHz[i]!, 0) / speechFrames.length : 0;
  const p10 = quantile(voiced, 0.1);
  const p90 = quantile(voiced, 0.9);
  return {
    durationSeconds: samples.length / sampleRate,
    voicedRatio: f0.length ? voiced.length / f0.length : 0,
    pitchMedianHz: quantile(voiced, 0.5),
    pitchP10Hz: p10,
    pitchP90Hz: p90,
    pitchRangeSemitones: p10 > 0 ? 12 * Math.log2(p90 / p10) : 0,
    syllablesPerSecond: syllableRate(spectral.rms, f0),
    spectralCentroidHz: centroid,
    mfccMean,
    mfccStd,
  };
}

function rmsOf(x: Float32Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return x.length ? Math.sqrt(s / x.length) : 0;
}

/** q-quantile of ascending values (0 for none). */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Frames loud enough to be speech: within 30 dB of the clip's loud frames (95th percentile). */
function speechFrameIndexes(rms: Float32Array): number[] {
  const loud = quantile(
    Array.from(rms).sort((a, b) => a - b),
    0.95,
  );
  const floor = Math.max(loud * 10 ** (-30 / 20), 1e-4);
  const out: number[] = [];
  rms.forEach((v, i) => {
    if (v >= floor) out.push(i);
  });
  return out;
}

/**
 * Syllable nuclei: local maxima of the smoothed energy envelope within 25 dB of the loudest frames, voiced nearby,
 * at least 80 ms apart and separated from the previous nucleus by a dip of at least 2 dB; their count over the time
 * from the first to the last loud frame is the rate.
 */
function syllableRate(rms: Float32Array, f0: Float32Array): number {
  const db = Array.from(rms, (_, i) => {
    let s = 0;
    let n = 0;
    for (let j = Math.max(0, i - 2); j <= Math.min(rms.length - 1, i + 2); j++, n++) s += rms[j]!;
    return 20 * Math.log10(Math.max(s / n, 1e-6));
  });
  const loudest = quantile(
    [...db].sort((a, b) => a - b),
    0.95,
  );
  const voicedNear = (i: number) => f0.subarray(Math.max(0, i - 3), i + 4).some((v) => v > 0);
  const nuclei: number[] = [];
  let dip = Infinity; // lowest level since the last nucleus
  for (let i = 1; i < db.length - 1; i++) {
    dip = Math.min(dip, db[i]!);
    if (!(db[i]! >= db[i - 1]! && db[i]! > db[i + 1]!) || db[i]! < loudest - 25 || !voicedNear(i)) continue;
    const last = nuclei[nuclei.length - 1];
    if (last !== undefined && (i - last < 8 || db[i]! - dip < 2 || db[last]! - dip < 2)) {
      if (last !== undefined && i - last < 8 && db[i]! > db[last]!) nuclei[nuclei.length - 1] = i; // keep the stronger
      continue;
    }
    nuclei.push(i);
    dip = Infinity;
  }
  const loud = db.flatMap((v, i) => (v >= loudest - 25 ? [i] : []));
  if (nuclei.length < 2 || loud.length < 2) return 0;
  const seconds = ((loud[loud.length - 1]! - loud[0]!) * FEATURE_HOP_SAMPLES) / PCM_SAMPLE_RATE;
  return seconds > 0 ? nuclei.length / seconds : 0;
}
