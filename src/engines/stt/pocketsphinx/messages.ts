// Messages between the main thread (pool.ts) and a decoder worker (worker.ts). One worker owns one decoder and
// serves one session at a time; every session message carries the session number so late replies of an earlier
// session are recognisable.
import type { Token } from '../interface.js';
import type { PocketsphinxModelPaths } from './options.js';

/** workerData of a decoder worker. */
export interface WorkerInit {
  addonPath: string;
  model: PocketsphinxModelPaths;
  decoderArgs: Record<string, string>;
  maxUtteranceMs: number;
}

export interface StreamSettings {
  endpointSilenceMs: number;
  partialIntervalMs: number;
}

export type ToWorker =
  /** Start a session: 'batch' cuts utterances with lookahead and decodes each one whole; 'stream' decodes live. */
  | { type: 'begin'; session: number; mode: 'batch' }
  | { type: 'begin'; session: number; mode: 'stream'; stream: StreamSettings }
  /** s16le samples (even byte length), transferred. Acknowledged with 'ack' once processed. */
  | { type: 'audio'; session: number; seq: number; pcm: ArrayBuffer }
  /** Stream mode: end the current utterance now. Answered by 'finalized' after any 'final'. */
  | { type: 'finalize'; session: number }
  /** End of audio: decode what is left, answered by 'ended' after any 'final'. */
  | { type: 'end'; session: number }
  /** Drop the session without results; answered by 'ended'. */
  | { type: 'cancel'; session: number };

export type FromWorker =
  | { type: 'ready'; loadMs: number }
  | { type: 'init_error'; message: string }
  | { type: 'ack'; session: number; seq: number; processedMs: number }
  | { type: 'partial'; session: number; tokens: Token[] }
  | { type: 'final'; session: number; tokens: Token[] }
  | { type: 'finalized'; session: number }
  | { type: 'ended'; session: number; audioMs: number }
  | { type: 'error'; session: number; message: string };
