// What the transcription processor (processor.ts) is set up with: limits, the webhook retry policy, and the parts a
// job asks for (diarizer, the language-id model in use, enrolled speakers, meter, log).
import type { DiarizationEngine, MatchThresholds } from '../../engines/diarization/interface.js';
import type { LanguageIdentifier } from '../../engines/language-id/engine.js';
import type { Clock } from '../../lib/clock.js';
import type { CompatProfile } from '../../wire/compat.js';
import type { UsageMeter } from '../usage/service.js';
import type { Recognition } from './speaker-labels.js';

export interface ProcessorOptions {
  profile: CompatProfile;
  maxAudioMs: number;
  maxTokens: number;
  concurrency: number;
  webhookMaxAttempts: number;
  webhookBackoffMs: (attempt: number) => number;
  /** Labels tokens with speakers for transcriptions created with enable_speaker_diarization. */
  diarizer: DiarizationEngine;
  /**
   * The language-id model in use now (asked at each job: it changes with the models directory): with
   * enable_language_identification, each segment is labelled with its language.
   */
  languageId?: () => LanguageIdentifier | undefined;
  /** Enrolled speakers still ready among those a transcription asked for, and how close a voice must be to be one. */
  speakers?: { enrolled(projectId: string, ids: string[]): Promise<Recognition['enrolled']>; thresholds: MatchThresholds };
  clock?: Clock;
  /** Meters each completed transcription (audio seconds of its model). */
  meter?: UsageMeter;
  log?: (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;
}
