// Inverse text normalisation (English): spoken-form words → written-form units (spans), each span covering the exact
// input words it replaces. Numbers, money, percentages, times, dates, years, digit strings, titles and proper nouns.
// The rules, and why each is conservative where it is, are listed in README.md in this folder.

import { digitValue, formatDigitString, formatInteger, isNumberish, ordinalSuffix, scaleValue } from './lexicon.js';
import { parseBelow100, parseCardinal, parseDecade, parseDigitRun, parseFraction, parseMinutes, parseTwoPartYear } from './numbers.js';
import { PHRASE_STARTERS, properPhraseAt, wordCase } from './proper-nouns.js';
import { canEndSentence, canTakeComma, capitalize } from './sentences.js';
import type { Span } from './types.js';
import {
  AMBIGUOUS_MONTHS,
  CENTS,
  CURRENCIES,
  MERIDIEM,
  MISSES_CONTEXT,
  MONTH_CONTEXT,
  MONTH_SET,
  PROPER_NOUNS,
  TIME_CONTEXT,
  TITLES,
  UNITS,
  WEAK_TITLES,
  YEAR_CONTEXT,
} from './vocabulary.js';

/** Words other than number words that can start a multi-word rule or a title. */
const STARTERS: ReadonlySet<string> = new Set(['a', 'misses', ...TITLES.keys(), ...WEAK_TITLES.keys(), ...MONTH_SET, ...PHRASE_STARTERS]);
const DAY_MONTH_CONTEXT: ReadonlySet<string> = new Set([...MONTH_CONTEXT, 'on', 'is', 'was']);

/** Inverse-normalise one sentence-free stretch of words. See `inverseNormalize`. */
class Itn {
  readonly out: Span[] = [];

  constructor(
    private readonly words: readonly string[],
    private readonly texts: readonly string[],
    private readonly before: readonly string[],
    private readonly start: number,
    private readonly end: number,
  ) {}

  run(): Span[] {
    let i = this.start;
    while (i < this.end) {
      const w = this.words[i]!;
      if (!STARTERS.has(w) && !isNumberish(w)) {
        this.push(this.word(i)); // most words: no rule starts with them
        i += 1;
        continue;
      }
      const spans = this.title(i) ?? this.number(i) ?? this.month(i) ?? this.phrase(i) ?? [this.word(i)];
      for (const s of spans) this.push(s);
      i = spans[spans.length - 1]!.end;
    }
    return this.out;
  }

  /** The word at index k, reaching into the words before this call when k < 0. */
  private at(k: number): string | undefined {
    return k >= 0 ? this.words[k] : this.before[this.before.length + k];
  }

  private push(s: Span): void {
    const prev = this.out[this.out.length - 1];
    // The name after a title ("Mr. Smith"), but not "Mr. and Mrs. Smith".
    const name = s.kind === 'word' && /^\p{L}/u.test(s.text) && canTakeComma(s.text.toLowerCase()) && canEndSentence(s.text.toLowerCase());
    if (prev?.kind === 'title' && name) s.text = capitalize(s.text);
    // "March 3rd, 2024"
    const yearLike = s.kind === 'year' || (s.kind === 'number' && s.value !== undefined && s.value >= 1000 && s.value < 3000);
    if (prev?.kind === 'day' && yearLike) prev.text += ',';
    this.out.push(s);
  }

  private isMonthAt(k: number): boolean {
    const w = this.at(k);
    if (w === undefined || !MONTH_SET.has(w)) return false;
    if (!AMBIGUOUS_MONTHS.has(w)) return true;
    const p = this.at(k - 1);
    if (p !== undefined) return DAY_MONTH_CONTEXT.has(p);
    return k + 1 < this.end && isNumberish(this.words[k + 1]); // "May first ..." opening the transcript
  }

  private title(i: number): Span[] | undefined {
    const w = this.words[i]!;
    if (!TITLES.has(w) && !WEAK_TITLES.has(w) && w !== 'misses') return undefined;
    const next = this.words[i + 1];
    const hasNext = i + 1 < this.end && next !== undefined && /^\p{L}/u.test(next) && !isNumberish(next);
    let text = TITLES.get(w);
    if (text !== undefined && !hasNext && !w.endsWith('.')) text = undefined; // "thank you mister"
    if (text === undefined && hasNext && PROPER_NOUNS.has(next)) text = WEAK_TITLES.get(w);
    if (text === undefined && w === 'misses' && hasNext && (i === this.start || MISSES_CONTEXT.has(this.at(i - 1)!))) {
      text = 'Mrs.';
    }
    return text === undefined ? undefined : [{ start: i, end: i + 1, text, kind: 'title' }];
  }

  private month(i: number): Span[] | undefined {
    if (!this.isMonthAt(i)) return undefined;
    return [{ start: i, end: i + 1, text: capitalize(this.texts[i]!), kind: 'month' }];
  }

  private phrase(i: number): Span[] | undefined {
    const n = properPhraseAt(this.words, i, this.end);
    if (n === 0) return undefined;
    const spans: Span[] = [];
    for (let k = i; k < i + n; k++) spans.push({ start: k, end: k + 1, text: capitalize(this.texts[k]!), kind: 'word' });
    return spans;
  }

  private word(i: number): Span {
    return { start: i, end: i + 1, text: wordCase(this.words[i]!, this.texts[i]!), kind: 'word' };
  }

  private meridiem(k: number): Span | undefined {
    for (const m of MERIDIEM) {
      if (k + m.words.length <= this.end && m.words.every((w, n) => this.words[k + n] === w)) {
        return { start: k, end: k + m.words.length, text: m.text, kind: 'meridiem' };
      }
    }
    return undefined;
  }

  private number(i: number): Span[] | undefined {
    const w = this.words[i]!;
    if (!isNumberish(w) && !(w === 'a' && scaleValue(this.words[i + 1]) !== undefined)) return undefined;
    if (digitValue(w, false) !== undefined) {
      const run = parseDigitRun(this.words, i, this.end);
      if (run.digits.length >= 4) return [{ start: i, end: run.end, text: formatDigitString(run.digits), kind: 'digits' }];
    }
    return this.time(i) ?? this.year(i) ?? this.quantity(i);
  }

  private time(i: number): Span[] | undefined {
    const hour = parseBelow100(this.words, i, this.end);
    if (!hour || hour.ordinal) return undefined;
    const h = hour.value;
    const prev = this.at(i - 1);
    const last = this.out[this.out.length - 1];
    const afterTime = this.out[this.out.length - 2]?.kind;
    const context =
      (prev !== undefined && TIME_CONTEXT.has(prev)) ||
      (last?.end === i && ['to', 'and', 'or', 'through'].includes(prev!) && (afterTime === 'time' || afterTime === 'meridiem'));
    if (this.words[hour.end] === "o'clock" && hour.end < this.end && h >= 1 && h <= 12) {
      const spans: Span[] = [
        { start: i, end: hour.end, text: String(h), kind: 'time', value: h },
        { start: hour.end, end: hour.end + 1, text: this.texts[hour.end]!, kind: 'word' },
      ];
      const m = this.meridiem(hour.end + 1);
      return m ? [...spans, m] : spans;
    }
    const minutes = parseMinutes(this.words, hour.end, this.end);
    const after = minutes ? minutes.end : hour.end;
    const m = this.meridiem(after);
    const text = minutes ? `${h}:${String(minutes.value).padStart(2, '0')}` : String(h);
    const span: Span = { start: i, end: after, text, kind: 'time', value: h };
    if (m && h >= 1 && h <= 12) return [span, m];
    if (!minutes) return undefined;
    // Without a meridiem: "at seven thirty", "until eleven fifteen"; a 24-hour time only after "at".
    if (context && ((h >= 1 && h <= 12) || (h >= 13 && h <= 23 && prev === 'at'))) return [span];
    // Without context a clock reading is still likelier than two numbers ("the seven thirty train"), unless it is
    // part of a run of numbers ("five ten fifteen") or a quantity ("two fifty dollars").
    const next = after < this.end ? this.words[after] : undefined;
    const quantity = (w: string | undefined): boolean =>
      w !== undefined && (isNumberish(w) || w === 'point' || w === 'percent' || CURRENCIES.has(w) || CENTS.has(w) || UNITS.has(w));
    const notTime = prev !== undefined && (isNumberish(prev) || prev === 'point' || YEAR_CONTEXT.has(prev)); // "the year eleven fifty"
    const ohMinutes = this.words[hour.end] === 'oh' || this.words[hour.end] === 'o'; // "room four oh four"
    if (h >= 1 && h <= 12 && !ohMinutes && !quantity(next) && !notTime) return [span];
    return undefined;
  }

  private year(i: number): Span[] | undefined {
    const decade = parseDecade(this.words, i, this.end); // "the nineteen eighties" → 1980s
    if (decade) return [{ start: i, end: decade.end, text: `${decade.value}s`, kind: 'year', value: decade.value }];
    const y = parseTwoPartYear(this.words, i, this.end);
    if (!y) return undefined;
    const next = this.words[y.end];
    if (y.end < this.end && next !== undefined && (CURRENCIES.has(next) || CENTS.has(next) || next === 'percent' || UNITS.has(next))) {
      return undefined;
    }
    const head = Math.floor(y.value / 100);
    const prev = this.at(i - 1);
    const last = this.out[this.out.length - 1];
    const context = (prev !== undefined && YEAR_CONTEXT.has(prev)) || last?.kind === 'month' || last?.kind === 'day';
    if (!((head >= 17 && head <= 20) || (head >= 11 && head <= 16 && context))) return undefined;
    return [{ start: i, end: y.end, text: String(y.value), kind: 'year', value: y.value }];
  }

  private quantity(i: number): Span[] | undefined {
    const { words, end } = this;
    const c = parseCardinal(words, i, end);
    if (!c) return undefined;
    if (c.ordinal) return this.ordinal(i, c.value, c.end, c.leadingA);
    let frac = parseFraction(words, c.end, end);
    if (frac && words[i] === 'one' && c.end === i + 1 && this.at(i - 1) === 'at') {
      // "at one point two things happened" is the idiom, unless a unit follows ("at one point two percent").
      const w = words[frac.end];
      if (!(w !== undefined && (w === 'percent' || CURRENCIES.has(w) || UNITS.has(w) || scaleValue(w) !== undefined))) frac = undefined;
    }
    let amount = frac ? `${formatInteger(c.value)}.${frac.digits}` : formatInteger(c.value);
    let after = frac ? frac.end : c.end;
    // "five million" → "5" "million"; "three point five million" → "3.5" "million".
    let scaleAt = -1;
    if (!frac && c.groups.length === 1 && c.groups[0]!.scale >= 1e6 && c.remainder === 0) {
      scaleAt = c.end - 1;
      amount = formatInteger(c.groups[0]!.value);
    } else if (frac && c.groups.length === 0 && (scaleValue(words[after]) ?? 0) >= 1e6 && after < end) {
      scaleAt = after;
      after += 1;
    }
    const numEnd = scaleAt >= 0 ? scaleAt : after;
    const next = after < end ? words[after] : undefined;
    const currency = next === undefined ? undefined : CURRENCIES.get(next);
    if (currency) {
      if (scaleAt >= 0) {
        return [
          { start: i, end: numEnd, text: `${currency.symbol}${amount}`, kind: 'money' },
          { start: scaleAt, end: after + 1, text: this.texts[scaleAt]!, kind: 'word' },
        ];
      }
      const cents = frac ? undefined : this.cents(after + 1);
      const text = cents ? `${currency.symbol}${amount}.${String(cents.value).padStart(2, '0')}` : `${currency.symbol}${amount}`;
      return [{ start: i, end: cents ? cents.end : after + 1, text, kind: 'money' }];
    }
    if (scaleAt >= 0) {
      if (c.leadingA) return undefined; // "a million" stays words
      return [
        { start: i, end: numEnd, text: amount, kind: frac ? 'decimal' : 'number' },
        { start: scaleAt, end: after, text: this.texts[scaleAt]!, kind: 'word' },
      ];
    }
    if (next !== undefined && CENTS.has(next) && !frac && c.value > 0) {
      return [{ start: i, end: after + 1, text: `${amount}¢`, kind: 'money' }];
    }
    if (next === 'percent') return [{ start: i, end: after + 1, text: `${amount}%`, kind: 'percent' }];
    if (next === 'per' && words[after + 1] === 'cent' && after + 1 < end) {
      return [{ start: i, end: after + 2, text: `${amount}%`, kind: 'percent' }];
    }
    if (frac) return [{ start: i, end: after, text: amount, kind: 'decimal' }];
    if (c.leadingA && c.end - i === 2) return undefined; // "a hundred", "a thousand" stay words
    if (c.value >= 1 && c.value <= 31 && c.groups.length === 0 && this.isMonthAt(i - 1)) {
      return [{ start: i, end: after, text: amount, kind: 'day', value: c.value }]; // "June 5"
    }
    if (c.value < 10 && !(next !== undefined && UNITS.has(next)) && !this.besideNumber(i, after)) return undefined; // "one" stays
    return [{ start: i, end: after, text: amount, kind: 'number', value: c.value }];
  }

  /** A number ≥ 10 in digits is right before words[i] or starts at words[after]: "five 10 15" reads "5 10 15". */
  private besideNumber(i: number, after: number): boolean {
    const prev = this.out[this.out.length - 1];
    if (prev?.kind === 'number' && prev.end === i) return true;
    const n = parseCardinal(this.words, after, this.end);
    return n !== undefined && !n.ordinal && !n.leadingA && n.value >= 10;
  }

  /** "and fifty cents" / "fifty cents" after a currency word: 1-99 cents. */
  private cents(k: number): { value: number; end: number } | undefined {
    const j = this.words[k] === 'and' ? k + 1 : k;
    const c = parseCardinal(this.words, j, this.end);
    if (!c || c.ordinal || c.value < 1 || c.value > 99 || c.end >= this.end || !CENTS.has(this.words[c.end]!)) return undefined;
    return { value: c.value, end: c.end + 1 };
  }

  private ordinal(i: number, value: number, end: number, leadingA: boolean): Span[] | undefined {
    if (leadingA) return undefined;
    const prev = this.at(i - 1);
    const dateContext =
      this.isMonthAt(i - 1) ||
      (prev === 'the' && this.isMonthAt(i - 2)) ||
      (this.words[end] === 'of' && end + 1 < this.end && MONTH_SET.has(this.words[end + 1]!));
    const text = `${value}${ordinalSuffix(value)}`;
    if (dateContext && value >= 1 && value <= 31) return [{ start: i, end, text, kind: 'day', value }];
    // "one third", "two fifths" are fractions, and "first" ... "tenth" stay words.
    if (value < 11 || (prev !== undefined && (isNumberish(prev) || prev === 'a'))) return undefined;
    return [{ start: i, end, text, kind: 'ordinal', value }];
  }
}

/**
 * Inverse-normalise words[start..end) (lower-case `words` for matching, original `texts` for output) into spans that
 * cover those words in order. `before` holds a few lower-case words that preceded words[0] (earlier utterances) for
 * left context ("at" | "seven thirty").
 */
export function inverseNormalize(words: readonly string[], texts: readonly string[], before: readonly string[], start = 0, end = words.length): Span[] {
  return new Itn(words, texts, before, start, end).run();
}
