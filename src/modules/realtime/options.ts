// Options of real-time sessions, resolved once with their defaults when the server builds the service (not with
// `?? N` where a session uses them).
import type { Settings } from '../../config/settings.js';
import type { DiarizationEngine } from '../../engines/diarization/interface.js';
import type { LanguageIdentifier } from '../../engines/language-id/engine.js';
import type { MatchThresholds } from '../../engines/diarization/interface.js';

export interface RealtimeOptions {
  /** request_timeout after this long without audio (or a keepalive / control message) while streaming. */
  audioTimeoutMs: number;
  /** Fixed session cap (max_duration_reached). */
  maxDurationMs: number;
  /** Audio between two non-final results, ms. */
  partialIntervalMs: number;
  /** Silence that ends an utterance (engine endpoint) when the client asks for nothing shorter. */
  endpointSilenceMs: number;
  ffmpegPath: string | undefined;
  /** How often a running session re-checks balance and budgets with the cost it accrued. */
  usageCheckIntervalMs: number;
  /** Speaker labels for sessions with enable_speaker_diarization. */
  diarizer: DiarizationEngine | undefined;
  /** How close a live voice must be to an enrolled speaker's profile to carry its name. */
  speakerMatch: MatchThresholds | undefined;
  /** Format final tokens unless the session's configuration says otherwise (PARLANCE_TEXT_FORMATTING). */
  formatText: boolean;
  /** The installed language-id model: with enable_language_identification, each final utterance gets its language. */
  languageId: LanguageIdentifier | undefined;
  /** Longest wait for an utterance's language before its finals go out with the speech model's language. */
  languageIdWaitMs: number;
}

/** The engine endpoint's silence when the client asks for nothing shorter (max_endpoint_delay_ms). */
export const DEFAULT_ENDPOINT_SILENCE_MS = 600;

type RealtimeSettings = Pick<
  Settings,
  | 'realtimeAudioTimeoutSeconds'
  | 'realtimeMaxDurationSeconds'
  | 'realtimePartialIntervalMs'
  | 'usageCheckIntervalSeconds'
  | 'textFormatting'
  | 'realtimeLanguageIdWaitMs'
>;

/** The sessions' options from the settings and the parts the server built (diarizer, speaker matching). */
export function realtimeSessionOptions(
  settings: RealtimeSettings,
  parts: {
    diarizer?: DiarizationEngine;
    speakerMatch?: MatchThresholds;
    ffmpegPath?: string;
    /** The language-id model in use now (it changes with the models directory): each session takes the one of its start. */
    languageId?: () => LanguageIdentifier | undefined;
  } = {},
): RealtimeOptions {
  return {
    audioTimeoutMs: settings.realtimeAudioTimeoutSeconds * 1000,
    maxDurationMs: settings.realtimeMaxDurationSeconds * 1000,
    partialIntervalMs: settings.realtimePartialIntervalMs,
    endpointSilenceMs: DEFAULT_ENDPOINT_SILENCE_MS,
    ffmpegPath: parts.ffmpegPath,
    usageCheckIntervalMs: settings.usageCheckIntervalSeconds * 1000,
    diarizer: parts.diarizer,
    speakerMatch: parts.speakerMatch,
    formatText: settings.textFormatting,
    get languageId() {
      return parts.languageId?.();
    },
    languageIdWaitMs: settings.realtimeLanguageIdWaitMs,
  };
}
