// Typed messages between the event loop and a streaming recognizer's worker thread (online-worker.ts). Audio goes in
// per session; each reply carries the results that audio produced, in order.
import type { Token } from '../interface.js';
import type { OnlineRecognizerConfig } from './online-config.js';

export type OnlineRequest =
  | { id: number; op: 'load'; config: OnlineRecognizerConfig }
  | { id: number; op: 'open'; session: number; endpointMs: number }
  | { id: number; op: 'audio'; session: number; samples: Int16Array }
  /** Close the open utterance now (finalize, end of stream): its words are final. `end`: drop the session after. */
  | { id: number; op: 'finalize'; session: number; end: boolean }
  | { id: number; op: 'close'; session: number };

/** A final without tokens closes an utterance that had no words. */
export type OnlineEvent = { type: 'partial'; tokens: Token[] } | { type: 'final'; tokens: Token[]; endpoint: boolean };

export type OnlineReply = { ok: true } | { events: OnlineEvent[] };
