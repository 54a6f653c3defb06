// The default job queue: durable in our own database (the `jobs` table, migration 0003-jobs), the same
// code on SQLite and PostgreSQL.
//
// States: queued → running → completed | failed, and running → queued on a retry, on stop(), or when the
// lease expired. A claim moves due queued jobs of one kind to running in one statement (SQLite: the
// statement holds the write lock; PostgreSQL: FOR UPDATE SKIP LOCKED, so several processes share the
// table), stamping lease_owner (this process's random id) and lease_until. The runner renews the lease
// while the handler runs; every later write of the run is fenced on (id, lease_owner, attempt), so a run
// whose lease was taken over cannot overwrite the newer run's outcome.
//
// Attempt accounting: `attempt` counts runs started; `recoveries` counts runs lost to an expired lease.
// Runs that ended in a handler error = attempt - 1 - recoveries before a run, and only those are held
// against max_attempts, so a crash never fails a job that had attempts left. Crash re-runs have their own
// bound (maxRecoveries, default 3): a job whose lease expires once more than that is failed, so a job
// that kills its process every time cannot crash-loop forever. A run interrupted by stop() is given back
// (attempt - 1) and counts as nothing.
import { sql, type Kysely, type Updateable } from 'kysely';
import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/database.js';
import type { Database, JobsTable } from '../storage/schema.js';
import type { EnqueueOptions, JobState, JsonValue, QueueStats } from './queue.js';
import { checkEnqueue, QueueRunner, type ClaimedJob, type RunnerOptions } from './runner.js';

export interface LocalQueueOptions extends RunnerOptions {
  db: Db;
  /** Completed jobs are deleted this long after they finished. Default 1 day. */
  completedRetentionMs?: number;
  /** Failed jobs are deleted this long after they finished. Default 7 days. */
  failedRetentionMs?: number;
  /** Run the retention sweep this often. Default 10 min. */
  sweepMs?: number;
}

const DAY = 24 * 60 * 60 * 1000;
const LEASE_EXPIRED = 'the job lease expired too many times (the process running it crashed, was killed or lost the database)';

let lastIdMs = 0;
let idSeq = 0;

/**
 * Job ids are UUIDv7 (48-bit ms timestamp, then a 12-bit sequence): jobs enqueued by this process in the
 * same millisecond keep their order in the claim order (run_at, created_at, id).
 */
export function timeOrderedId(nowMs: number = Date.now()): string {
  if (nowMs > lastIdMs) {
    lastIdMs = nowMs;
    idSeq = 0;
  } else if (++idSeq > 0xfff) {
    lastIdMs += 1;
    idSeq = 0;
  }
  const b = randomBytes(16);
  let ts = lastIdMs;
  for (let i = 5; i >= 0; i--) {
    b[i] = ts % 256;
    ts = Math.floor(ts / 256);
  }
  b[6] = 0x70 | (idSeq >> 8);
  b[7] = idSeq & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

type ClaimRow = Pick<JobsTable, 'id' | 'kind' | 'payload' | 'max_attempts'> & { attempt: number; recoveries: number };

export class LocalJobQueue extends QueueRunner {
  private readonly db: Db;
  private readonly completedRetentionMs: number;
  private readonly failedRetentionMs: number;
  private readonly sweepMs: number;
  private lastSweep = 0;

  constructor(options: LocalQueueOptions) {
    super(options);
    this.db = options.db;
    this.completedRetentionMs = options.completedRetentionMs ?? DAY;
    this.failedRetentionMs = options.failedRetentionMs ?? 7 * DAY;
    this.sweepMs = options.sweepMs ?? 10 * 60 * 1000;
  }

  private get postgres(): boolean {
    return this.db.dialect === 'postgres';
  }

  async enqueue<P extends JsonValue>(kind: string, payload: P, options: EnqueueOptions = {}): Promise<string> {
    const text = checkEnqueue(kind, payload, options);
    const exec = options.tx ?? this.db.kysely;
    const now = this.now();
    const runAt = options.runAt && options.runAt > now ? options.runAt : now;
    const key = options.singletonKey ?? null;
    // A singleton may finish between our conflicting insert and the look-up: then insert again.
    for (let tries = 0; ; tries++) {
      const id = timeOrderedId(now.getTime());
      const inserted = await exec
        .insertInto('jobs')
        .values({
          id,
          kind,
          payload: text,
          state: 'queued',
          attempt: 0,
          max_attempts: options.maxAttempts ?? null,
          recoveries: 0,
          run_at: runAt.toISOString(),
          singleton_key: key,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        })
        // The only constraint a new random id can meet is the singleton index.
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted) {
        await this.announce(exec, kind, runAt <= now, options.tx !== undefined, this.postgres);
        return id;
      }
      const existing = await exec
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', kind)
        .where('singleton_key', '=', key)
        .where('state', 'in', ['queued', 'running'])
        .executeTakeFirst();
      if (existing) return existing.id;
      if (tries >= 5) throw new Error(`could not enqueue ${kind} job with singleton key ${key}`);
    }
  }

  async position(jobId: string): Promise<number | null> {
    const db = this.db.kysely;
    const target = await db
      .selectFrom('jobs')
      .select(['kind', 'run_at', 'created_at', 'id'])
      .where('id', '=', jobId)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    if (!target) return null;
    // Claim order: run_at, created_at, id.
    const row = await db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '=', 'queued')
      .where('kind', '=', target.kind)
      .where((eb) =>
        eb.or([
          eb('run_at', '<', target.run_at),
          eb.and([
            eb('run_at', '=', target.run_at),
            eb.or([eb('created_at', '<', target.created_at), eb.and([eb('created_at', '=', target.created_at), eb('id', '<', target.id)])]),
          ]),
        ]),
      )
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async stats(): Promise<QueueStats> {
    const rows = await this.db.kysely
      .selectFrom('jobs')
      .select((eb) => ['kind', 'state', eb.fn.countAll<number>().as('n')])
      .groupBy(['kind', 'state'])
      .execute();
    const counts: QueueStats['counts'] = {};
    for (const r of rows) (counts[r.kind] ??= {})[r.state as JobState] = Number(r.n);
    return { counts };
  }

  async queuedCounts(): Promise<Record<string, number>> {
    // Served by jobs_claim_idx (state, kind, run_at) alone, however many finished jobs are retained.
    const rows = await this.db.kysely
      .selectFrom('jobs')
      .select((eb) => ['kind', eb.fn.countAll<number>().as('n')])
      .where('state', '=', 'queued')
      .groupBy('kind')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
  }

  protected async claim(kind: string, limit: number): Promise<ClaimedJob[]> {
    const now = this.now();
    const leaseUntil = new Date(now.getTime() + this.leaseMs).toISOString();
    const lock = this.postgres ? sql` FOR UPDATE SKIP LOCKED` : sql``;
    const { rows } = await sql<ClaimRow>`
      UPDATE jobs SET state = 'running', attempt = attempt + 1, lease_owner = ${this.ownerId},
        lease_until = ${leaseUntil}, updated_at = ${now.toISOString()}
      WHERE id IN (
        SELECT id FROM jobs
        WHERE state = 'queued' AND kind = ${kind} AND run_at <= ${now.toISOString()}
        ORDER BY run_at, created_at, id
        LIMIT ${limit}${lock}
      )
      RETURNING id, kind, payload, attempt, max_attempts, recoveries`.execute(this.db.kysely);
    const jobs: ClaimedJob[] = [];
    for (const r of rows) {
      const attempt = Number(r.attempt);
      const recoveries = Number(r.recoveries);
      let payload: JsonValue;
      try {
        payload = JSON.parse(r.payload) as JsonValue;
      } catch (err) {
        await this.fail({ id: r.id, kind: r.kind, fence: attempt } as ClaimedJob, `payload is not JSON: ${String(err)}`);
        continue;
      }
      jobs.push({
        id: r.id,
        kind: r.kind,
        payload,
        attempt,
        maxAttempts: r.max_attempts === null ? null : Number(r.max_attempts),
        failures: Math.max(0, attempt - 1 - recoveries),
        recoveries,
        fence: attempt,
      });
    }
    return jobs;
  }

  /** The rows of this run, while this process still owns it. */
  private owned(db: Kysely<Database>, job: ClaimedJob) {
    return db
      .updateTable('jobs')
      .where('id', '=', job.id)
      .where('state', '=', 'running')
      .where('lease_owner', '=', this.ownerId)
      .where('attempt', '=', job.fence);
  }

  private async write(job: ClaimedJob, set: Updateable<JobsTable>): Promise<boolean> {
    const result = await this.owned(this.db.kysely, job)
      .set({ ...set, updated_at: this.now().toISOString() })
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  protected renew(job: ClaimedJob): Promise<boolean> {
    return this.write(job, { lease_until: new Date(this.now().getTime() + this.leaseMs).toISOString() });
  }

  protected complete(job: ClaimedJob): Promise<boolean> {
    const now = this.now().toISOString();
    return this.write(job, { state: 'completed', finished_at: now, lease_owner: null, lease_until: null });
  }

  protected retry(job: ClaimedJob, error: string, runAt: Date): Promise<boolean> {
    return this.write(job, { state: 'queued', run_at: runAt.toISOString(), last_error: error, lease_owner: null, lease_until: null });
  }

  protected fail(job: ClaimedJob, error: string): Promise<boolean> {
    const now = this.now().toISOString();
    return this.write(job, { state: 'failed', finished_at: now, last_error: error, lease_owner: null, lease_until: null });
  }

  protected async release(job: ClaimedJob): Promise<boolean> {
    // run_at is untouched: the job keeps its place at the front of the queue.
    const result = await this.owned(this.db.kysely, job)
      .set((eb) => ({
        state: 'queued',
        attempt: eb('attempt', '-', 1),
        lease_owner: null,
        lease_until: null,
        updated_at: this.now().toISOString(),
      }))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  protected override async tick(): Promise<void> {
    await this.recoverExpired();
    if (Date.now() - this.lastSweep >= this.sweepMs) {
      this.lastSweep = Date.now();
      await this.sweep();
    }
  }

  /** Running jobs whose lease expired go back to the queue (or fail after maxRecoveries re-runs). */
  async recoverExpired(): Promise<number> {
    const now = this.now().toISOString();
    const { rows } = await sql<{ id: string; kind: string; state: string; recoveries: number }>`
      UPDATE jobs SET
        state = CASE WHEN recoveries >= ${this.maxRecoveries} THEN 'failed' ELSE 'queued' END,
        last_error = CASE WHEN recoveries >= ${this.maxRecoveries} THEN ${LEASE_EXPIRED} ELSE last_error END,
        finished_at = CASE WHEN recoveries >= ${this.maxRecoveries} THEN ${now} ELSE NULL END,
        recoveries = recoveries + 1,
        lease_owner = NULL, lease_until = NULL, updated_at = ${now}
      WHERE state = 'running' AND lease_until < ${now}
      RETURNING id, kind, state, recoveries`.execute(this.db.kysely);
    for (const r of rows) {
      this.log(r.state === 'failed' ? 'warn' : 'info', r.state === 'failed' ? 'job failed: lease expired too often' : 'job lease expired; re-queued', {
        id: r.id,
        kind: r.kind,
        recoveries: Number(r.recoveries),
      });
    }
    return rows.length;
  }

  /** Retention: completed jobs after completedRetentionMs, failed ones after failedRetentionMs. */
  async sweep(): Promise<number> {
    const now = this.now().getTime();
    let deleted = 0;
    for (const [state, keep] of [
      ['completed', this.completedRetentionMs],
      ['failed', this.failedRetentionMs],
    ] as const) {
      const r = await this.db.kysely
        .deleteFrom('jobs')
        .where('state', '=', state)
        .where('finished_at', '<', new Date(now - keep).toISOString())
        .executeTakeFirst();
      deleted += Number(r.numDeletedRows);
    }
    return deleted;
  }
}
