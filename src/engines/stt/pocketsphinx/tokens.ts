// From pocketsphinx segments to API tokens: drop fillers, strip pronunciation variants, frames → milliseconds.
import type { Token } from '../interface.js';
import type { NativeSegment } from './addon.js';

export const FRAME_MS = 10; // -frate 100

/** Sentence marks, silence, noise and filler words are not words: <s> </s> <sil> [NOISE] ++UM++ +BREATH+. */
export function isWord(word: string): boolean {
  return !(/^<.*>$/.test(word) || /^\[.*\]$/.test(word) || /^\+.*\+$/.test(word) || word.length === 0);
}

/** "read(2)" → "read" */
export function baseWord(word: string): string {
  return word.replace(/\(\d+\)$/, '');
}

/**
 * Convert one utterance's segments. `offsetMs` is where the utterance starts in the stream, `limitMs` where the audio
 * ends (times are clipped to it). Tokens come out in time order, non-overlapping, each with end_ms > start_ms.
 */
export function segmentsToTokens(segments: readonly NativeSegment[], offsetMs: number, limitMs = Infinity): Token[] {
  const tokens: Token[] = [];
  // libpocketsphinx 0.8+5prealpha numbers frames inconsistently: after the first utterance of a decoder, segment
  // frames can be offset by the frames of earlier utterances (live decoding) or repeat an earlier offset (after a
  // full-utterance decode). The first segment of a path is always the <s> that starts at the utterance's frame 0,
  // so frames are taken relative to it.
  const base = segments[0]?.startFrame ?? 0;
  let lastEnd = -Infinity;
  for (const seg of segments) {
    if (!isWord(seg.word)) continue;
    const start = Math.max(offsetMs + (seg.startFrame - base) * FRAME_MS, lastEnd);
    const end = Math.min(offsetMs + (seg.endFrame - base + 1) * FRAME_MS, limitMs);
    if (!(end > start)) continue;
    const confidence = Number.isFinite(seg.prob) ? Math.min(1, Math.max(0, seg.prob)) : 0;
    tokens.push({ text: baseWord(seg.word), start_ms: start, end_ms: end, confidence });
    lastEnd = end;
  }
  return tokens;
}
