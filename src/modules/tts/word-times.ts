// The word times of one synthesized segment as the pipeline hands them out: the engine's own (espeak-ng, festival,
// flite), else grouped from its character timings, else estimated from the segment's audio (sherpa-onnx voices; see
// src/engines/tts/word-timings.ts), then moved with what the pipeline does to the audio (silence trimmed, the audio cap)
// and put on the stream's clock in milliseconds.
import type { SynthesisChunk } from '../../engines/tts/interface.js';
import { estimateWordTimings } from '../../engines/tts/word-estimate.js';
import { textWords, type WordTiming, wordsFromCharacters } from '../../engines/tts/word-timings.js';
import type { TtsWordTimestamp } from '../../wire/tts-frames.js';

/** The segment's words relative to its own audio as the engine made it (seconds). */
export function segmentWords(ch: SynthesisChunk, sampleRate: number): WordTiming[] {
  if (ch.words) return ch.words;
  if (ch.timings) return wordsFromCharacters(ch.timings);
  return estimateWordTimings(textWords(ch.text), ch.pcm, ch.sampleRate || sampleRate);
}

/**
 * Words on the stream's clock: `cut` seconds were trimmed off the segment's start, `kept` seconds of it remain, and
 * the segment begins `offset` seconds into the stream; `truncated`: the audio cap cut the segment at `kept`, so words
 * starting past it are not spoken. Times are whole milliseconds, within the segment's audio, in order, never
 * overlapping (nor overlapping the previous segment's, which ended at `previousEndMs`).
 */
export function placeWords(
  words: readonly WordTiming[],
  at: { cut: number; kept: number; offset: number; truncated: boolean; previousEndMs: number },
): TtsWordTimestamp[] {
  const { cut, kept, offset } = at;
  const out: TtsWordTimestamp[] = [];
  let floor = at.previousEndMs;
  for (const w of words) {
    const start = w.start - cut;
    if (at.truncated && start >= kept) break;
    const s = Math.max(floor, Math.round((offset + Math.min(Math.max(0, start), kept)) * 1000));
    const e = Math.max(s, Math.round((offset + Math.min(Math.max(0, w.end - cut), kept)) * 1000));
    out.push({ text: w.text, start_ms: s, end_ms: e });
    floor = e;
  }
  return out;
}
