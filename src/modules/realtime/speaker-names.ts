// Speaker labels of a live session: audio the diarizer has identified as one of the session's enrolled speakers
// carries its name; the others are "1", "2", ... in order of first appearance (numbers are given to those only).
import type { DiarizationStream } from '../../engines/diarization/interface.js';
import { SpeakerLabels } from '../../engines/diarization/label-tokens.js';

export function liveSpeakerLabels(stream: DiarizationStream, enrolledNames: readonly string[]): (startMs: number, endMs: number) => string {
  const labels = new SpeakerLabels();
  return (startMs, endMs) => {
    // Before any speech window is clustered, the first speaker (number 0) is the only guess.
    const enrolled = stream.nameAt(startMs, endMs);
    return enrolled === undefined ? labels.label(stream.speakerAt(startMs, endMs) ?? 0) : enrolledNames[enrolled]!;
  };
}
