// Typed messages between the event loop and a speaker-embedding worker thread (worker.ts).
import type { SpeakerEmbeddingConfig } from './embed.js';
import type { ClusterOptions } from './cluster.js';

export type SpeakerRequest =
  | { id: number; op: 'load'; config: SpeakerEmbeddingConfig }
  /** The config again: a thread started anew after its predecessor died loads the model itself. */
  | { id: number; op: 'embed'; samples: Int16Array; config: SpeakerEmbeddingConfig }
  | { id: number; op: 'cluster'; embeddings: Float32Array[]; weights: number[]; options: ClusterOptions };

export type SpeakerReply = { dim: number } | { embedding: Float32Array } | { labels: number[] };
