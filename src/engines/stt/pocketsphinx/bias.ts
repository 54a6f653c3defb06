// Context biasing for pocketsphinx (issue 14): a request's terms and context text become
//   - dictionary words for those the dictionary lacks, pronounced by espeak-ng (g2p.ts), and
//   - a small bigram language model over the terms and the text, interpolated with the model's own for that request
//     or session only (the decoder keeps its own search beside the biased one; addon.cc setBias).
// Recognised terms are then written as given ("TensorFlow", not "tensorflow").
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { RecognitionContext, Token } from '../interface.js';
import { pronounce, spelledLetters } from './g2p.js';
import type { DecoderBias } from './messages.js';

/**
 * Share of the context model in the interpolation. On the tuning half of the real recordings whose words the
 * dictionary lacks (bench wer), term recall was 69.6 % at 0.02, 0.1 and 0.25 alike (what is missed is missed
 * acoustically) and WER 65.3 / 65.1 / 64.4 %; the middle value keeps a one-word context that is a common word
 * from being heard everywhere.
 */
export const DEFAULT_BIAS_WEIGHT = 0.1;
/** A term counts this many times as often as a word of the context text. */
const TERM_COUNT = 4;
/** Absolute discount of the context bigrams. */
const DISCOUNT = 0.5;
/** Most distinct words taken into the context model (the spec's context limit is 8,000 tokens). */
const MAX_WORDS = 10_000;

const ACRONYM = /^[A-Z]{2,6}$/;

export interface BiasLog {
  (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>): void;
}

export interface Bias {
  decoder: DecoderBias;
  /** Lower-case word sequences of the terms → the words as the term writes them. */
  casing: TermCasing;
}

/** Words of a text as the dictionary spells them: lower case, letters with inner apostrophes. */
export function dictionaryWords(text: string): string[] {
  return (text.match(/\p{L}[\p{L}']*/gu) ?? []).map((w) => w.toLowerCase().replace(/'+$/, ''));
}

export class BiasBuilder {
  private dictionary: Promise<Set<string>> | undefined;

  constructor(
    private readonly dictPath: string,
    private readonly log?: BiasLog,
    private readonly weight = DEFAULT_BIAS_WEIGHT,
  ) {}

  /** The decoder bias and output casing for a context; undefined when it holds no usable word. */
  async build(context: RecognitionContext): Promise<Bias | undefined> {
    // Each term's words as written (for espeak-ng and the output) and as the dictionary spells them.
    const terms = context.terms
      .map((t) => t.match(/\p{L}[\p{L}']*/gu) ?? [])
      .filter((written) => written.length > 0)
      .map((written) => ({ written, lower: written.map((w) => w.toLowerCase()) }));
    const skippedTerms = context.terms.filter((t) => !/\p{L}/u.test(t));
    const sentences: string[][] = [];
    for (const line of context.text.split(/[.!?;\n]+/)) {
      const words = dictionaryWords(line);
      if (words.length > 0) sentences.push(words);
    }
    if (sentences.length === 0 && terms.length === 0) return undefined;

    const dictionary = await this.loadDictionary();
    // Original spellings of unknown words: espeak-ng reads "PBX" as letters and "pbx" as a word.
    const unknown = new Map<string, string>();
    for (const t of terms) for (let i = 0; i < t.lower.length; i++) if (!dictionary.has(t.lower[i]!)) unknown.set(t.lower[i]!, t.written[i]!);
    for (const s of sentences) for (const w of s) if (!dictionary.has(w) && !unknown.has(w)) unknown.set(w, w);
    const phones = unknown.size > 0 ? await this.pronounceAll([...unknown.values()]) : new Map<string, string>();
    const words: [string, string][] = [];
    const unpronounceable = new Set<string>();
    for (const [lower, spelled] of unknown) {
      const p = phones.get(spelled);
      if (!p) {
        unpronounceable.add(lower);
        continue;
      }
      words.push([lower, p]);
      // Acronyms (2 to 6 capitals) are often said letter by letter ("IAX" → "I A X"), whatever espeak-ng made of
      // them: a second pronunciation, pocketsphinx's alternate entry "word(2)" after the word itself.
      const letters = ACRONYM.test(spelled) ? spelledLetters(spelled) : undefined;
      if (letters && letters !== p) words.push([`${lower}(2)`, letters]);
    }
    if (unpronounceable.size > 0 || skippedTerms.length > 0) {
      this.log?.('info', 'context words without a pronunciation were left out', {
        words: [...unpronounceable, ...skippedTerms].slice(0, 20),
        count: unpronounceable.size + skippedTerms.length,
      });
    }
    const usableTerms = terms.filter((t) => t.lower.every((w) => !unpronounceable.has(w)));
    const arpa = contextLanguageModel(
      usableTerms.map((t) => t.lower),
      sentences.map((s) => s.filter((w) => !unpronounceable.has(w))).filter((s) => s.length > 0),
    );
    if (arpa === undefined) return undefined;
    const key = createHash('sha256')
      .update(JSON.stringify([this.weight, words, arpa]))
      .digest('hex')
      .slice(0, 32);
    return {
      decoder: { key, words, arpa, weight: this.weight },
      casing: new TermCasing(usableTerms.map((t) => t.written)),
    };
  }

  private async pronounceAll(words: string[]): Promise<Map<string, string>> {
    try {
      return await pronounce(words);
    } catch (err) {
      this.log?.('warn', 'espeak-ng could not pronounce context words; they are left out', { error: (err as Error).message });
      return new Map();
    }
  }

  private loadDictionary(): Promise<Set<string>> {
    this.dictionary ??= readFile(this.dictPath, 'utf8').then((text) => {
      const words = new Set<string>();
      for (const line of text.split('\n')) {
        const space = line.search(/\s/);
        if (space > 0) words.add(line.slice(0, space).replace(/\(\d+\)$/, ''));
      }
      return words;
    });
    return this.dictionary;
  }
}

const log10 = (x: number) => Math.log10(x).toFixed(4);

/**
 * ARPA text of a bigram model over the term sequences (each counted TERM_COUNT times) and the context sentences:
 * absolute discounting, the held-back mass going to the unigrams. Undefined when there is no word.
 */
export function contextLanguageModel(terms: string[][], sentences: string[][]): string | undefined {
  const unigrams = new Map<string, number>();
  const bigrams = new Map<string, Map<string, number>>();
  const add = (seq: string[], count: number) => {
    const padded = ['<s>', ...seq, '</s>'];
    for (let i = 0; i < padded.length; i++) {
      const w = padded[i]!;
      if (!unigrams.has(w) && unigrams.size >= MAX_WORDS) return;
      unigrams.set(w, (unigrams.get(w) ?? 0) + count);
      if (i > 0) {
        const h = padded[i - 1]!;
        const next = bigrams.get(h) ?? new Map<string, number>();
        next.set(w, (next.get(w) ?? 0) + count);
        bigrams.set(h, next);
      }
    }
  };
  for (const t of terms) add(t, TERM_COUNT);
  for (const s of sentences) add(s, 1);
  if (unigrams.size <= 2) return undefined;
  // <s> is never predicted; every other word by its share of the counts.
  let total = 0;
  for (const [w, c] of unigrams) if (w !== '<s>') total += c;
  const uni = new Map<string, number>();
  for (const [w, c] of unigrams) uni.set(w, w === '<s>' ? 0 : c / total);
  const lines: string[] = [];
  let nBigrams = 0;
  const bigramLines: string[] = [];
  const backoff = new Map<string, number>();
  for (const [h, next] of bigrams) {
    let hc = 0;
    for (const c of next.values()) hc += c;
    let seenUni = 0;
    for (const [w, c] of next) {
      bigramLines.push(`${log10((c - DISCOUNT) / hc)} ${h} ${w}`);
      seenUni += uni.get(w)!;
      nBigrams++;
    }
    const reserved = (DISCOUNT * next.size) / hc;
    backoff.set(h, seenUni < 1 ? reserved / (1 - seenUni) : reserved);
  }
  lines.push('\\data\\', `ngram 1=${unigrams.size}`, `ngram 2=${nBigrams}`, '', '\\1-grams:');
  for (const w of unigrams.keys()) {
    const p = w === '<s>' ? '-99.0000' : log10(uni.get(w)!);
    const b = backoff.get(w);
    lines.push(b === undefined ? `${p} ${w}` : `${p} ${w} ${log10(b)}`);
  }
  lines.push('', '\\2-grams:', ...bigramLines, '', '\\end\\', '');
  return lines.join('\n');
}

/** Writes recognised terms as the request gave them: "tensorflow" → "TensorFlow", "new york" → "New", "York". */
export class TermCasing {
  /** First word (lower case) → the terms starting with it, longest first. */
  private readonly byFirst = new Map<string, string[][]>();

  constructor(terms: string[][]) {
    for (const t of terms) {
      if (t.length === 0) continue;
      const first = t[0]!.toLowerCase();
      const list = this.byFirst.get(first) ?? [];
      list.push(t);
      list.sort((a, b) => b.length - a.length);
      this.byFirst.set(first, list);
    }
  }

  get size(): number {
    return this.byFirst.size;
  }

  apply(tokens: Token[]): Token[] {
    if (this.byFirst.size === 0) return tokens;
    const out = tokens.slice();
    for (let i = 0; i < out.length; i++) {
      const candidates = this.byFirst.get(out[i]!.text.toLowerCase());
      if (!candidates) continue;
      const term = candidates.find((t) => t.every((w, k) => out[i + k]?.text.toLowerCase() === w.toLowerCase()));
      if (!term) continue;
      term.forEach((w, k) => (out[i + k] = { ...out[i + k]!, text: w }));
      i += term.length - 1;
    }
    return out;
  }
}
