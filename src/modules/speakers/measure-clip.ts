// One voice's print from one audio file: probed, decoded (bounded) and measured by the diarizer as a single voice.
// Enrolment samples (processor.ts) and the reference clips a request sends for itself (reference-clips.ts) are judged
// the same way; each caller words the refusal for its own input.
import { AudioDecodeError, decodeToPcm, PCM_BYTES_PER_SECOND } from '../../audio/decode.js';
import { AudioProbeError, probeAudioFile } from '../../audio/probe.js';
import type { DiarizationEngine, VoicePrint } from '../../engines/diarization/interface.js';
import { BATCH_NICE } from '../../lib/priority.js';

/** The clip is not usable; `why` completes "The clip ..." ("is empty", "could not be decoded: ..."). */
export class ClipRejected extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

export interface MeasureClipOptions {
  /** Longest clip, seconds (by its container's duration, and by the audio it decodes to). */
  maxSeconds: number;
  /** How a clip over maxSeconds is refused ("is longer than 5 minutes; split it or trim it"). */
  tooLong: string;
  signal?: AbortSignal;
}

/** A print with no speech frame: adds nothing when merged, and says 0 ms of speech. */
const EMPTY_PRINT: VoicePrint = {
  speechMs: 0,
  spectral: { n: 0, sum: new Array<number>(12).fill(0), outer: new Array<number>(78).fill(0) },
  pitch: { n: 0, sum: [0], outer: [0] },
};

/** The clip's print (all its speech as one voice) and its audio length; ClipRejected when it is not usable audio. */
export async function measureClip(diarizer: DiarizationEngine, file: string, opts: MeasureClipOptions): Promise<{ print: VoicePrint; audioMs: number }> {
  const { maxSeconds, signal } = opts;
  let durationMs: number | null;
  try {
    durationMs = (await probeAudioFile(file)).durationMs;
  } catch (err) {
    if (err instanceof AudioProbeError) throw new ClipRejected(`is not usable audio: ${err.message}`);
    throw err;
  }
  if (durationMs !== null && durationMs > maxSeconds * 1000) throw new ClipRejected(opts.tooLong);
  let bytes = 0;
  // One second past the limit is enough to tell a clip whose container did not state its duration.
  const pcm = decodeToPcm(file, { maxSeconds: maxSeconds + 1, signal, nice: BATCH_NICE });
  async function* counted() {
    for await (const chunk of pcm) {
      bytes += chunk.length;
      if (bytes > maxSeconds * PCM_BYTES_PER_SECOND) throw new ClipRejected(opts.tooLong);
      yield chunk;
    }
  }
  let prints: Map<number, VoicePrint>;
  try {
    prints = await diarizer.measure(counted(), { signal });
  } catch (err) {
    // A decoder killed from outside is not the clip's fault: the caller's error (a job runs again).
    if (err instanceof AudioDecodeError && !err.interrupted) throw new ClipRejected(`could not be decoded: ${err.message}`);
    throw err;
  }
  if (bytes === 0) throw new ClipRejected('is empty');
  return { print: prints.get(0) ?? EMPTY_PRINT, audioMs: Math.round((bytes / PCM_BYTES_PER_SECOND) * 1000) };
}
