// Transcript formatting: the recognizer's lower-case word tokens → written-form tokens with sentence capitals,
// punctuation and numbers ("my flight leaves at seven thirty" → "My flight leaves at 7:30."). Pure, synchronous,
// no I/O. Rules and thresholds: README.md in this folder.

import { inverseNormalize } from './itn.js';
import { COMMA_PAUSE_MS, HEAD_WORDS, SENTENCE_PAUSE_MS, canEndSentence, canTakeComma, capitalize, isQuestion } from './sentences.js';
import type { FormatOptions, Span, WordToken } from './types.js';

export type { FormatOptions, WordToken } from './types.js';
export { SENTENCE_PAUSE_MS, COMMA_PAUSE_MS } from './sentences.js';
export { normalizeForScoring } from './normalize.js';

/** Words of earlier utterances kept as left context for the next one ("at" | "seven thirty"). */
const CONTEXT_WORDS = 3;

export interface FormatCallOptions {
  /** A pause or endpoint closed this utterance: end the open sentence with "." or "?" (see README.md). */
  endsUtterance?: boolean;
  /**
   * Nothing follows this utterance (end of file or session): the sentence is closed even after a word that normally
   * continues one ("... and the"). Implies endsUtterance.
   */
  endsStream?: boolean;
}

/** Whether `language` is formatted: English, or unspecified (the default). */
export function isEnglish(language: string | undefined): boolean {
  return language === undefined || language === '' || /^en(?:$|[-_])/i.test(language);
}

/** Token texts; an utterance written entirely in capitals (some models) is lower-cased first. */
function foldCase(tokens: readonly WordToken[]): string[] {
  const texts = tokens.map((t) => t.text.trim());
  const allCaps = texts.every((t) => t === t.toUpperCase()) && texts.some((t) => /\p{Lu}.*\p{Lu}/u.test(t));
  return allCaps ? texts.map((t) => t.toLowerCase()) : texts;
}

/** Close a sentence on `text`: "." or "?", unless it already ends in a stop ("Mr."). */
function endSentence(text: string, question: boolean): string {
  if (/[.?!]$/.test(text)) return text;
  return text.replace(/,$/, '') + (question ? '?' : '.');
}

/** Formatting state carried across the utterances of one live session (sentence start, question test, context). */
export class TranscriptFormatter {
  private readonly english: boolean;
  private atSentenceStart = true;
  /** Lower-case opening words of the open sentence, for the question test when it closes. */
  private head: string[] = [];
  private context: string[] = [];

  constructor(options: FormatOptions = {}) {
    this.english = isEnglish(options.language);
  }

  /**
   * Format one utterance's (or a whole file's) final tokens, in time order. Returns new tokens: a token that replaces
   * several words spans them (start of the first, end of the last, the lowest confidence of them). Non-English
   * input comes back unchanged (copied).
   */
  format(tokens: readonly WordToken[], opts: FormatCallOptions = {}): WordToken[] {
    if (!this.english) return tokens.map((t) => ({ ...t }));
    if (tokens.length === 0) return [];
    const texts = foldCase(tokens);
    const words = texts.map((t) => t.toLowerCase());

    // Stretches between long pauses: inverse normalisation never joins words across a sentence pause.
    const spans: Span[] = [];
    const pauseAfter = new Set<Span>();
    let segStart = 0;
    for (let k = 1; k <= tokens.length; k++) {
      if (k < tokens.length && tokens[k]!.start_ms - tokens[k - 1]!.end_ms < SENTENCE_PAUSE_MS) continue;
      const seg = inverseNormalize(words, texts, this.context, segStart, k);
      spans.push(...seg);
      pauseAfter.add(seg[seg.length - 1]!);
      segStart = k;
    }

    const out: WordToken[] = [];
    const endsUtterance = opts.endsUtterance === true || opts.endsStream === true;
    for (let k = 0; k < spans.length; k++) {
      const s = spans[k]!;
      const next = spans[k + 1];
      let text = s.text;
      if (this.atSentenceStart) {
        text = capitalize(text);
        this.head = [];
        this.atSentenceStart = false;
      }
      for (let j = s.start; j < s.end && this.head.length < HEAD_WORDS; j++) this.head.push(words[j]!);
      const lastWord = words[s.end - 1]!;
      if (next ? pauseAfter.has(s) : endsUtterance) {
        if ((!next && opts.endsStream) || canEndSentence(lastWord)) {
          text = endSentence(text, isQuestion(this.head));
          this.atSentenceStart = true;
        }
      } else if (next) {
        const gap = tokens[next.start]!.start_ms - tokens[s.end - 1]!.end_ms;
        const joined = s.kind === 'title' || s.kind === 'month' || next.kind === 'meridiem';
        if (gap >= COMMA_PAUSE_MS && !joined && canTakeComma(lastWord) && !/[.,;:?!]$/.test(text)) text += ',';
      }
      let confidence = Infinity;
      for (let j = s.start; j < s.end; j++) confidence = Math.min(confidence, tokens[j]!.confidence);
      out.push({ text, start_ms: tokens[s.start]!.start_ms, end_ms: tokens[s.end - 1]!.end_ms, confidence });
    }
    this.context = [...this.context, ...words].slice(-CONTEXT_WORDS);
    return out;
  }
}

/**
 * Format a whole transcript (an async file). The same as one TranscriptFormatter fed the file's utterances (split at
 * pauses of SENTENCE_PAUSE_MS or more), each ending one, and the last ending the stream; done in one pass.
 */
export function formatTranscript(tokens: readonly WordToken[], options: FormatOptions = {}): WordToken[] {
  return new TranscriptFormatter(options).format(tokens, { endsStream: true });
}
