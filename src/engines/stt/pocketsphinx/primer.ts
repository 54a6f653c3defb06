// The first-sample primer, for batch segments (worker.ts) and live utterances (stream-session.ts) alike.
// pocketsphinx's noise removal takes the first frames of a stream for its noise estimate. Speech at the first sample
// of the audio (its first 10 ms peak above -30 dBFS) would be that estimate, and the first words lose what it
// subtracts: such audio is decoded after 300 ms of a microphone's noise floor. A recording that starts quieter gives
// the estimate its own floor, which fits it better than ours (priming those too cost 47 words on the tuning half),
// and later segments start in the pause before them (the VAD's padding, the live pre-roll): both are decoded as they
// are. Measured in docs/benchmarks.md, "Speech from the first sample".
import { noiseFloorSamples } from '../../../audio/noise-floor.js';
import type { Token } from '../interface.js';

const PRIMER = noiseFloorSamples(300);
const EMPTY = new Int16Array(0);

/** Samples to decode before audio that starts at stream sample `startSample` (none unless it is the first, on speech). */
export function primerFor(startSample: number, samples: Int16Array): Int16Array {
  return startSample === 0 && startsOnSpeech(samples) ? PRIMER : EMPTY;
}

/** A sample above -30 dBFS in the first 10 ms. */
function startsOnSpeech(samples: Int16Array): boolean {
  for (let i = 0; i < Math.min(samples.length, 160); i++) if (Math.abs(samples[i]!) > 1000) return true;
  return false;
}

/** The parts one after another, in one allocation; a lone non-empty part is returned as it is. */
export function concatSamples(...parts: Int16Array[]): Int16Array {
  const filled = parts.filter((p) => p.length > 0);
  if (filled.length <= 1) return filled[0] ?? new Int16Array(0);
  const out = new Int16Array(filled.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of filled) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Words heard in a primer are dropped, and a word begun in it starts with the audio (a no-op without one). */
export function fromStart(tokens: Token[], startMs: number): Token[] {
  return tokens.filter((t) => t.end_ms > startMs).map((t) => (t.start_ms < startMs ? { ...t, start_ms: startMs } : t));
}
