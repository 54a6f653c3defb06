// Post-recognition step of async transcription when a language-id model is installed and the request sets
// enable_language_identification: the audio is decoded once more (the recognizer streams the first decode away) and
// each segment of the transcript (translation/tokens.ts splitSegments: split at pauses and speaker changes, the
// units translated) is given the language the model hears in it. One segment at a time, so memory stays at one
// segment's audio (at most Whisper's window) whatever the file's length.
import { decodeToPcm, PCM_SAMPLE_RATE } from '../../audio/decode.js';
import type { LanguageIdentifier } from '../../engines/language-id/engine.js';
import { MAX_LID_SAMPLES } from '../../engines/language-id/identify.js';
import { BATCH_NICE } from '../../lib/priority.js';

/** Audio kept either side of a segment's words: word timings are tight, and the model hears onsets better with some. */
const MARGIN_MS = 100;

/** The language heard in each segment, in order; undefined where the model could not tell. */
export async function identifySegmentLanguages(
  lid: LanguageIdentifier,
  audioPath: string,
  segments: readonly { start_ms: number; end_ms: number }[],
  signal: AbortSignal,
  /** A multichannel job's channel (0-based): its audio alone. */
  channel?: number,
): Promise<(string | undefined)[]> {
  const perMs = PCM_SAMPLE_RATE / 1000;
  const windows = segments.map((s) => {
    const start = Math.max(0, Math.floor((s.start_ms - MARGIN_MS) * perMs));
    const end = Math.min(Math.ceil((s.end_ms + MARGIN_MS) * perMs), start + MAX_LID_SAMPLES);
    return { start, length: Math.max(0, end - start), filled: 0, samples: undefined as Int16Array | undefined };
  });
  const out: (string | undefined)[] = [];
  const identifyNext = async (): Promise<void> => {
    const w = windows[out.length]!;
    const samples = w.samples?.subarray(0, w.filled) ?? new Int16Array(0);
    w.samples = undefined; // held only until identified
    out.push(samples.length ? await lid.identify(samples, { signal }) : undefined);
  };
  let offset = 0;
  for await (const chunk of decodeToPcm(audioPath, { signal, nice: BATCH_NICE, channel })) {
    // A copy: the chunk's bytes need not be aligned for an Int16Array view.
    const pcm = new Int16Array(chunk.length / 2);
    Buffer.from(pcm.buffer).set(chunk);
    for (let i = out.length; i < windows.length && windows[i]!.start < offset + pcm.length; i++) {
      const w = windows[i]!;
      const from = Math.max(w.start + w.filled, offset);
      const to = Math.min(w.start + w.length, offset + pcm.length);
      if (to > from) {
        w.samples ??= new Int16Array(w.length);
        w.samples.set(pcm.subarray(from - offset, to - offset), from - w.start);
        w.filled = to - w.start;
      }
    }
    offset += pcm.length;
    // Segments whose audio is complete are identified now (in order), before more audio is held.
    while (out.length < windows.length && windows[out.length]!.start + windows[out.length]!.length <= offset) await identifyNext();
  }
  // The file ended inside or before the last segments (timings past the decoded end): what was heard of them.
  while (out.length < windows.length) await identifyNext();
  return out;
}
