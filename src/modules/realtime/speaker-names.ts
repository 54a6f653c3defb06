// Speaker labels of a live session: audio the diarizer has identified as one of the session's enrolled speakers
// carries its name; the others are "1", "2", ... in order of first appearance (numbers are given to those only).
import type { DiarizationEngine, DiarizationStream, MatchThresholds, SpeakerCount } from '../../engines/diarization/interface.js';
import { SpeakerLabels } from '../../engines/diarization/label-tokens.js';
import type { EnrolledSpeaker } from '../speakers/service.js';

/** A live session's diarizer stream, and the wire label of a span of its audio. */
export interface LiveDiarization {
  stream: DiarizationStream;
  speakerOf: (startMs: number, endMs: number) => string;
}

/** Diarization of a session that asked for it, recognising its enrolled speakers when speaker matching is on. */
export function liveDiarization(
  diarizer: DiarizationEngine,
  enrolled: readonly EnrolledSpeaker[],
  speakerMatch?: MatchThresholds,
  speakers?: SpeakerCount,
): LiveDiarization {
  const stream = diarizer.createStream({
    ...(enrolled.length && speakerMatch ? { enrolled: { prints: enrolled.map((e) => e.print), thresholds: speakerMatch } } : {}),
    ...(speakers ? { speakers } : {}),
  });
  return {
    stream,
    speakerOf: liveSpeakerLabels(
      stream,
      enrolled.map((e) => e.name),
    ),
  };
}

export function liveSpeakerLabels(stream: DiarizationStream, enrolledNames: readonly string[]): (startMs: number, endMs: number) => string {
  const labels = new SpeakerLabels();
  return (startMs, endMs) => {
    // Before any speech window is clustered, the first speaker (number 0) is the only guess.
    const enrolled = stream.nameAt(startMs, endMs);
    return enrolled === undefined ? labels.label(stream.speakerAt(startMs, endMs) ?? 0) : enrolledNames[enrolled]!;
  };
}
