// Typed messages between the event loop and a streaming recognizer's worker thread (online-worker.ts). Audio goes in
// per session; each reply carries the results that audio produced, in order.
import type { Token } from '../interface.js';
import type { OnlineRecognizerConfig } from './online-config.js';
import type { OfflineResult } from './words.js';

export type OnlineRequest =
  /** `batches`: the model's encoder decodes several streams in one call (checkModel found it so). */
  | { id: number; op: 'load'; config: OnlineRecognizerConfig; batches?: boolean }
  /** `hotwords`: the session's context terms, "/"-separated (transducers with a modeling unit only). */
  | { id: number; op: 'open'; session: number; endpointMs: number; hotwords?: string; settleMs?: number }
  /** `modelPauses: false`: the VAD decides where this utterance ends, not the model's trailing blanks (pauses.ts). */
  | { id: number; op: 'audio'; session: number; samples: Int16Array; modelPauses?: boolean }
  /**
   * Close the open utterance now (finalize, end of stream, a pause the VAD found): its words are final. `end`: drop
   * the session after. `endpoint`: the speaker paused (an endpoint, not the caller's decision).
   */
  | { id: number; op: 'finalize'; session: number; end: boolean; endpoint?: boolean }
  /** Make final the words of the open utterance that can no longer change, without ending it. */
  | { id: number; op: 'settle'; session: number }
  | { id: number; op: 'close'; session: number }
  /** Decode a whole segment of a file (no session): its words, as an offline model gives them. */
  | { id: number; op: 'decode'; samples: Int16Array; hotwords?: string };

/** A final without tokens closes an utterance that had no words. */
export type OnlineEvent = { type: 'partial'; tokens: Token[] } | { type: 'final'; tokens: Token[]; endpoint: boolean };

export type OnlineReply = { ok: true } | { events: OnlineEvent[] } | { result: OfflineResult };
