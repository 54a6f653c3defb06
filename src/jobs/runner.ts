// The part both queue implementations share: handler registration, claiming fairly across kinds within
// each kind's concurrency, the lease heartbeat, the outcome of a run (complete, retry with backoff, fail,
// give back on stop), wake-ups (in-process, PostgreSQL LISTEN/NOTIFY, polling) and stop(). Where the jobs
// live and how a claim, a lease and an outcome are written is the backend's business (local-queue.ts,
// pgboss-queue.ts).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import { NOTIFY_CHANNEL, NotifyListener } from './notify-listener.js';
import {
  defaultBackoffMs,
  PermanentJobError,
  type EnqueueOptions,
  type JobHandler,
  type JobLog,
  type JobQueue,
  type JsonValue,
  type QueueStats,
  type WorkOptions,
} from './queue.js';

export { NOTIFY_CHANNEL } from './notify-listener.js';

export interface RunnerOptions {
  /** Log sink (no logger dependency). */
  log?: JobLog;
  /** Poll for due jobs this often (other processes' jobs, runAt, retries). Default 1000 ms. */
  pollMs?: number;
  /** A claimed job belongs to this process for this long unless renewed. Default 30 s. */
  leaseMs?: number;
  /** Renew the leases of running jobs this often. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** How long stop() waits for aborted handlers to settle before giving up on them. Default 30 s. */
  stopTimeoutMs?: number;
  /**
   * Times a job may be re-run after its lease expired (the process running it crashed, was killed or lost
   * the database) before it is failed. Default 3. Separate from maxAttempts, which counts handler errors.
   */
  maxRecoveries?: number;
  /** PostgreSQL only: LISTEN here for NOTIFYs of committed jobs (instant wake-up across processes). */
  listenUrl?: string;
  /** Injectable clock (ms precision). */
  now?: () => Date;
}

/** A job this process has claimed, as the backend describes it. */
export interface ClaimedJob {
  id: string;
  kind: string;
  payload: JsonValue;
  /** 1-based run number. */
  attempt: number;
  /** As enqueued; null: the kind's default. */
  maxAttempts: number | null;
  /** Earlier runs that ended in a handler error. */
  failures: number;
  /** Earlier runs lost to an expired lease. */
  recoveries: number;
  /** Backend token that identifies this run, so a late write of a lost run changes nothing. */
  fence: number;
}

interface Worker {
  kind: string;
  handler: JobHandler<JsonValue>;
  concurrency: number;
  maxAttempts: number;
  backoffMs: (retry: number) => number;
  running: Set<Run>;
}

interface Run {
  job: ClaimedJob;
  controller: AbortController;
  done: Promise<void>;
}

class JobAbortError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AbortError';
  }
}

export function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  return text.length > 4000 ? `${text.slice(0, 4000)}...` : text;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export function checkEnqueue(kind: string, payload: unknown, options: EnqueueOptions): string {
  if (typeof kind !== 'string' || !/^[A-Za-z0-9_.:-]{1,100}$/.test(kind)) throw new TypeError(`invalid job kind: ${JSON.stringify(kind)}`);
  if (options.maxAttempts !== undefined) positiveInt('maxAttempts', options.maxAttempts);
  if (options.runAt !== undefined && Number.isNaN(options.runAt.getTime())) throw new TypeError('runAt is an invalid date');
  const text = JSON.stringify(payload);
  if (text === undefined) throw new TypeError('job payload must be JSON');
  return text;
}

export abstract class QueueRunner implements JobQueue {
  /** This process's lease owner id: new on every construction, so no lease of a previous run is ours. */
  readonly ownerId = `${hostname()}:${process.pid}:${randomUUID()}`;
  protected readonly log: JobLog;
  protected readonly pollMs: number;
  protected readonly leaseMs: number;
  protected readonly heartbeatMs: number;
  protected readonly stopTimeoutMs: number;
  protected readonly maxRecoveries: number;
  protected readonly now: () => Date;

  private readonly workers = new Map<string, Worker>();
  private readonly runs = new Set<Run>();
  private state: 'new' | 'starting' | 'started' | 'stopping' | 'stopped' = 'new';
  private starting: Promise<void> | null = null;
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private rotation = 0;
  private pollTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** PostgreSQL LISTEN for other processes' jobs (with listenUrl). */
  private readonly listener: NotifyListener | null;

  constructor(options: RunnerOptions) {
    this.log = options.log ?? (() => undefined);
    this.pollMs = options.pollMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(10, Math.floor(this.leaseMs / 3));
    this.stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
    this.maxRecoveries = options.maxRecoveries ?? 3;
    this.now = options.now ?? (() => new Date());
    this.listener = options.listenUrl
      ? new NotifyListener(options.listenUrl, Math.max(this.pollMs, 1000), {
          active: () => this.state === 'started',
          // A kind this process has no handler for is another process's work.
          notified: (kind) => {
            if (!kind || this.workers.has(kind)) this.wake();
          },
          log: this.log,
          errorText,
        })
      : null;
    if (this.heartbeatMs >= this.leaseMs) throw new TypeError('heartbeatMs must be shorter than leaseMs');
    if (!Number.isInteger(this.maxRecoveries) || this.maxRecoveries < 0) throw new TypeError('maxRecoveries must be an integer >= 0');
  }

  // ---- backend ----
  abstract enqueue<P extends JsonValue>(kind: string, payload: P, options?: EnqueueOptions): Promise<string>;
  abstract position(jobId: string): Promise<number | null>;
  abstract stats(): Promise<QueueStats>;
  abstract queuedCounts(): Promise<Record<string, number>>;
  /** Claim up to `limit` due jobs of `kind` for this process. */
  protected abstract claim(kind: string, limit: number): Promise<ClaimedJob[]>;
  /** Extend the lease; false when the run no longer owns the job. */
  protected abstract renew(job: ClaimedJob): Promise<boolean>;
  protected abstract complete(job: ClaimedJob): Promise<boolean>;
  /** Back to the queue, due at runAt, counting this run as a failure. */
  protected abstract retry(job: ClaimedJob, error: string, runAt: Date): Promise<boolean>;
  protected abstract fail(job: ClaimedJob, error: string): Promise<boolean>;
  /** Back to the queue as if this run never started (stop() interrupted it). */
  protected abstract release(job: ClaimedJob): Promise<boolean>;
  /** Periodic housekeeping on the poll timer (expired leases, retention). */
  protected async tick(): Promise<void> {}
  protected async onStart(): Promise<void> {}
  protected async onStop(): Promise<void> {}

  // ---- JobQueue ----
  work<P extends JsonValue>(kind: string, handler: JobHandler<P>, options: WorkOptions): void {
    checkEnqueue(kind, null, {});
    if (this.workers.has(kind)) throw new Error(`a handler for job kind ${kind} is already registered`);
    this.workers.set(kind, {
      kind,
      handler: handler as JobHandler<JsonValue>,
      concurrency: positiveInt('concurrency', options.concurrency),
      maxAttempts: options.maxAttempts === undefined ? 1 : positiveInt('maxAttempts', options.maxAttempts),
      backoffMs: options.backoffMs ?? defaultBackoffMs,
      running: new Set(),
    });
    this.wake();
  }

  /** The kinds this process has handlers for. */
  protected kinds(): string[] {
    return [...this.workers.keys()];
  }

  async start(): Promise<void> {
    if (this.state !== 'new') return this.starting ?? undefined;
    this.state = 'starting';
    this.starting = this.onStart();
    try {
      await this.starting;
    } catch (err) {
      if (this.state === 'starting') this.state = 'new'; // start() may be tried again
      this.starting = null;
      throw err;
    }
    if (this.state !== 'starting') return; // stop() came first
    this.state = 'started';
    // Not unref'd: a started queue is a service, like a listening socket, until stop().
    this.pollTimer = setInterval(() => void this.onPoll(), this.pollMs);
    await this.listener?.listen();
    void this.onPoll();
  }

  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    await this.starting?.catch(() => undefined);
    if (this.pollTimer) clearInterval(this.pollTimer);
    await this.listener?.stop();
    for (const run of this.runs) run.controller.abort(new JobAbortError('the job queue is stopping'));
    await this.pumping;
    await this.ticking;
    const settled = Promise.allSettled([...this.runs].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      settled.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.stopTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.log('warn', 'job queue stopped with handlers still running; their jobs run again once their leases expire', {
        jobs: [...this.runs].map((r) => r.job.id),
      });
    }
    await this.onStop();
    this.state = 'stopped';
  }

  /** Look for work now (a job was enqueued or a slot freed). Coalesces concurrent calls. */
  protected wake(): void {
    if (this.state !== 'started') return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
    });
  }

  /** After an enqueue: wake this process at once, other processes through NOTIFY (PostgreSQL). */
  protected async announce(exec: Kysely<Database>, kind: string, due: boolean, inTransaction: boolean, postgres: boolean): Promise<void> {
    if (!due) return;
    if (postgres) await sql`SELECT pg_notify(${NOTIFY_CHANNEL}, ${kind})`.execute(exec);
    // On PostgreSQL a job inserted in a caller's transaction is invisible until commit: the NOTIFY above
    // wakes us then. On SQLite the one connection is held by the transaction, so a claim started now waits
    // for the commit (or rollback) and then sees exactly what was committed.
    if (!inTransaction || !postgres) this.wake();
  }

  private async onPoll(): Promise<void> {
    if (this.state !== 'started' || this.ticking) return;
    this.ticking = this.tick()
      .catch((err: unknown) => this.log('warn', 'job queue housekeeping failed', { err: errorText(err) }))
      .finally(() => {
        this.ticking = null;
      });
    await this.ticking;
    this.wake();
  }

  private async pump(): Promise<void> {
    do {
      this.pumpAgain = false;
      try {
        await this.claimRound();
      } catch (err) {
        this.log('warn', 'claiming jobs failed; retrying on the next poll', { err: errorText(err) });
        return;
      }
    } while (this.pumpAgain && this.state === 'started');
  }

  /** Round-robin over the kinds, each claiming up to its free slots, until none gets anything. */
  private async claimRound(): Promise<void> {
    const exhausted = new Set<string>();
    for (;;) {
      const kinds = [...this.workers.values()];
      if (kinds.length === 0) return;
      this.rotation = (this.rotation + 1) % kinds.length;
      const order = [...kinds.slice(this.rotation), ...kinds.slice(0, this.rotation)];
      let progress = false;
      for (const worker of order) {
        if (this.state !== 'started') return;
        const free = worker.concurrency - worker.running.size;
        if (free <= 0 || exhausted.has(worker.kind)) continue;
        const jobs = await this.claim(worker.kind, free);
        if (this.state !== 'started') {
          // stop() began while we claimed: give the jobs straight back.
          await Promise.allSettled(jobs.map((j) => this.release(j)));
          return;
        }
        if (jobs.length < free) exhausted.add(worker.kind);
        else progress = true;
        for (const job of jobs) this.launch(worker, job);
      }
      if (!progress) return;
    }
  }

  private launch(worker: Worker, job: ClaimedJob): void {
    const controller = new AbortController();
    const run: Run = { job, controller, done: Promise.resolve() };
    worker.running.add(run);
    this.runs.add(run);
    run.done = this.execute(worker, run)
      .catch((err: unknown) => this.log('error', 'job runner failed', { id: job.id, kind: job.kind, err: errorText(err) }))
      .finally(() => {
        worker.running.delete(run);
        this.runs.delete(run);
        this.wake();
      });
  }

  private async execute(worker: Worker, run: Run): Promise<void> {
    const { job, controller } = run;
    const maxAttempts = job.maxAttempts ?? worker.maxAttempts;
    let leaseLost = false;
    let renewedAt = Date.now();
    let renewing = false;
    let finished = false;
    const lose = (why: string) => {
      if (leaseLost || finished) return;
      leaseLost = true;
      this.log('warn', 'job lease lost; aborting its handler', { id: job.id, kind: job.kind, why });
      controller.abort(new JobAbortError(`lost the lease of job ${job.id}: ${why}`));
    };
    const heartbeat = setInterval(() => {
      if (renewing || finished) return;
      renewing = true;
      this.renew(job)
        .then((ok) => {
          if (ok) renewedAt = Date.now();
          else lose('another process took it over');
        })
        .catch((err: unknown) => {
          if (Date.now() - renewedAt >= this.leaseMs) lose(`could not renew it: ${errorText(err)}`);
        })
        .finally(() => {
          renewing = false;
        });
    }, this.heartbeatMs);

    let outcome: { ok: true } | { ok: false; err: unknown };
    try {
      await worker.handler({
        id: job.id,
        kind: job.kind,
        payload: job.payload,
        attempt: job.attempt,
        maxAttempts,
        signal: controller.signal,
      });
      outcome = { ok: true };
    } catch (err) {
      outcome = { ok: false, err };
    } finally {
      finished = true;
      clearInterval(heartbeat);
    }

    try {
      let recorded: boolean;
      let what: string;
      if (outcome.ok) {
        what = 'completed';
        recorded = await this.complete(job);
      } else if (controller.signal.aborted && !(outcome.err instanceof PermanentJobError)) {
        // Interrupted by stop() or a lost lease: no verdict from the handler, so no attempt is used up.
        what = 'given back';
        recorded = await this.release(job);
      } else {
        const error = errorText(outcome.err);
        const failures = job.failures + 1;
        if (outcome.err instanceof PermanentJobError || failures >= maxAttempts) {
          what = 'failed';
          recorded = await this.fail(job, error);
          if (recorded) this.log('warn', 'job failed', { id: job.id, kind: job.kind, attempt: job.attempt, error });
        } else {
          const delay = Math.max(0, worker.backoffMs(failures));
          what = 'retried';
          recorded = await this.retry(job, error, new Date(this.now().getTime() + delay));
          if (recorded) this.log('info', 'job will be retried', { id: job.id, kind: job.kind, attempt: job.attempt, delayMs: delay, error });
        }
      }
      if (!recorded) this.log('warn', `job outcome (${what}) discarded: another process owns the job now`, { id: job.id, kind: job.kind });
    } catch (err) {
      this.log('error', 'could not record a job outcome; the job runs again when its lease expires', {
        id: job.id,
        kind: job.kind,
        err: errorText(err),
      });
    }
  }
}
