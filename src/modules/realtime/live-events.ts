// What a live transcription session (session.ts) takes in and gives out, with no wire format in it. Each protocol is
// a renderer over these types: the Soniox WebSocket (soniox-socket.ts) parses its messages into the inputs and turns
// the events into its frames; the OpenAI Realtime adapter (modules/openai/realtime-session.ts) turns the events into
// its turn and item events. Admission, limits, usage, metering and timeouts are the session's, whatever the protocol.
import type { ApiError } from '../../wire/api-error.js';
import type { Caller } from '../auth/service.js';
import type { RealtimeConfig } from './config.js';

/**
 * The session's start: who it is for and its configuration, checked. Who: the key the client offered (as given: a
 * non-string is refused), authenticated and permitted (permission, rate limit) here; or a caller the renderer's own
 * surface vouches for (Wyoming's listener: its one project, no key), which skips those steps but not billing or
 * the concurrency slot.
 */
export type LiveStart = ({ apiKey: unknown; caller?: undefined } | { caller: Caller; apiKey?: undefined }) & {
  /**
   * The configuration, or why it is invalid. A configuration error is reported after authentication and permission
   * (a caller without a valid key learns nothing from its configuration's errors).
   */
  config: RealtimeConfig | ApiError;
};

/** A word of the transcript (or a translation of one, which has no times). */
export interface TranscriptWord {
  /** As the transcript joins it: the session's first word bare, every later one with its leading space. */
  text: string;
  start_ms?: number;
  end_ms?: number;
  confidence: number;
  language?: string;
  translation_status?: 'original' | 'translation' | 'none';
  source_language?: string;
  /** With diarization: final words carry their speaker, partial ones a provisional guess. */
  speaker?: string;
  /** Multichannel sessions: the channel (0-based) the word was heard on. */
  channel?: number;
}

/** An utterance ended at a pause (with endpoint detection on); in a multichannel session, an utterance of `channel`. */
export interface EndpointMark {
  mark: 'endpoint';
  channel?: number;
}

/** A finalization the client asked for is complete: everything before it is final (translations included). */
export interface FinalizedMark {
  mark: 'finalized';
}

/** Final output, in order: words, and the marks between them. */
export type FinalItem = TranscriptWord | EndpointMark | FinalizedMark;

export const isMark = (item: FinalItem): item is EndpointMark | FinalizedMark => 'mark' in item;

/** What changed since the last update. */
export interface TranscriptUpdate {
  /**
   * New final words and marks, each given once, in time order (in a multichannel session: in time order within each
   * channel, the channels' words as each channel's recognizer made them final).
   */
  final: FinalItem[];
  /** The current hypothesis of the open utterance (replacing the previous update's), when partial words are on. */
  partial: TranscriptWord[];
  /** Audio (ms) whose words are all final; never decreases. */
  finalAudioMs: number;
  /** Audio (ms) the recognizer has received; never decreases, and finalAudioMs <= totalAudioMs. */
  totalAudioMs: number;
}

/** Where a session's events go: a protocol renderer. After `finished` or `error` nothing more comes. */
export interface LiveSink {
  update(update: TranscriptUpdate): void;
  /** The stream ended and everything is final (`update` holds what came last, usually nothing). */
  finished(update: TranscriptUpdate): void;
  /** The session failed; it is over. */
  error(err: ApiError): void;
}
