// Post-recognition step of async transcription: when diarization was asked for, the audio is decoded once more and
// diarized (the recognizer streams the first decode away), and every token gets a speaker label. Kept out of the
// processor so other post-steps (language identification, translation) stay separate edits.
import { decodeToPcm } from '../../audio/decode.js';
import type { DiarizationEngine } from '../../engines/diarization/interface.js';
import { labelTokens } from '../../engines/diarization/label-tokens.js';
import { BATCH_NICE } from '../../lib/priority.js';

export async function addSpeakerLabels<T extends { start_ms?: number; end_ms?: number }>(
  diarizer: DiarizationEngine,
  audioPath: string,
  tokens: T[],
  signal: AbortSignal,
): Promise<(T & { speaker?: string })[]> {
  if (tokens.length === 0) return tokens;
  const turns = await diarizer.diarize(decodeToPcm(audioPath, { signal, nice: BATCH_NICE }), { signal });
  return labelTokens(tokens, turns);
}
