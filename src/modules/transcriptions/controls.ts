// The transcript controls of a transcription (Parlance extensions of the request), stored as one JSON object in its
// row (`controls`), echoed in its record, and applied to its words when the job runs.
import type { RedactKind } from '../../text/redact.js';
import { NO_WORD_CONTROLS, type WordControls } from '../../text/word-controls.js';
import { speakerBounds, type SpeakerCountFields } from '../../wire/word-controls.js';

/** What the row keeps: the request's own field names, only those given. */
export interface StoredControls extends SpeakerCountFields {
  redact?: RedactKind[];
  profanity_filter?: boolean;
}

/** The row's `controls` column for a request: null when it asked for none. */
export function storedControls(body: StoredControls): string | null {
  const stored: StoredControls = {
    ...(body.redact?.length ? { redact: body.redact } : {}),
    ...(body.profanity_filter ? { profanity_filter: true } : {}),
    ...(body.num_speakers !== undefined ? { num_speakers: body.num_speakers } : {}),
    ...(body.min_speakers !== undefined ? { min_speakers: body.min_speakers } : {}),
    ...(body.max_speakers !== undefined ? { max_speakers: body.max_speakers } : {}),
  };
  return Object.keys(stored).length ? JSON.stringify(stored) : null;
}

const parse = (controls: string | null): StoredControls => (controls ? (JSON.parse(controls) as StoredControls) : {});

/** The controls as the record shows them (present only when asked for). */
export const controlsRecord = (controls: string | null): StoredControls => parse(controls);

/** The controls the job applies to the words. */
export function wordControlsOf(controls: string | null): WordControls {
  const c = parse(controls);
  return c.redact || c.profanity_filter ? { redact: c.redact ?? [], profanityFilter: c.profanity_filter ?? false } : NO_WORD_CONTROLS;
}

/** The diarizer's speaker-count bounds the transcription asked for, if any. */
export const speakerBoundsOf = (controls: string | null): { min?: number; max?: number } | undefined => speakerBounds(parse(controls));
