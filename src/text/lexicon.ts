// English number words: what each word is worth. Pure tables and lookups, no grammar (see numbers.ts).

export const ONES: readonly string[] = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
export const TEENS: readonly string[] = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
/** Index i is the word for i * 10 (0 and 1 unused). */
export const TENS: readonly string[] = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

export const ORDINAL_ONES: readonly string[] = ['zeroth', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
export const ORDINAL_TEENS: readonly string[] = [
  'tenth',
  'eleventh',
  'twelfth',
  'thirteenth',
  'fourteenth',
  'fifteenth',
  'sixteenth',
  'seventeenth',
  'eighteenth',
  'nineteenth',
];
export const ORDINAL_TENS: readonly string[] = ['', '', 'twentieth', 'thirtieth', 'fortieth', 'fiftieth', 'sixtieth', 'seventieth', 'eightieth', 'ninetieth'];

/** Scale words and their multipliers. "hundred" multiplies within a group; the others close a group. */
export const SCALES: ReadonlyMap<string, number> = new Map([
  ['hundred', 100],
  ['thousand', 1e3],
  ['million', 1e6],
  ['billion', 1e9],
  ['trillion', 1e12],
]);
const ORDINAL_SCALES: ReadonlyMap<string, number> = new Map([
  ['hundredth', 100],
  ['thousandth', 1e3],
  ['millionth', 1e6],
  ['billionth', 1e9],
  ['trillionth', 1e12],
]);
export const SCALE_WORDS: readonly string[] = ['hundred', 'thousand', 'million', 'billion', 'trillion'];

/** A number word below 100: its value, whether it is an ordinal form, and its class. */
export interface NumberWord {
  value: number;
  ordinal: boolean;
  /** 'ones' 0-9, 'teen' 10-19, 'tens' 20, 30 ... 90, 'compound' a hyphenated 21-99 ("twenty-one"). */
  cls: 'ones' | 'teen' | 'tens' | 'compound';
}

const WORDS = new Map<string, NumberWord>();
for (let i = 0; i < 10; i++) {
  WORDS.set(ONES[i]!, { value: i, ordinal: false, cls: 'ones' });
  WORDS.set(ORDINAL_ONES[i]!, { value: i, ordinal: true, cls: 'ones' });
  WORDS.set(TEENS[i]!, { value: 10 + i, ordinal: false, cls: 'teen' });
  WORDS.set(ORDINAL_TEENS[i]!, { value: 10 + i, ordinal: true, cls: 'teen' });
}
for (let t = 2; t < 10; t++) {
  WORDS.set(TENS[t]!, { value: t * 10, ordinal: false, cls: 'tens' });
  WORDS.set(ORDINAL_TENS[t]!, { value: t * 10, ordinal: true, cls: 'tens' });
  for (let o = 1; o < 10; o++) {
    WORDS.set(`${TENS[t]}-${ONES[o]}`, { value: t * 10 + o, ordinal: false, cls: 'compound' });
    WORDS.set(`${TENS[t]}-${ORDINAL_ONES[o]}`, { value: t * 10 + o, ordinal: true, cls: 'compound' });
  }
}
WORDS.delete('zeroth');

/** The number word `w` (lower case) below 100, or undefined. "oh" is not a number word here (see digitValue). */
export function numberWord(w: string | undefined): NumberWord | undefined {
  return w === undefined ? undefined : WORDS.get(w);
}

/** Multiplier of a cardinal scale word ("thousand" → 1000), or undefined. */
export function scaleValue(w: string | undefined): number | undefined {
  return w === undefined ? undefined : SCALES.get(w);
}

/** Multiplier of an ordinal scale word ("hundredth" → 100), or undefined. */
export function ordinalScaleValue(w: string | undefined): number | undefined {
  return w === undefined ? undefined : ORDINAL_SCALES.get(w);
}

/** Value of a single spoken digit ("zero".."nine"; "oh" too when `allowOh`), or undefined. */
export function digitValue(w: string | undefined, allowOh: boolean): number | undefined {
  if (w === 'oh' || w === 'o') return allowOh ? 0 : undefined;
  const n = w === undefined ? undefined : WORDS.get(w);
  return n && n.cls === 'ones' && !n.ordinal ? n.value : undefined;
}

/** Whether `w` is any cardinal or ordinal number word, a scale word or a hyphenated compound. */
export function isNumberish(w: string | undefined): boolean {
  return w !== undefined && (WORDS.has(w) || SCALES.has(w) || ORDINAL_SCALES.has(w));
}

/** "st", "nd", "rd" or "th" for an ordinal number. */
export function ordinalSuffix(n: number): string {
  const h = n % 100;
  if (h >= 11 && h <= 13) return 'th';
  switch (n % 10) {
    case 1:
      return 'st';
    case 2:
      return 'nd';
    case 3:
      return 'rd';
    default:
      return 'th';
  }
}

/** Integer with thousands separators from 10,000 up; 0-9999 plain (so years and 1200 read naturally). */
export function formatInteger(n: number): string {
  const s = String(n);
  return n < 10_000 ? s : s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** "5551234" → "555-1234"; 10 digits → 555-123-4567; 11 starting with 1 → 1-555-123-4567; otherwise as is. */
export function formatDigitString(d: string): string {
  if (d.length === 7) return `${d.slice(0, 3)}-${d.slice(3)}`;
  if (d.length === 10) return `${d.slice(0, 3)}-${d.slice(3, 6)}-${d.slice(6)}`;
  if (d.length === 11 && d[0] === '1') return `1-${d.slice(1, 4)}-${d.slice(4, 7)}-${d.slice(7)}`;
  return d;
}
