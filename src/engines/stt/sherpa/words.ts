// sherpa-onnx results (sub-word tokens, each with its start time) → the words the API returns, each spanning from its
// first piece to the next word's start (or the end of the segment). Pieces that begin a word carry a word-start mark:
// SentencePiece's "▁", or a leading space (Whisper, byte-level BPE); CJK characters are words of their own.
import type { Token } from '../interface.js';

export interface OfflineResult {
  text: string;
  tokens: string[];
  /** Start of each token, seconds from the segment's start; empty when the model gives none (Whisper). */
  timestamps: number[];
}

const CJK = /^[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]$/u;

/** Words of one decoded segment that started at `startMs` and lasted `durationMs`. */
export function resultWords(result: OfflineResult, startMs: number, durationMs: number): Token[] {
  const endMs = startMs + durationMs;
  if (result.tokens.length === 0 || result.timestamps.length !== result.tokens.length) return evenlySpread(result.text, startMs, endMs);
  const words: { text: string; start: number }[] = [];
  result.tokens.forEach((piece, i) => {
    const at = startMs + Math.round(result.timestamps[i]! * 1000);
    const starts = piece.startsWith('▁') || piece.startsWith(' ') || CJK.test(piece) || words.length === 0 || CJK.test(words.at(-1)!.text.slice(-1));
    const text = piece.replace(/^[▁ ]+/, '');
    if (starts && text) words.push({ text, start: at });
    else if (text) words.at(-1)!.text += text;
  });
  return words.map((w, i) => {
    const start = Math.min(Math.max(w.start, startMs), endMs - 1);
    const next = i + 1 < words.length ? words[i + 1]!.start : endMs;
    return { text: w.text, start_ms: start, end_ms: Math.max(start + 1, Math.min(next, endMs)), confidence: 1 };
  });
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
