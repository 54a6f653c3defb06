// Post-recognition step of async transcription: when diarization was asked for, the audio is decoded once more and
// diarized (the recognizer streams the first decode away), and every token gets a speaker label. With enrolled
// speakers to recognise, the audio is read a third time to measure each diarized speaker's voice over its turns
// (the turns are only known once the whole file is clustered), and each turn that sounds like an enrolled profile
// (short ones: like their speaker's other turns) is labelled with its name. Kept out of the processor so other
// post-steps (language identification, translation) stay separate.
import { decodeToPcm } from '../../audio/decode.js';
import type { DiarizationEngine, SpeakerCount } from '../../engines/diarization/interface.js';
import { labelTokens } from '../../engines/diarization/label-tokens.js';
import type { MatchThresholds, VoicePrint } from '../../engines/diarization/interface.js';
import { identifyTurns } from '../../engines/diarization/voice-print.js';
import { BATCH_NICE } from '../../lib/priority.js';

/** A voice to recognise by its name: an enrolled speaker, or one a request named for itself. */
export interface KnownSpeaker {
  name: string;
  print: VoicePrint;
}

export interface Recognition {
  enrolled: KnownSpeaker[];
  thresholds: MatchThresholds;
}

export async function addSpeakerLabels<T extends { start_ms?: number; end_ms?: number }>(
  diarizer: DiarizationEngine,
  audioPath: string,
  tokens: T[],
  signal: AbortSignal,
  recognition?: Recognition,
  /** A multichannel job's channel (0-based): its speakers are told apart within it alone. */
  channel?: number,
  /** The request's bounds on the speaker count. */
  speakers?: SpeakerCount,
): Promise<(T & { speaker?: string })[]> {
  if (tokens.length === 0) return tokens;
  let turns = await diarizer.diarize(decodeToPcm(audioPath, { signal, nice: BATCH_NICE, channel }), { signal, ...(speakers ? { speakers } : {}) });
  const names = new Map<number, string>();
  if (recognition?.enrolled.length && turns.length) {
    // One print per turn (its index as the speaker): speakers' prints are their turns' merged.
    const perTurn = turns.map((t, i) => ({ ...t, speaker: i }));
    const heard = await diarizer.measure(decodeToPcm(audioPath, { signal, nice: BATCH_NICE, channel }), { turns: perTurn, signal });
    const found = identifyTurns(
      turns,
      heard,
      recognition.enrolled.map((e) => e.print),
      recognition.thresholds,
    );
    turns = found.turns;
    for (const [speaker, index] of found.names) names.set(speaker, recognition.enrolled[index]!.name);
  }
  return labelTokens(tokens, turns, names);
}
