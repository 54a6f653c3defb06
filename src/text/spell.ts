// Numbers → English words, the inverse of numbers.ts, in one canonical spoken form (American: no "and" after
// "hundred", "oh" never used for zero in digit strings). Used by normalizeForScoring.

import { ONES, ORDINAL_ONES, ORDINAL_TEENS, ORDINAL_TENS, TEENS, TENS } from './lexicon.js';

const BIG: readonly [number, string][] = [
  [1e12, 'trillion'],
  [1e9, 'billion'],
  [1e6, 'million'],
  [1e3, 'thousand'],
];

function below100(n: number): string {
  if (n < 10) return ONES[n]!;
  if (n < 20) return TEENS[n - 10]!;
  const t = TENS[Math.floor(n / 10)]!;
  return n % 10 === 0 ? t : `${t} ${ONES[n % 10]}`;
}

function below1000(n: number): string {
  const h = Math.floor(n / 100);
  const r = n % 100;
  if (h === 0) return below100(r);
  return r === 0 ? `${ONES[h]} hundred` : `${ONES[h]} hundred ${below100(r)}`;
}

/** 1234567 → "one million two hundred thirty four thousand five hundred sixty seven". Integers 0 to < 1e15. */
export function spellCardinal(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) return String(n);
  if (n === 0) return 'zero';
  const parts: string[] = [];
  let rest = n;
  for (const [value, name] of BIG) {
    const g = Math.floor(rest / value);
    if (g > 0) {
      parts.push(`${spellCardinal(g)} ${name}`);
      rest -= g * value;
    }
  }
  if (rest > 0) parts.push(below1000(rest));
  return parts.join(' ');
}

const TO_ORDINAL = new Map<string, string>([
  ...ONES.map((w, i) => [w, ORDINAL_ONES[i]!] as [string, string]),
  ...TEENS.map((w, i) => [w, ORDINAL_TEENS[i]!] as [string, string]),
  ...TENS.map((w, i) => [w, ORDINAL_TENS[i]!] as [string, string]).filter(([w]) => w !== ''),
  ['hundred', 'hundredth'],
  ...BIG.map(([, name]) => [name, `${name}th`] as [string, string]),
]);

/** 21 → "twenty first", 100 → "one hundredth". */
export function spellOrdinal(n: number): string {
  const words = spellCardinal(n).split(' ');
  const last = words.pop()!;
  words.push(TO_ORDINAL.get(last) ?? last);
  return words.join(' ');
}

/** "0123" → "zero one two three". */
export function spellDigits(digits: string): string {
  return [...digits].map((d) => ONES[Number(d)] ?? d).join(' ');
}

/**
 * A plain four-digit number, read the way years are where that is how people say it: 1100-1999 and 2010-2099
 * ("nineteen ninety nine", "nineteen oh five", "twelve hundred", "twenty twenty four"); otherwise as a cardinal
 * ("two thousand eight", "three thousand five hundred").
 */
export function spellFourDigits(n: number): string {
  if (!((n >= 1100 && n <= 1999) || (n >= 2010 && n <= 2099))) return spellCardinal(n);
  const hi = Math.floor(n / 100);
  const lo = n % 100;
  if (lo === 0) return `${below100(hi)} hundred`;
  if (lo < 10) return `${below100(hi)} oh ${ONES[lo]}`;
  return `${below100(hi)} ${below100(lo)}`;
}

/** "7", "05" → "seven oh five"; "00" → "seven o'clock"; "30" → "seven thirty". */
export function spellTime(hour: number, minutes: number): string {
  if (minutes === 0) return `${spellCardinal(hour)} o'clock`;
  if (minutes < 10) return `${spellCardinal(hour)} oh ${ONES[minutes]}`;
  return `${spellCardinal(hour)} ${below100(minutes)}`;
}
