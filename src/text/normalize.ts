// Text for word error rate scoring: formatted ("$200.") and raw ("two hundred dollars") transcripts both become the
// same lower-case spoken words ("two hundred dollars"), so a formatted hypothesis is not penalised against a
// spoken-form reference (or the other way round).
//
// The text is first inverse-normalised (so spoken numbers in a raw text take their written form), then every written
// form is spelled out in one canonical reading (spell.ts). Hence normalizeForScoring(format(x)) and
// normalizeForScoring(x) agree; both equal x itself when x already uses the canonical reading ("two hundred five",
// not "two hundred and five").

import { inverseNormalize } from './itn.js';
import { spellCardinal, spellDigits, spellFourDigits, spellOrdinal, spellTime } from './spell.js';

const KEEP_FINAL_DOT: ReadonlySet<string> = new Set(['mr.', 'mrs.', 'ms.', 'dr.', 'a.m.', 'p.m.', 'st.']);
const WORDS_FOR: ReadonlyMap<string, string> = new Map([
  ['mr.', 'mister'],
  ['mrs.', 'missus'],
  ['ms.', 'ms'],
  ['dr.', 'doctor'],
  ['a.m.', 'a m'],
  ['p.m.', 'p m'],
]);
const CURRENCY_WORDS: Readonly<Record<string, [string, string]>> = { $: ['dollar', 'dollars'], '€': ['euro', 'euros'] };
const BIG_SCALES: ReadonlySet<string> = new Set(['million', 'billion', 'trillion']);

/** Drop quotes, brackets and sentence punctuation around a whitespace-separated chunk; keep "Mr." and "3.5". */
function clean(chunk: string): string {
  let c = chunk.replace(/^[("'“‘¿¡[]+/u, '').replace(/[)"'”’\],;:!?]+$/u, '');
  if (!KEEP_FINAL_DOT.has(c.toLowerCase())) c = c.replace(/\.+$/, '');
  return c;
}

const int = (s: string): number => Number(s.replace(/,/g, ''));

/** A plain integer string as words: digit by digit when it is a code (leading zero, five digits or more). */
function spellInteger(s: string): string {
  if (s.includes(',')) return spellCardinal(int(s));
  if ((s.length > 1 && s.startsWith('0')) || s.length >= 5) return spellDigits(s);
  return s.length === 4 ? spellFourDigits(Number(s)) : spellCardinal(Number(s));
}

function spellMoney(symbol: string, whole: string, fraction: string | undefined, next: string | undefined): [string, boolean] {
  const [one, many] = CURRENCY_WORDS[symbol]!;
  const n = int(whole);
  const amount = fraction === undefined ? spellCardinal(n) : `${spellCardinal(n)} point ${spellDigits(fraction)}`;
  if (next !== undefined && BIG_SCALES.has(next.toLowerCase())) return [`${amount} ${next.toLowerCase()} ${many}`, true];
  if (fraction?.length === 2) {
    const cents = Number(fraction);
    const parts: string[] = [];
    if (n > 0 || cents === 0) parts.push(`${spellCardinal(n)} ${n === 1 ? one : many}`);
    if (cents > 0) parts.push(`${spellCardinal(cents)} ${cents === 1 ? 'cent' : 'cents'}`);
    return [parts.join(' and '), false];
  }
  return [`${amount} ${fraction === undefined && n === 1 ? one : many}`, false];
}

/** One written form as spoken words; the flag says whether `next` (a scale word after "$5") was used too. */
function spell(text: string, next: string | undefined): [string, boolean] {
  const lower = text.toLowerCase();
  if (text === 'AM') return ['a m', false];
  if (text === 'PM') return ['p m', false];
  const fixed = WORDS_FOR.get(lower);
  if (fixed !== undefined) return [fixed, false];
  if (!/[\d$€¢]/u.test(text)) return [lower.replace(/[^\p{L}\p{N}']+/gu, ' '), false];
  let m = /^([$€])(\d[\d,]*)(?:\.(\d+))?$/u.exec(text);
  if (m) return spellMoney(m[1]!, m[2]!, m[3], next);
  if ((m = /^(\d[\d,]*)¢$/u.exec(text))) return [`${spellCardinal(int(m[1]!))} ${int(m[1]!) === 1 ? 'cent' : 'cents'}`, false];
  if ((m = /^(\d[\d,]*)(?:\.(\d+))?%$/.exec(text))) {
    const whole = spellCardinal(int(m[1]!));
    return [m[2] === undefined ? `${whole} percent` : `${whole} point ${spellDigits(m[2])} percent`, false];
  }
  if ((m = /^(\d{4})s$/.exec(text))) return [spellFourDigits(Number(m[1])).replace(/y$/, 'ie') + 's', false]; // 1980s
  if ((m = /^(\d{1,2}):(\d{2})$/.exec(text))) return [spellTime(Number(m[1]), Number(m[2])), false];
  if ((m = /^(\d[\d,]*)(?:st|nd|rd|th)$/i.exec(text))) return [spellOrdinal(int(m[1]!)), false];
  if (/^\d+(?:-\d+)+$/.test(text)) return [spellDigits(text.replace(/-/g, '')), false];
  if ((m = /^(\d[\d,]*)\.(\d+)$/.exec(text))) return [`${spellInteger(m[1]!)} point ${spellDigits(m[2]!)}`, false];
  if (/^\d{1,3}(?:,\d{3})+$/.test(text) || /^\d+$/.test(text)) return [spellInteger(text), false];
  return [lower.replace(/[^\p{L}\p{N}']+/gu, ' '), false];
}

/**
 * Formatted (or raw) text → lower-case spoken words separated by single spaces, numbers spelled out in a canonical
 * reading: "My flight leaves at 7:30." → "my flight leaves at seven thirty"; "$5.50" → "five dollars and fifty
 * cents"; "555-1234" → "five five five one two three four"; "1999" → "nineteen ninety nine".
 */
export function normalizeForScoring(text: string): string {
  const texts = text
    .replace(/[’‘]/gu, "'")
    .split(/\s+/)
    .map(clean)
    .filter((c) => c.length > 0);
  const words = texts.map((t) => t.toLowerCase());
  const spans = inverseNormalize(words, texts, []);
  const out: string[] = [];
  for (let k = 0; k < spans.length; k++) {
    const next = spans[k + 1];
    const [spoken, usedNext] = spell(clean(spans[k]!.text), next && clean(next.text)); // clean: "3rd," from ITN
    out.push(spoken);
    if (usedNext) k++;
  }
  return out
    .join(' ')
    .replace(/(^|\s)'+|'+(?=\s|$)/g, '$1')
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .join(' ');
}
