// The transcript controls that rewrite final words, in the order they apply: redaction (redact.ts), then the
// profanity filter (profanity.ts). One function for files and live sessions, so both surfaces keep the same rules.
import { maskProfanity } from './profanity.js';
import { REDACTION_LABELS, type RedactKind, redactWords } from './redact.js';
import type { WordToken } from './types.js';

export interface WordControls {
  /** Kinds of spans replaced by one labelled token; none when empty. */
  redact: readonly RedactKind[];
  profanityFilter: boolean;
}

export const NO_WORD_CONTROLS: WordControls = { redact: [], profanityFilter: false };

export const hasWordControls = (c: WordControls): boolean => c.redact.length > 0 || c.profanityFilter;

/** Digit kinds, the most general first: what an unfinished number run in a live hypothesis is masked as. */
const DIGIT_KINDS: readonly RedactKind[] = ['numbers', 'phone', 'ssn', 'pci'];

/**
 * The words with the controls applied. `partial`: a live hypothesis, whose number runs may still be growing (a card
 * number heard four digits at a time): with any digit kind asked for, a run no rule labels yet is masked as the most
 * general digit kind asked for, so no digits show before their final tokens are redacted.
 */
export function applyWordControls<T extends WordToken>(words: readonly T[], controls: WordControls, opts: { partial?: boolean } = {}): T[] {
  let out: T[] = [...words];
  if (controls.redact.length) {
    const kinds = new Set(controls.redact);
    out = redactWords(out, kinds);
    const general = opts.partial ? DIGIT_KINDS.find((k) => kinds.has(k)) : undefined;
    if (general && general !== 'numbers')
      out = redactWords(out, new Set(['numbers'])).map((t) =>
        t.text.includes(REDACTION_LABELS.numbers) ? { ...t, text: t.text.replace(REDACTION_LABELS.numbers, REDACTION_LABELS[general]) } : t,
      );
  }
  return controls.profanityFilter ? maskProfanity(out) : out;
}
