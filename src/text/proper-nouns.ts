// Capitals inside a sentence: "I" and its contractions, weekdays, names and places (single words and phrases such
// as "new york"). Months and titles are decided by the inverse normaliser (itn.ts), which knows their context.

import { capitalize } from './sentences.js';
import { PROPER_NOUNS, PROPER_PHRASES, WEEKDAYS } from './vocabulary.js';

const PHRASES_BY_FIRST = new Map<string, (readonly string[])[]>();
for (const p of PROPER_PHRASES) {
  const list = PHRASES_BY_FIRST.get(p[0]!) ?? [];
  list.push(p);
  PHRASES_BY_FIRST.set(p[0]!, list);
}
/** First words of the multi-word names. */
export const PHRASE_STARTERS: readonly string[] = [...PHRASES_BY_FIRST.keys()];

/** Length of the multi-word name starting at words[i] and ending by `end`, or 0. */
export function properPhraseAt(words: readonly string[], i: number, end: number): number {
  for (const p of PHRASES_BY_FIRST.get(words[i]!) ?? []) {
    if (i + p.length <= end && p.every((w, k) => words[i + k] === w)) return p.length;
  }
  return 0;
}

/** `text` (lower-case `w`) with the capital it takes anywhere in a sentence: "I'm", "Monday", "Mondays", "John's". */
export function wordCase(w: string, text: string): string {
  if (w === 'i' || w.startsWith("i'")) return capitalize(text);
  if (WEEKDAYS.has(w) || PROPER_NOUNS.has(w) || WEEKDAYS.has(w.slice(0, -1)) || PROPER_NOUNS.has(w.replace(/'s$/, ''))) {
    return capitalize(text);
  }
  return text;
}
