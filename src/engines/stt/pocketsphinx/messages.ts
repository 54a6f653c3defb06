// Messages between the main thread (decoder-worker.ts, driven by batch-pool.ts and stream-pool.ts) and a decoder
// worker (worker.ts). One worker owns one decoder. A batch worker decodes one segment per 'decode' message; a streaming worker serves one live session at a time. Every
// message carries its job or session number so late replies of an earlier one are recognisable.
import type { Token } from '../interface.js';
import type { NarrowbandAdaptation } from './narrowband.js';
import type { PocketsphinxModelPaths } from './model-paths.js';

/** workerData of a decoder worker. */
export interface WorkerInit {
  addonPath: string;
  model: PocketsphinxModelPaths;
  decoderArgs: Record<string, string>;
  /** OS niceness of the worker's thread (Linux; 0 = as the process). */
  nice?: number;
  /** Adapt narrowband segments and live utterances (narrowband.ts). */
  narrowband?: NarrowbandAdaptation;
}

export interface StreamSettings {
  partialIntervalMs: number;
  /**
   * Early finals (settled.ts): in utterances that open after `afterMs` of the session's decoded audio (those before
   * get a second pass), words ending `behindMs` behind the decoded audio turn final before the utterance ends.
   * Undefined: finals only when an utterance ends.
   */
  settle?: { afterMs: number; behindMs: number };
  /** The session's context bias (bias.ts); none: the model's own language model. */
  bias?: DecoderBias;
}

/**
 * A request's context for the decoder (bias.ts builds it): dictionary words to add as [word, ARPAbet phones], an
 * ARPA bigram model of the terms and context text, and its interpolation weight. The worker keeps the search built
 * for the last key, so the segments of one request after the first cost nothing extra.
 */
export interface DecoderBias {
  key: string;
  words: [string, string][];
  arpa: string;
  weight: number;
}

export type UtteranceEnd = 'pause' | 'cut' | 'max_length';

export type ToWorker =
  /**
   * Batch: decode one segment as a whole utterance (batch CMN over the segment, so the result does not depend on what
   * the decoder heard before). Answered by 'decoded'. s16le samples, transferred.
   */
  | { type: 'decode'; job: number; startSample: number; pcm: ArrayBuffer; bias?: DecoderBias }
  /** Start a live session. */
  | { type: 'begin'; session: number; stream: StreamSettings }
  /**
   * s16le samples, transferred; the first is sample `startSample` of the stream. Opens an utterance when none is
   * open; contiguous within one. Acknowledged with 'ack' once processed.
   */
  | { type: 'audio'; session: number; seq: number; startSample: number; pcm: ArrayBuffer }
  /**
   * The open utterance ends at `sample` (its final tokens follow), at an endpoint ('pause'), at a shorter pause whose
   * endpoint is decided later ('cut': a final follows even without words, to carry it) or at the maximum length.
   */
  | { type: 'endpoint'; session: number; sample: number; reason: UtteranceEnd }
  /** End the current utterance now. Answered by 'finalized' after any 'final'. */
  | { type: 'finalize'; session: number }
  /** End of audio: decode what is left, answered by 'ended' after any 'final'. */
  | { type: 'end'; session: number }
  /** Drop the session without results; answered by 'ended'. */
  | { type: 'cancel'; session: number };

export type FromWorker =
  | { type: 'ready'; loadMs: number }
  | { type: 'init_error'; message: string }
  | { type: 'decoded'; job: number; tokens: Token[]; decodeMs: number }
  | { type: 'decode_error'; job: number; message: string }
  | { type: 'ack'; session: number; seq: number }
  | { type: 'partial'; session: number; tokens: Token[] }
  /** Words of the open utterance that turned final before it ends (StreamSettings.settle). */
  | { type: 'settled'; session: number; tokens: Token[] }
  /** The utterance of samples [startSample, endSample) of the stream closed with these tokens. */
  | { type: 'final'; session: number; tokens: Token[]; endpoint: boolean; startSample: number; endSample: number }
  | { type: 'finalized'; session: number }
  | { type: 'ended'; session: number }
  | { type: 'error'; session: number; message: string };
