// The speaker-count hint of a diarization (interface.ts SpeakerCount) as the closed range the clusterers work with.
import type { SpeakerCount } from './interface.js';

export interface SpeakerRange {
  min: number;
  max: number;
}

/** No hint: one speaker or more. */
export const ANY_SPEAKER_COUNT: Readonly<SpeakerRange> = Object.freeze({ min: 1, max: Infinity });

/** The hint as a range; a RangeError when a bound is not a whole number ≥ 1 or min > max. */
export function speakerRange(count: SpeakerCount | undefined): SpeakerRange {
  const min = count?.min ?? 1;
  const max = count?.max ?? Infinity;
  for (const [name, v] of [
    ['min', min],
    ['max', max],
  ] as const) {
    if (!(v >= 1) || (v !== Infinity && !Number.isInteger(v))) throw new RangeError(`speakers.${name} must be a whole number of at least 1 (got ${v})`);
  }
  if (min > max) throw new RangeError(`speakers.min (${min}) is above speakers.max (${max})`);
  return { min, max };
}
