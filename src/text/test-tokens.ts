// Test helper of src/text: word tokens from a text with pause marks, and their text back.
import { formatTranscript } from './format.js';
import type { WordToken } from './types.js';

/**
 * Tokens for `text`, 250 ms words 50 ms apart, starting at `startMs`. Pause marks between words: "|" a 900 ms
 * sentence pause, "," a 500 ms comma pause. Confidence 0.9 unless `confidence` gives one per word.
 */
export function tokensOf(text: string, startMs = 0, confidence?: readonly number[]): WordToken[] {
  const out: WordToken[] = [];
  let t = startMs;
  for (const part of text.split(/\s+/).filter(Boolean)) {
    if (part === '|') {
      t += 850;
      continue;
    }
    if (part === ',') {
      t += 450;
      continue;
    }
    out.push({ text: part, start_ms: t, end_ms: t + 250, confidence: confidence?.[out.length] ?? 0.9 });
    t += 300;
  }
  return out;
}

export const textOf = (tokens: readonly WordToken[]): string => tokens.map((t) => t.text).join(' ');

/** The formatted text of `raw` read as one file. */
export const fmt = (raw: string): string => textOf(formatTranscript(tokensOf(raw)));
