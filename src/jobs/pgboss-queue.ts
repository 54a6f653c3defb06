// The job queue contract on pg-boss 10 (PostgreSQL only), for deployments that want pg-boss's tables,
// tooling and maintenance. pg-boss keeps its schema (`pgboss` unless told otherwise) in the same database.
//
// What pg-boss does here: its schema and migrations, send() (through the caller's transaction: pg-boss's
// `db` option bound to the Kysely transaction), fetch() (claiming with FOR UPDATE SKIP LOCKED), complete()
// and fail() (its retry/fail state machine), and its maintenance: expiring active jobs whose expire_in
// passed (our lease), archiving finished jobs and deleting the archive.
//
// What we add on its tables, because pg-boss 10's work() cannot do it: work() runs each fetched batch under
// a fixed timeout of the job's expire_in and never extends it, so a long handler is either failed by its
// own process or needs an expire_in so long that a crash is noticed hours later; it cannot abort a handler
// on stop() and fails interrupted jobs (using up a retry). So we run our own loop over fetch() (shared
// with the local queue: runner.ts) with
//   - a lease: expire_in is reset to the lease on claim and extended by a heartbeat while the handler runs,
//     so a killed process's job is expired by pg-boss's maintenance after the lease (+ one maintenance
//     interval) and retried;
//   - fencing: every outcome is written only while the job is still active with the retry_count of this
//     run (pg-boss increments retry_count on every re-fetch), locked FOR UPDATE in a transaction that
//     then calls pg-boss's complete()/fail() with that transaction;
//   - our retry delays: start_after is set to the backoff the kind asks for right after fail();
//   - attempt accounting like the local queue: data = { payload, maxAttempts, failures }; failures count
//     handler errors against maxAttempts, and retry_limit is kept at "the runs still allowed" so that crash
//     re-runs (pg-boss's expiry → retry) have their own budget of maxRecoveries;
//   - singletonKey: pg-boss 10 deduplicates keys only per queue policy (and a singleton/stately policy
//     also limits jobs without a key), so enqueue takes a transaction-scoped advisory lock on (kind, key),
//     looks for an unfinished job with the key and returns it, or sends;
//   - NOTIFY in the enqueuing transaction, as in the local queue, for instant wake-ups.
import { setTimeout as sleep } from 'node:timers/promises';
import PgBoss from 'pg-boss';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Db } from '../storage/database.js';
import type { Database } from '../storage/schema.js';
import type { EnqueueOptions, JobState, JsonValue, QueueStats } from './queue.js';
import { checkEnqueue, errorText, QueueRunner, type ClaimedJob, type RunnerOptions } from './runner.js';

export interface PgBossQueueOptions extends RunnerOptions {
  /** Kysely over the same PostgreSQL database: enqueue({tx}), fencing, position() and stats(). */
  db: Db;
  /** pg-boss opens its own pool to this URL. */
  databaseUrl: string;
  /** pg-boss's schema. Default `pgboss`. */
  schema?: string;
  /** How often pg-boss's maintenance runs (expiry of lost leases, archiving). Default 30 s. */
  maintenanceIntervalSeconds?: number;
  /** Completed jobs move to pg-boss's archive after this long. Default 1 day. */
  completedRetentionSeconds?: number;
  /** Failed jobs move to the archive after this long. Default 7 days. */
  failedRetentionSeconds?: number;
}

interface Envelope {
  payload: JsonValue;
  maxAttempts: number | null;
  failures: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** First key of our two-int advisory locks (a key space apart from pg-boss's single bigint locks). */
const SINGLETON_LOCK_SPACE = 0x5061726c; // 'Parl'

function isEnvelope(data: unknown): data is Envelope {
  return typeof data === 'object' && data !== null && !Array.isArray(data) && 'payload' in data && 'failures' in data;
}

/** pg-boss's `db` option, running its SQL on a Kysely connection or transaction. */
function executor(db: Kysely<Database>): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[]) {
      const result = await db.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as unknown[] as never[] };
    },
  };
}

export class PgBossJobQueue extends QueueRunner {
  readonly boss: PgBoss;
  private readonly db: Db;
  private readonly schema: string;
  private readonly leaseSeconds: number;
  private booted: Promise<void> | null = null;
  private readonly queues = new Map<string, Promise<void>>();

  constructor(options: PgBossQueueOptions) {
    super({ ...options, listenUrl: options.listenUrl ?? options.databaseUrl });
    if (options.db.dialect !== 'postgres') throw new Error('the pg-boss job queue needs PostgreSQL (DATABASE_URL)');
    this.db = options.db;
    this.schema = options.schema ?? 'pgboss';
    if (!/^[a-z_][a-z0-9_]{0,49}$/.test(this.schema)) throw new TypeError(`invalid pg-boss schema name ${this.schema}`);
    this.leaseSeconds = this.leaseMs / 1000;
    this.boss = new PgBoss({
      connectionString: options.databaseUrl,
      schema: this.schema,
      application_name: 'parlance-pgboss',
      max: 4,
      migrate: true,
      supervise: true,
      schedule: false,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
      archiveCompletedAfterSeconds: options.completedRetentionSeconds ?? 24 * 60 * 60,
      archiveFailedAfterSeconds: options.failedRetentionSeconds ?? 7 * 24 * 60 * 60,
      deleteAfterDays: 1,
    });
    this.boss.on('error', (err: Error) => this.log('warn', 'pg-boss error', { err: errorText(err) }));
  }

  private get jobTable() {
    return sql.table(`${this.schema}.job`);
  }

  private get stateType() {
    return sql.raw(`${this.schema}.job_state`);
  }

  /** Start pg-boss (install or migrate its schema); enqueue() works before start(). */
  private ready(): Promise<void> {
    if (!this.booted) {
      this.booted = this.boss.start().then(() => undefined);
      this.booted.catch(() => (this.booted = null));
    }
    return this.booted;
  }

  private ensureQueue(kind: string): Promise<void> {
    let created = this.queues.get(kind);
    if (!created) {
      created = this.ready().then(() => this.createQueue(kind));
      created.catch(() => this.queues.delete(kind));
      this.queues.set(kind, created);
    }
    return created;
  }

  private async createQueue(kind: string): Promise<void> {
    // Two processes creating the same queue at once can deadlock inside pg-boss's create_queue() (the new
    // partition's foreign key locks the queue table that the other's insert is waiting on); PostgreSQL
    // aborts one of them, which then finds the queue made by the other.
    for (let attempt = 1; ; attempt++) {
      try {
        if (await this.boss.getQueue(kind)) return;
        await this.boss.createQueue(kind, { name: kind, policy: 'standard' });
        return;
      } catch (err) {
        if (attempt >= 5 || (err as { code?: string }).code !== '40P01') throw err;
        await sleep(20 * attempt + Math.random() * 50);
      }
    }
  }

  protected override async onStart(): Promise<void> {
    await this.ready();
    await Promise.all(this.kinds().map((k) => this.ensureQueue(k)));
    // Jobs whose lease ran out while no process was up are retried now, not at the next maintenance.
    await this.boss.expire().catch((err: unknown) => this.log('warn', 'pg-boss expire failed', { err: errorText(err) }));
  }

  protected override async onStop(): Promise<void> {
    if (!this.booted) return;
    await this.booted.catch(() => undefined);
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: 1000 });
  }

  async enqueue<P extends JsonValue>(kind: string, payload: P, options: EnqueueOptions = {}): Promise<string> {
    checkEnqueue(kind, payload, options);
    await this.ensureQueue(kind);
    const due = !options.runAt || options.runAt <= this.now();
    const data: Envelope = { payload, maxAttempts: options.maxAttempts ?? null, failures: 0 };
    const insert = async (tx: Kysely<Database>): Promise<string> => {
      const key = options.singletonKey;
      if (key !== undefined) {
        // Held until the transaction ends: a second enqueue of the key waits, then finds this job.
        await sql`SELECT pg_advisory_xact_lock(${SINGLETON_LOCK_SPACE}, hashtext(${`${kind}/${key}`}))`.execute(tx);
        const { rows } = await sql<{ id: string }>`
          SELECT id FROM ${this.jobTable}
          WHERE name = ${kind} AND singleton_key = ${key} AND state < 'completed' LIMIT 1`.execute(tx);
        if (rows[0]) return rows[0].id;
      }
      const id = await this.boss.send(kind, data as unknown as object, {
        db: executor(tx),
        // Until a handler error is recorded, only crash re-runs (expiry → retry) are allowed.
        retryLimit: this.maxRecoveries,
        retryDelay: 0,
        retryBackoff: false,
        expireInSeconds: Math.max(1, Math.ceil(this.leaseSeconds)),
        // A queued job must never be archived unrun (pg-boss's default keeps it 14 days).
        retentionDays: 3650,
        ...(options.runAt ? { startAfter: options.runAt } : {}),
        ...(key !== undefined ? { singletonKey: key } : {}),
      });
      if (!id) throw new Error(`pg-boss did not create the ${kind} job`);
      await this.announce(tx, kind, due, true, true);
      return id;
    };
    if (options.tx) return insert(options.tx);
    const id = await this.db.kysely.transaction().execute(insert);
    this.wake();
    return id;
  }

  async position(jobId: string): Promise<number | null> {
    if (!UUID.test(jobId)) return null;
    await this.ready();
    // pg-boss's fetch order: priority desc, created_on, id, among jobs whose start_after has passed.
    const { rows } = await sql<{ n: number }>`
      WITH t AS (
        SELECT name, priority, created_on, id, start_after FROM ${this.jobTable}
        WHERE id = ${jobId} AND state < 'active'
      )
      SELECT (
        SELECT count(*) FROM ${this.jobTable} j
        WHERE j.name = t.name AND j.state < 'active' AND j.id <> t.id
          AND j.start_after <= GREATEST(t.start_after, now())
          AND (j.priority > t.priority OR (j.priority = t.priority
            AND (j.created_on < t.created_on OR (j.created_on = t.created_on AND j.id < t.id))))
      ) AS n FROM t`.execute(this.db.kysely);
    return rows[0] ? Number(rows[0].n) : null;
  }

  async stats(): Promise<QueueStats> {
    await this.ready();
    const { rows } = await sql<{ name: string; state: string; n: number }>`
      SELECT name, state::text AS state, count(*) AS n FROM ${this.jobTable} GROUP BY name, state`.execute(this.db.kysely);
    const map: Record<string, JobState> = {
      created: 'queued',
      retry: 'queued',
      active: 'running',
      completed: 'completed',
      failed: 'failed',
      cancelled: 'failed',
    };
    const counts: QueueStats['counts'] = {};
    for (const r of rows) {
      const state = map[r.state];
      if (!state) continue;
      const perKind = (counts[r.name] ??= {});
      perKind[state] = (perKind[state] ?? 0) + Number(r.n);
    }
    return { counts };
  }

  async queuedCounts(): Promise<Record<string, number>> {
    await this.ready();
    // created and retry: pg-boss's fetch index (job_i5, WHERE state < 'active') covers them, not its finished jobs.
    const { rows } = await sql<{ name: string; n: number }>`
      SELECT name, count(*) AS n FROM ${this.jobTable} WHERE state < 'active' GROUP BY name`.execute(this.db.kysely);
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
  }

  protected async claim(kind: string, limit: number): Promise<ClaimedJob[]> {
    await this.ensureQueue(kind);
    const fetched = await this.boss.fetch<unknown>(kind, { batchSize: limit, includeMetadata: true });
    if (fetched.length === 0) return [];
    // The lease starts now, whatever expire_in an earlier run's heartbeat left behind.
    await sql`
      UPDATE ${this.jobTable} SET expire_in = make_interval(secs => ${this.leaseSeconds})
      WHERE name = ${kind} AND id = ANY(${fetched.map((j) => j.id)}::uuid[]) AND state = 'active'`.execute(this.db.kysely);
    return fetched.map((j) => {
      const env: Envelope = isEnvelope(j.data) ? j.data : { payload: (j.data ?? null) as JsonValue, maxAttempts: null, failures: 0 };
      const failures = Math.min(Number(env.failures) || 0, j.retryCount);
      return {
        id: j.id,
        kind,
        payload: env.payload,
        attempt: j.retryCount + 1,
        maxAttempts: env.maxAttempts,
        failures,
        recoveries: j.retryCount - failures,
        fence: j.retryCount,
      };
    });
  }

  protected async renew(job: ClaimedJob): Promise<boolean> {
    const result = await sql`
      UPDATE ${this.jobTable} SET expire_in = (now() - started_on) + make_interval(secs => ${this.leaseSeconds})
      WHERE name = ${job.kind} AND id = ${job.id} AND state = 'active' AND retry_count = ${job.fence}`.execute(this.db.kysely);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  /** Run `fn` in a transaction holding this run's job row, if the run still owns it. */
  private fenced(job: ClaimedJob, fn: (tx: Kysely<Database>) => Promise<void>): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (tx) => {
      const { rows } = await sql`
        SELECT 1 FROM ${this.jobTable}
        WHERE name = ${job.kind} AND id = ${job.id} AND state = 'active' AND retry_count = ${job.fence}
        FOR UPDATE`.execute(tx);
      if (rows.length === 0) return false;
      await fn(tx);
      return true;
    });
  }

  private recordFailure(tx: Kysely<Database>, job: ClaimedJob, retryLimit: number) {
    return sql`
      UPDATE ${this.jobTable} SET retry_limit = ${retryLimit},
        data = CASE WHEN jsonb_typeof(data) = 'object' THEN jsonb_set(data, '{failures}', to_jsonb(${job.failures + 1}::int)) ELSE data END
      WHERE name = ${job.kind} AND id = ${job.id}`.execute(tx);
  }

  protected complete(job: ClaimedJob): Promise<boolean> {
    return this.fenced(job, async (tx) => {
      await this.boss.complete(job.kind, job.id, {}, { db: executor(tx) });
    });
  }

  protected retry(job: ClaimedJob, error: string, runAt: Date): Promise<boolean> {
    return this.fenced(job, async (tx) => {
      // This run and the next one, plus whatever is left of the crash re-run budget.
      await this.recordFailure(tx, job, job.fence + 1 + Math.max(0, this.maxRecoveries - job.recoveries));
      await this.boss.fail(job.kind, job.id, { message: error }, { db: executor(tx) });
      await sql`
        UPDATE ${this.jobTable} SET start_after = ${runAt}
        WHERE name = ${job.kind} AND id = ${job.id} AND state = 'retry'`.execute(tx);
    });
  }

  protected fail(job: ClaimedJob, error: string): Promise<boolean> {
    return this.fenced(job, async (tx) => {
      await this.recordFailure(tx, job, job.fence); // no retries left: pg-boss's fail() ends in `failed`
      await this.boss.fail(job.kind, job.id, { message: error }, { db: executor(tx) });
    });
  }

  protected async release(job: ClaimedJob): Promise<boolean> {
    // As if the run never started: fetch() adds 1 to retry_count when started_on is set, so take it back.
    const result = await sql`
      UPDATE ${this.jobTable} SET
        state = CASE WHEN retry_count = 0 THEN 'created'::${this.stateType} ELSE 'retry'::${this.stateType} END,
        started_on = CASE WHEN retry_count = 0 THEN NULL ELSE started_on END,
        retry_count = GREATEST(retry_count - 1, 0)
      WHERE name = ${job.kind} AND id = ${job.id} AND state = 'active' AND retry_count = ${job.fence}`.execute(this.db.kysely);
    return Number(result.numAffectedRows ?? 0) > 0;
  }
}
