// The job queue contract: async transcription, webhook delivery and voice preparation run through it.
// Two implementations share it: a durable in-process runner over our own database (SQLite or PostgreSQL,
// the default) and pg-boss on PostgreSQL for multi-node deployments. Delivery is at least once, so every
// handler must be idempotent (resume from the last durable state, never double-apply an effect).
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface EnqueueOptions {
  /**
   * Enqueue inside this transaction, so the job exists exactly when the rows it works on do
   * (e.g. a transcription row in `queued` and its job are created together or not at all).
   */
  tx?: Kysely<Database>;
  /** Not before this time (retries with backoff, delayed webhook redelivery). */
  runAt?: Date;
  /** Total attempts including the first; default per kind (see WorkOptions.maxAttempts), else 1. */
  maxAttempts?: number;
  /** At most one unfinished job with this key per kind; enqueueing again returns the existing id. */
  singletonKey?: string;
}

export interface Job<P extends JsonValue = JsonValue> {
  id: string;
  kind: string;
  payload: P;
  /** 1 on the first run. */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the queue stops or the job's lease is lost; handlers pass it to long work. */
  signal: AbortSignal;
}

/** Throw from a handler to fail the job now, without the remaining retries. */
export class PermanentJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentJobError';
  }
}

export interface WorkOptions {
  /** Jobs of this kind running at once in this process. */
  concurrency: number;
  /** Default attempts for jobs of this kind. */
  maxAttempts?: number;
  /** Delay before retry n (1-based); default exponential from 1 s, capped at 5 min. */
  backoffMs?: (attempt: number) => number;
}

export type JobHandler<P extends JsonValue = JsonValue> = (job: Job<P>) => Promise<void>;

export type JobState = 'queued' | 'running' | 'completed' | 'failed';

export interface QueueStats {
  /** Jobs per kind and state (completed and failed: those still retained). */
  counts: Record<string, Partial<Record<JobState, number>>>;
}

export interface JobQueue {
  enqueue<P extends JsonValue>(kind: string, payload: P, options?: EnqueueOptions): Promise<string>;
  /** Register the handler of a kind. Call before start(). */
  work<P extends JsonValue>(kind: string, handler: JobHandler<P>, options: WorkOptions): void;
  /** Begin running jobs, recovering those a crashed process left running. */
  start(): Promise<void>;
  /** Stop taking jobs, abort running handlers' signals, wait for them to settle. */
  stop(): Promise<void>;
  /** Position of a queued job among the queued jobs of its kind (0 = next), or null when not queued. */
  position(jobId: string): Promise<number | null>;
  stats(): Promise<QueueStats>;
}
