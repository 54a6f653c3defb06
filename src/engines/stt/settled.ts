// Early finals for streaming decoders without a second pass: the words of an open utterance that end far enough
// behind the decoded audio no longer change, so they turn final before the utterance ends (sherpa-onnx's
// online-sessions.ts, pocketsphinx's stream-session.ts).

/** How many words lead `words` that end by `untilMs`, the last word excepted (it may still be growing). */
export function settledCount(words: readonly { end_ms: number }[], untilMs: number): number {
  let n = 0;
  while (n < words.length - 1 && words[n]!.end_ms <= untilMs) n++;
  return n;
}
