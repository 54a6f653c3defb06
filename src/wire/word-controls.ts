// The request fields of the transcript controls (Parlance extensions): one schema for POST /v1/transcriptions and
// the real-time configuration message. Words: redaction and the profanity filter; speakers: the count hint.
import { Type } from '@sinclair/typebox';
import { REDACT_KINDS } from '../text/redact.js';

export const RedactField = Type.Array(
  Type.Union(
    REDACT_KINDS.map((k) => Type.Literal(k)),
    { errorMessage: `must be one of ${REDACT_KINDS.join(', ')}` },
  ),
  {
    maxItems: REDACT_KINDS.length,
    uniqueItems: true,
    description:
      'Parlance: kinds of spans to redact from final tokens: each span becomes one token `[PCI]` (13–19 digits), `[SSN]` (9 digits), `[PHONE]` (7, 10 or 11 digits), `[NUMBER]` (any number) or `[EMAIL]`, spoken or written. The original words are not stored.',
  },
);

export const ProfanityFilterField = Type.Boolean({
  description: 'Parlance: mask listed profanity as its first letter and asterisks ("d***") in tokens and transcript text.',
});

/** A speaker count (num_speakers, min_speakers, max_speakers). */
export const SpeakerCountField = Type.Integer({ minimum: 1, maximum: 32 });

/** Speaker-count hint fields as a request gives them. */
export interface SpeakerCountFields {
  num_speakers?: number;
  min_speakers?: number;
  max_speakers?: number;
}

/** The rules between the speaker-count fields and diarization, as validation issues (location, message, type). */
export function speakerCountIssues(
  c: SpeakerCountFields & { enable_speaker_diarization?: boolean },
): { location: string; message: string; errorType: string }[] {
  const issues: { location: string; message: string; errorType: string }[] = [];
  const given = (['num_speakers', 'min_speakers', 'max_speakers'] as const).filter((k) => c[k] !== undefined);
  if (given.length && !c.enable_speaker_diarization)
    for (const k of given) issues.push({ location: k, message: 'needs enable_speaker_diarization: true', errorType: 'invalid_value' });
  if (c.num_speakers !== undefined && (c.min_speakers !== undefined || c.max_speakers !== undefined))
    issues.push({ location: 'num_speakers', message: 'give either num_speakers or min_speakers / max_speakers', errorType: 'invalid_value' });
  if (c.min_speakers !== undefined && c.max_speakers !== undefined && c.min_speakers > c.max_speakers)
    issues.push({ location: 'min_speakers', message: `must be at most max_speakers (${c.max_speakers})`, errorType: 'out_of_range' });
  return issues;
}

/** The diarizer's speaker-count bounds of a request, or undefined without a hint. */
export function speakerBounds(c: SpeakerCountFields): { min?: number; max?: number } | undefined {
  if (c.num_speakers !== undefined) return { min: c.num_speakers, max: c.num_speakers };
  if (c.min_speakers === undefined && c.max_speakers === undefined) return undefined;
  return { ...(c.min_speakers !== undefined ? { min: c.min_speakers } : {}), ...(c.max_speakers !== undefined ? { max: c.max_speakers } : {}) };
}
