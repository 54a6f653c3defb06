// The request fields of the transcript controls that rewrite words (Parlance extensions): one schema for
// POST /v1/transcriptions and the real-time configuration message.
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
