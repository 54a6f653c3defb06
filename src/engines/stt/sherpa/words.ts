// sherpa-onnx results (sub-word tokens, each with its start time) → the words the API returns, each spanning from its
// first piece to the next word's start (or the end of the segment). Pieces that begin a word carry a word-start mark:
// SentencePiece's "▁", or a leading space (Whisper, byte-level BPE); CJK characters are words of their own. A word's
// confidence is the geometric mean of its pieces' probabilities when the model scores them (streaming transducers).
import type { Token } from '../interface.js';

export interface OfflineResult {
  text: string;
  tokens: string[];
  /** Start of each token, seconds from the segment's start; empty when the model gives none (Whisper). */
  timestamps: number[];
  /** Log-probability of each token (sherpa-onnx's ys_probs); absent or empty when the model gives none. */
  ys_probs?: number[];
}

/** How long the last piece of an utterance lasts at most, ms: its word ends then, not at the pause after it. */
const LAST_PIECE_MS = 200;
/**
 * Scored words less likely than this are dropped: a streaming transducer fed a stretch of silence names it "AND"
 * at 2–6 % (the real words of the tuning recordings score well above; commit e8d4f8b).
 */
const MIN_CONFIDENCE = 0.1;

const CJK = /^[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]$/u;

/**
 * Words of one decoded segment that started at `startMs` and lasted `durationMs`. `lowerCase`: the model writes in
 * capitals only (older English models): its words come out as the built-in engine's, for the formatter to write.
 */
export function resultWords(result: OfflineResult, startMs: number, durationMs: number, lowerCase = false): Token[] {
  const words = timedWords(result, startMs, durationMs);
  return lowerCase ? words.map((w) => ({ ...w, text: w.text.toLowerCase() })) : words;
}

function timedWords(result: OfflineResult, startMs: number, durationMs: number): Token[] {
  const endMs = startMs + durationMs;
  if (result.tokens.length === 0 || result.timestamps.length !== result.tokens.length) return evenlySpread(result.text, startMs, endMs);
  const scored = result.ys_probs?.length === result.tokens.length;
  const words: { text: string; start: number; last: number; logProb: number; pieces: number }[] = [];
  // A bare "▁" is a piece of its own in some vocabularies (BPE-500 zipformers): the next piece starts a word.
  let boundary = false;
  result.tokens.forEach((piece, i) => {
    const at = startMs + Math.round(result.timestamps[i]! * 1000);
    const logProb = scored ? result.ys_probs![i]! : 0;
    const marked = boundary || piece.startsWith('▁') || piece.startsWith(' ');
    const starts = marked || CJK.test(piece) || words.length === 0 || CJK.test(words.at(-1)!.text.slice(-1));
    const text = piece.replace(/^[▁ ]+/, '');
    boundary = !text && marked;
    if (!text) return;
    if (starts) words.push({ text, start: at, last: at, logProb, pieces: 1 });
    else
      Object.assign(words.at(-1)!, { text: words.at(-1)!.text + text, last: at, logProb: words.at(-1)!.logProb + logProb, pieces: words.at(-1)!.pieces + 1 });
  });
  return words
    .map((w, i) => {
      const start = Math.min(Math.max(w.start, startMs), endMs - 1);
      const next = i + 1 < words.length ? words[i + 1]!.start : Math.min(endMs, w.last + LAST_PIECE_MS);
      const confidence = scored ? Math.min(1, Math.exp(w.logProb / w.pieces)) : 1;
      return { text: w.text, start_ms: start, end_ms: Math.max(start + 1, Math.min(next, endMs)), confidence };
    })
    .filter((w) => w.confidence >= MIN_CONFIDENCE);
}

/** A model without token times: the segment's time shared among its words by their length. */
function evenlySpread(text: string, startMs: number, endMs: number): Token[] {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const chars = words.reduce((n, w) => n + w.length, 0);
  let at = startMs;
  return words.map((w) => {
    const start = at;
    at = Math.min(endMs, at + ((endMs - startMs) * w.length) / chars);
    return { text: w, start_ms: Math.round(start), end_ms: Math.max(Math.round(start) + 1, Math.round(at)), confidence: 1 };
  });
}
