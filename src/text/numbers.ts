// Grammar of spoken English numbers over a word array: cardinals, ordinals, decimals, two-part years, clock times,
// digit runs. Each parser reads words[i..end) and reports how many words it used, so that a formatted unit can span
// exactly the input tokens it replaces. Parsers never look past `end` (a sentence break).

import { TENS, digitValue, numberWord, ordinalScaleValue, scaleValue } from './lexicon.js';

export interface Parsed {
  value: number;
  /** Index after the last word used. */
  end: number;
  /** The last word was an ordinal form ("third", "hundredth"). */
  ordinal: boolean;
}

export interface CardinalParse extends Parsed {
  /** The number began with "a" ("a hundred"). */
  leadingA: boolean;
  /** Groups that closed with a scale word ("two million five" → one group of 2 × 1e6; the 5 is the remainder). */
  groups: { value: number; scale: number }[];
  /** Value after the last scale group (the 5 above). */
  remainder: number;
}

/** 0-99: "seven", "seventeen", "seventy", "seventy seven", "seventy-seven", and their ordinal forms. */
export function parseBelow100(words: readonly string[], i: number, end: number): Parsed | undefined {
  if (i >= end) return undefined;
  const w = numberWord(words[i]);
  if (!w) return undefined;
  if (w.cls === 'tens' && !w.ordinal && i + 1 < end) {
    const o = numberWord(words[i + 1]);
    if (o && o.cls === 'ones' && o.value > 0) return { value: w.value + o.value, end: i + 2, ordinal: o.ordinal };
  }
  return { value: w.value, end: i + 1, ordinal: w.ordinal };
}

/**
 * One group below 1000, or a colloquial hundreds count ("nineteen hundred", "twenty five hundred" → < 10000):
 * [X hundred [and] ] [below 100]. Returns undefined when words[i] starts no number ("hundred" alone, "a" alone).
 */
function parseGroup(words: readonly string[], i: number, end: number): Parsed | undefined {
  let value: number;
  let j: number;
  const leadingA = words[i] === 'a';
  if (leadingA) {
    if (i + 1 >= end || (words[i + 1] !== 'hundred' && words[i + 1] !== 'hundredth')) return undefined;
    value = 1;
    j = i + 1;
  } else {
    const b = parseBelow100(words, i, end);
    if (!b) return undefined;
    if (b.ordinal) return b;
    value = b.value;
    j = b.end;
  }
  // Only 1-9 and 11-99 other than multiples of ten count hundreds ("twenty five hundred"; not "twenty hundred").
  const counts = (value >= 1 && value <= 9) || (value >= 11 && value <= 99 && value % 10 !== 0);
  if (!counts || j >= end) return { value, end: j, ordinal: false };
  if (words[j] === 'hundredth') return { value: value * 100, end: j + 1, ordinal: true };
  if (words[j] !== 'hundred') return { value, end: j, ordinal: false };
  value *= 100;
  j += 1;
  // Optional "[and] 1-99" after hundred, unless it begins another hundreds count ("five hundred six hundred").
  // "two hundred and six thousand" is read as 206,000 (the British reading), not 200 and 6000.
  const hasAnd = words[j] === 'and';
  const r = parseBelow100(words, hasAnd ? j + 1 : j, end);
  if (r && r.value > 0) {
    const next = words[r.end];
    const startsAnother = r.end < end && (next === 'hundred' || next === 'hundredth');
    if (!startsAnother) return { value: value + r.value, end: r.end, ordinal: r.ordinal };
  }
  return { value, end: j, ordinal: false };
}

/**
 * A cardinal or ordinal number: groups each closed by a strictly smaller scale word, then an optional remainder.
 * "two million three hundred thousand and five" → 2300005. "a thousand" → 1000. "hundred" alone → undefined.
 */
export function parseCardinal(words: readonly string[], i: number, end: number): CardinalParse | undefined {
  const groups: { value: number; scale: number }[] = [];
  let total = 0;
  let lastScale = Infinity;
  let j = i;
  let remainder = 0;
  let ordinal = false;
  let any = false;
  for (;;) {
    let g: Parsed | undefined;
    if (words[j] === 'a' && j === i && j + 1 < end && (scaleValue(words[j + 1]) ?? 0) >= 1000) {
      g = { value: 1, end: j + 1, ordinal: false };
    } else if (words[j] === 'and' && any && lastScale !== Infinity && j + 1 < end) {
      // "one thousand and five": only a final 1-99 with no scale after it.
      const r = parseBelow100(words, j + 1, end);
      if (r && r.value > 0 && (r.end >= end || scaleValue(words[r.end]) === undefined) && words[r.end] !== 'hundredth') {
        g = r;
      }
    } else {
      g = parseGroup(words, j, end);
    }
    if (!g) break;
    if (any && (g.value === 0 || g.value >= Math.min(lastScale, 1000))) break; // "two thousand zero", "... 1500"
    if (g.ordinal) {
      total += g.value;
      remainder = g.value;
      j = g.end;
      ordinal = true;
      any = true;
      break;
    }
    const s = g.end < end ? scaleValue(words[g.end]) : undefined;
    const so = g.end < end ? ordinalScaleValue(words[g.end]) : undefined;
    const scale = s ?? so;
    if (scale !== undefined && scale >= 1000 && scale < lastScale && g.value > 0 && g.value < 1000) {
      total += g.value * scale;
      groups.push({ value: g.value, scale });
      lastScale = scale;
      j = g.end + 1;
      any = true;
      if (so !== undefined) {
        ordinal = true;
        break;
      }
      continue;
    }
    total += g.value;
    remainder = g.value;
    j = g.end;
    any = true;
    break;
  }
  if (!any) return undefined;
  return { value: total, end: j, ordinal, leadingA: words[i] === 'a', groups, remainder };
}

/** The fractional digits after "point": "point one four" → "14". At least one digit, else undefined. */
export function parseFraction(words: readonly string[], i: number, end: number): { digits: string; end: number } | undefined {
  if (words[i] !== 'point') return undefined;
  let digits = '';
  let j = i + 1;
  for (; j < end; j++) {
    const d = digitValue(words[j], true);
    if (d === undefined) break;
    digits += String(d);
  }
  return digits ? { digits, end: j } : undefined;
}

/** A run of single spoken digits ("five five five oh one"); "oh" counts as zero except as the first word. */
export function parseDigitRun(words: readonly string[], i: number, end: number): { digits: string; end: number } {
  let digits = '';
  let j = i;
  for (; j < end; j++) {
    const d = digitValue(words[j], j > i);
    if (d === undefined) break;
    // A digit followed by a scale word belongs to a cardinal ("... one two hundred").
    if (j + 1 < end && (scaleValue(words[j + 1]) !== undefined || ordinalScaleValue(words[j + 1]) !== undefined)) break;
    digits += String(d);
  }
  return { digits, end: j };
}

/** "oh five" (1-9 after "oh" or "o"), as in minutes and years: 5. */
function ohDigit(words: readonly string[], i: number, end: number): Parsed | undefined {
  const d = i + 1 < end ? digitValue(words[i + 1], false) : undefined;
  return d !== undefined && d > 0 ? { value: d, end: i + 2, ordinal: false } : undefined;
}

/** Minutes of a clock time: "oh five" → 5, "fifteen", "thirty", "forty five" (0-59). */
export function parseMinutes(words: readonly string[], i: number, end: number): Parsed | undefined {
  if (i >= end) return undefined;
  if (words[i] === 'oh' || words[i] === 'o') return ohDigit(words, i, end);
  const b = parseBelow100(words, i, end);
  if (!b || b.ordinal || b.value < 10 || b.value > 59) return undefined;
  return b;
}

/**
 * The second half of a two-part year: "ninety nine", "twelve", "twenty", "oh five". `value` is 0-99.
 * Never a plain single digit ("nineteen five" is not a year).
 */
export function parseYearTail(words: readonly string[], i: number, end: number): Parsed | undefined {
  if (i >= end) return undefined;
  if (words[i] === 'oh' || words[i] === 'o') return ohDigit(words, i, end);
  const b = parseBelow100(words, i, end);
  if (!b || b.ordinal || b.value < 10) return undefined;
  return b;
}

/** A two-part year "nineteen ninety nine" (first part 10-99, second 10-99 or "oh" digit), not followed by a scale. */
export function parseTwoPartYear(words: readonly string[], i: number, end: number): Parsed | undefined {
  const head = parseBelow100(words, i, end);
  if (!head || head.ordinal || head.value < 10) return undefined;
  const tail = parseYearTail(words, head.end, end);
  if (!tail) return undefined;
  const after = words[tail.end];
  if (tail.end < end && (scaleValue(after) !== undefined || ordinalScaleValue(after) !== undefined)) return undefined;
  return { value: head.value * 100 + tail.value, end: tail.end, ordinal: false };
}

/** "nineteen eighties" → 1980 (a decade: 10-20 then a plural tens word "twenties" ... "nineties"). */
export function parseDecade(words: readonly string[], i: number, end: number): Parsed | undefined {
  const head = parseBelow100(words, i, end);
  if (!head || head.ordinal || head.value < 10 || head.value > 20 || head.end >= end) return undefined;
  const tens = TENS.indexOf(words[head.end]!.replace(/ies$/, 'y'));
  if (tens < 2 || !words[head.end]!.endsWith('ies')) return undefined;
  return { value: head.value * 100 + tens * 10, end: head.end + 1, ordinal: false };
}
