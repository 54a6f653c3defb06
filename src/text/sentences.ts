// Sentence-level decisions: where a pause is a full stop or a comma, and whether a sentence is a question. Pure
// functions of lower-case source words; the formatter (format.ts) applies them to spans.

import {
  AUXILIARIES,
  CONTINUATION,
  DISCOURSE_OPENERS,
  IMPERATIVE_AUXILIARIES,
  NO_COMMA_AFTER,
  PERSONAL_PRONOUNS,
  QUESTION_BIGRAMS,
  SUBJECTS,
  WH_ALWAYS,
  WH_WORDS,
} from './vocabulary.js';

/** A gap between two words at least this long (ms) ends a sentence within an utterance or file. */
export const SENTENCE_PAUSE_MS = 700;
/** A gap at least this long (and shorter than SENTENCE_PAUSE_MS) is a comma, where a comma is allowed. */
export const COMMA_PAUSE_MS = 400;
/** Words of a sentence's opening that the question test looks at. */
export const HEAD_WORDS = 6;

/** First letter upper case ("o'clock" → "O'clock"); other characters unchanged. */
export function capitalize(text: string): string {
  const c = text.charAt(0);
  const u = c.toUpperCase();
  return c === u ? text : u + text.slice(1);
}

/** A sentence may end after `word` (not after "the", "and", "of" ...: a pause there is hesitation). */
export function canEndSentence(word: string): boolean {
  return !CONTINUATION.has(word);
}

/** A comma may follow `word` (not after articles, prepositions, auxiliaries, subject pronouns ...). */
export function canTakeComma(word: string): boolean {
  return !NO_COMMA_AFTER.has(word);
}

/**
 * Whether a sentence opening with `head` (its first few lower-case words) is a question:
 * - after skipping up to two discourse openers ("so", "well", "okay"),
 * - "who"/"whose"/"what's"/"where's" ..., or "how about", "what if", "why not", "how many" ...;
 * - a wh-word (what, where, when, why, how, which) followed within three words by an auxiliary, with no personal
 *   pronoun before it ("what time is it" yes; "when I was young" no; "what a day" no);
 * - an auxiliary or modal followed by a subject ("is it", "can you", "does the"); "do", "don't" and "have" also open
 *   imperatives ("do it now", "have a seat"), so they need a personal pronoun ("do you", "have they").
 */
export function isQuestion(head: readonly string[]): boolean {
  let k = 0;
  while (k < 2 && k < head.length - 1 && DISCOURSE_OPENERS.has(head[k]!)) k++;
  const w = head[k];
  const next = head[k + 1];
  if (w === undefined) return false;
  if (WH_ALWAYS.has(w)) return true;
  if (next !== undefined && QUESTION_BIGRAMS.has(`${w}_${next}`)) return true;
  if (WH_WORDS.has(w)) {
    if (next === 'a' || next === 'an') return false;
    for (let j = k + 1; j <= k + 3 && j < head.length; j++) {
      const h = head[j]!;
      if (AUXILIARIES.has(h)) return true;
      if (PERSONAL_PRONOUNS.has(h) || h === 'it') return false;
    }
    return false;
  }
  if (AUXILIARIES.has(w) && next !== undefined) {
    return IMPERATIVE_AUXILIARIES.has(w) ? PERSONAL_PRONOUNS.has(next) : SUBJECTS.has(next);
  }
  return false;
}
