// The profanity filter: listed words (profanity-words.ts) masked as their first letter and asterisks ("d***"), in
// tokens and so in the transcript text built from them. Pure, synchronous; works on the recognizer's words or on
// formatted ones (case, surrounding punctuation and a leading space are kept).
import { PROFANITY_EN } from './profanity-words.js';
import type { WordToken } from './types.js';

/** Listed entries by their first word: each entry as its words. */
function index(list: readonly string[]): Map<string, string[][]> {
  const byFirst = new Map<string, string[][]>();
  for (const entry of list) {
    const entryWords = entry.split(/\s+/);
    const first = entryWords[0]!;
    byFirst.set(first, [...(byFirst.get(first) ?? []), entryWords]);
  }
  return byFirst;
}

const EN = index(PROFANITY_EN);

/** "damn" → "d***"; the leading space and surrounding punctuation stay. */
function mask(text: string): string {
  return text.replace(
    /^(\s*[^\p{L}\p{N}]*)([\p{L}\p{N}])([\p{L}\p{N}'*-]*)/u,
    (_m, lead: string, first: string, rest: string) => `${lead}${first}${'*'.repeat(rest.length)}`,
  );
}

const core = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');

/** The tokens with every listed word (or listed phrase, word by word) masked. */
export function maskProfanity<T extends WordToken>(tokens: readonly T[], list: ReadonlyMap<string, string[][]> = EN): T[] {
  const cores = tokens.map((t) => core(t.text));
  const masked = new Set<number>();
  cores.forEach((c, i) => {
    for (const entry of list.get(c) ?? []) if (entry.every((w, k) => cores[i + k] === w)) for (let k = 0; k < entry.length; k++) masked.add(i + k);
  });
  return tokens.map((t, i) => (masked.has(i) ? { ...t, text: mask(t.text) } : t));
}
