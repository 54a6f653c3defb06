// Energy measures of PCM: the silence guard that keeps decoders from inventing words on (near-)digital silence.
// Where speech is, and where utterances end, is the voice activity detector's business (src/audio/vad.ts,
// segmenter.ts for files, speech-gate.ts for live audio).

export const FRAME_SAMPLES = 160; // 10 ms at 16 kHz
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
