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
  /**
   * Total attempts including the first; default per kind (see WorkOptions.maxAttempts), else 1. Without it
   * the default of the process that runs the job applies (resolved when it runs, not when it is enqueued).
   */
  maxAttempts?: number;
  /** At most one unfinished job with this key per kind; enqueueing again returns the existing id. */
  singletonKey?: string;
}

export interface Job<P extends JsonValue = JsonValue> {
  id: string;
  kind: string;
  payload: P;
  /**
   * 1 on the first run; counts every run, including a re-run after the process running the job crashed
   * (its lease expired). A run interrupted by stop() is given back and not counted.
   */
  attempt: number;
  /**
   * Runs allowed to end in a handler error. Crash re-runs are not counted against it (they have their own,
   * separate bound), so `attempt` can exceed `maxAttempts` after a crash.
   */
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
  /**
   * Delay before retry n (1-based: n is the number of runs that have ended in an error so far); default
   * exponential from 1 s, capped at 5 min, with jitter (see defaultBackoffMs).
   */
  backoffMs?: (attempt: number) => number;
}

/** The default retry delay: 1 s, 2 s, 4 s, ... capped at 5 min, each scaled by a random 0.8-1.2. */
export function defaultBackoffMs(retry: number): number {
  const base = Math.min(5 * 60_000, 1000 * 2 ** Math.max(0, Math.min(retry - 1, 20)));
  return Math.round(Math.min(5 * 60_000, base * (0.8 + 0.4 * Math.random())));
}

/** An optional log sink for the queue implementations (no logger dependency). */
export type JobLog = (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;

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
  /**
   * Stop taking jobs, abort running handlers' signals, wait for them to settle (up to the implementation's
   * stop timeout). A handler that rejects after its signal was aborted by stop() gives its job back without
   * using up an attempt.
   */
  stop(): Promise<void>;
  /** Position of a queued job among the queued jobs of its kind (0 = next), or null when not queued. */
  position(jobId: string): Promise<number | null>;
  stats(): Promise<QueueStats>;
  /**
   * Queued jobs per kind (waiting, and retries waiting out their backoff): an indexed count that reads no finished
   * job, for the metrics scrape. A kind with none may be absent.
   */
  queuedCounts(): Promise<Record<string, number>>;
}
