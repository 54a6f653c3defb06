// Post-recognition step of async transcription: when diarization was asked for, the audio is decoded once more and
// diarized (the recognizer streams the first decode away), and every token gets a speaker label. Kept out of the
// processor so other post-steps (language identification, translation) stay separate edits.
import { decodeToPcm } from '../../audio/decode.js';
import type { DiarizationEngine } from '../../engines/diarization/interface.js';
import { labelTokens } from '../../engines/diarization/label-tokens.js';
import type { TranscriptToken } from './schemas.js';

export async function addSpeakerLabels(diarizer: DiarizationEngine, audioPath: string, tokens: TranscriptToken[], signal: AbortSignal): Promise<TranscriptToken[]> {
  if (tokens.length === 0) return tokens;
  const turns = await diarizer.diarize(decodeToPcm(audioPath, { signal }), { signal });
  return labelTokens(tokens, turns);
}
