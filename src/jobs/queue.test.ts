// The job queue contract against real databases: the local queue on SQLite and on PostgreSQL, and the
// pg-boss queue on PostgreSQL. Crash recovery kills a real child process with SIGKILL.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, ROOT, tempDir } from '../../test/harness.js';
import { openDatabase, type Db } from '../storage/database.js';
import { createJobQueue, defaultBackoffMs, LocalJobQueue, PermanentJobError, PgBossJobQueue, type Job, type JobQueue, type JobState } from './index.js';
import { timeOrderedId } from './local-queue.js';
import type { JsonValue } from './queue.js';

type Mode = 'local' | 'pg-boss';

interface Target {
  dataDir: string;
  databaseUrl?: string;
  cleanup(): Promise<void>;
}

const FAST = { pollMs: 100, leaseMs: 1000, heartbeatMs: 250, stopTimeoutMs: 5000 };

const targets: [string, Mode, 'sqlite' | 'postgres'][] = [
  ['local/sqlite', 'local', 'sqlite'],
  ['local/postgres', 'local', 'postgres'],
  ['pg-boss/postgres', 'pg-boss', 'postgres'],
];

async function makeTarget(dialect: 'sqlite' | 'postgres'): Promise<Target> {
  const dataDir = tempDir('parlance-jobs-');
  if (dialect === 'sqlite') return { dataDir, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
  const pgdb = await createPgDatabase();
  return {
    dataDir,
    databaseUrl: pgdb.url,
    cleanup: async () => {
      await pgdb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function waitFor<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

let kindSeq = 0;
const newKind = (name: string) => `${name}-${++kindSeq}-${process.pid}`;

describe('defaultBackoffMs', () => {
  it('grows from about 1 s, doubling, capped at 5 min, with jitter', () => {
    for (let i = 0; i < 50; i++) {
      const one = defaultBackoffMs(1);
      expect(one).toBeGreaterThanOrEqual(800);
      expect(one).toBeLessThanOrEqual(1200);
      const three = defaultBackoffMs(3);
      expect(three).toBeGreaterThanOrEqual(3200);
      expect(three).toBeLessThanOrEqual(4800);
      expect(defaultBackoffMs(30)).toBeLessThanOrEqual(300_000);
      expect(defaultBackoffMs(30)).toBeGreaterThanOrEqual(240_000);
    }
  });

  it('local job ids sort in creation order within a millisecond', () => {
    const ids = Array.from({ length: 200 }, () => timeOrderedId(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe.each(targets)('job queue (%s)', (_name, mode, dialect) => {
  let target: Target;
  let db: Db;
  const queues: JobQueue[] = [];
  const extraDbs: Db[] = [];
  const children: ChildProcessWithoutNullStreams[] = [];
  const logs: { level: string; msg: string; detail?: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    target = await makeTarget(dialect);
    db = await openDatabase({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
  });

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    await Promise.all(queues.splice(0).map((q) => q.stop()));
    await Promise.all(extraDbs.splice(0).map((d) => d.close()));
  });

  afterAll(async () => {
    await db?.close();
    await target?.cleanup();
  });

  function newQueue(overrides: Record<string, unknown> = {}, onDb: Db = db): JobQueue {
    const q = createJobQueue({
      db: onDb,
      databaseUrl: target.databaseUrl,
      mode,
      log: (level, msg, detail) => logs.push({ level, msg, detail }),
      ...FAST,
      pgBoss: { maintenanceIntervalSeconds: 1 },
      ...overrides,
    });
    queues.push(q);
    return q;
  }

  /** The job's stored state, read from the implementation's own table. */
  async function inspect(id: string): Promise<{ state: JobState; lastError: string | null } | undefined> {
    if (mode === 'local') {
      const row = await db.kysely.selectFrom('jobs').select(['state', 'last_error']).where('id', '=', id).executeTakeFirst();
      return row && { state: row.state, lastError: row.last_error };
    }
    const { rows } = await sql<{ state: string; output: { message?: string } | null }>`
      SELECT state::text AS state, output FROM pgboss.job WHERE id = ${id}`.execute(db.kysely);
    const row = rows[0];
    if (!row) return undefined;
    const state = ({ created: 'queued', retry: 'queued', active: 'running', completed: 'completed', failed: 'failed' } as const)[row.state as 'created'];
    return { state, lastError: row.output?.message ?? null };
  }

  /** When the job's current lease ends (ms since the epoch), from the implementation's own table. */
  async function leaseEnd(id: string): Promise<number | undefined> {
    if (mode === 'local') {
      const row = await db.kysely.selectFrom('jobs').select('lease_until').where('id', '=', id).executeTakeFirst();
      return row?.lease_until ? Date.parse(row.lease_until) : undefined;
    }
    const { rows } = await sql<{ until: number | null }>`
      SELECT (extract(epoch FROM started_on + expire_in) * 1000)::float8 AS until FROM pgboss.job WHERE id = ${id}`.execute(db.kysely);
    return rows[0]?.until ?? undefined;
  }

  async function countsOf(q: JobQueue, kind: string) {
    return (await q.stats()).counts[kind] ?? {};
  }

  it('runs an enqueued job once with its payload', async () => {
    const kind = newKind('once');
    const q = newQueue();
    const seen: Job[] = [];
    q.work<{ n: number; s: string }>(kind, async (job) => void seen.push(job as Job), { concurrency: 1 });
    await q.start();
    const id = await q.enqueue(kind, { n: 7, s: 'héllo' });
    await waitFor(async () => (await inspect(id))?.state === 'completed', 'completion');
    // Once the runner has claimed and run a job enqueued after it, and has stopped (waiting for every run), the count
    // is final: a second run of the first job would have been claimed first.
    const after = await q.enqueue(kind, { n: 8, s: 'after' });
    await waitFor(async () => (await inspect(after))?.state === 'completed', 'the job enqueued after it');
    expect(await countsOf(q, kind)).toEqual({ completed: 2 });
    await q.stop();
    expect(seen.map((j) => j.id)).toEqual([id, after]);
    expect(seen[0]).toMatchObject({ id, kind, payload: { n: 7, s: 'héllo' }, attempt: 1, maxAttempts: 1 });
    expect(seen[0]!.signal.aborted).toBe(false);
  });

  it('never runs more than `concurrency` handlers of a kind, and serves every kind', async () => {
    const busy = newKind('busy');
    const other = newKind('other');
    const q = newQueue();
    let running = 0;
    let peak = 0;
    let done = 0;
    // Each busy handler holds its slot until the test lets it go.
    const holding: (() => void)[] = [];
    const otherStartedWhileBusy: number[] = [];
    q.work(
      busy,
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => holding.push(resolve));
        running--;
        done++;
      },
      { concurrency: 3 },
    );
    q.work(other, async () => void otherStartedWhileBusy.push(running), { concurrency: 1 });
    for (let i = 0; i < 12; i++) await q.enqueue(busy, { i });
    await q.start();
    await waitFor(() => running >= 3, 'three busy jobs to start');
    // The other kind is served while the busy kind holds all its slots, and that claim took no fourth busy job.
    await q.enqueue(other, {});
    await waitFor(() => otherStartedWhileBusy.length === 1, 'the other kind');
    expect(otherStartedWhileBusy).toEqual([3]);
    expect(running).toBe(3);
    // Let the busy jobs go as they come, three at a time at most.
    while (done < 12) {
      await waitFor(() => holding.length > 0 || done === 12, 'the next busy jobs');
      for (const release of holding.splice(0)) release();
    }
    expect(peak).toBe(3);
  });

  it('retries with backoff until maxAttempts, then fails with the last error', async () => {
    const kind = newKind('retry');
    const q = newQueue();
    const runs: { attempt: number; max: number; at: number }[] = [];
    q.work(
      kind,
      async (job) => {
        runs.push({ attempt: job.attempt, max: job.maxAttempts, at: Date.now() });
        throw new Error(`boom ${job.attempt}`);
      },
      { concurrency: 1, maxAttempts: 3, backoffMs: (n) => n * 300 },
    );
    await q.start();
    const id = await q.enqueue(kind, {});
    await waitFor(async () => (await inspect(id))?.state === 'failed', 'failure');
    expect(runs.map((r) => [r.attempt, r.max])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(280);
    expect(runs[2]!.at - runs[1]!.at).toBeGreaterThanOrEqual(580);
    expect((await inspect(id))!.lastError).toContain('boom 3');
    // maxAttempts given at enqueue wins over the kind's default.
    const once = await q.enqueue(kind, {}, { maxAttempts: 1 });
    await waitFor(async () => (await inspect(once))?.state === 'failed', 'failure of the single-attempt job');
    expect(runs).toHaveLength(4);
  });

  it('fails at once on PermanentJobError', async () => {
    const kind = newKind('permanent');
    const q = newQueue();
    const calls: string[] = [];
    q.work(
      kind,
      async (job) => {
        calls.push(job.id);
        throw new PermanentJobError('bad input, never retry');
      },
      { concurrency: 1, maxAttempts: 5, backoffMs: () => 10 },
    );
    await q.start();
    const id = await q.enqueue(kind, {});
    await waitFor(async () => (await inspect(id))?.state === 'failed', 'failure');
    // The runner has run a job enqueued after it and stopped (waiting for every run): the count is final.
    const after = await q.enqueue(kind, {});
    await waitFor(async () => (await inspect(after))?.state === 'failed', 'the job enqueued after it');
    await q.stop();
    expect(calls).toEqual([id, after]);
    expect((await inspect(id))!.lastError).toContain('bad input, never retry');
  });

  it('enqueues inside a transaction: a rollback leaves no job, a commit runs it (woken without polling)', async () => {
    const kind = newKind('tx');
    // No poll after the first one while this test runs: a job can only start through the wake-up after the commit.
    const q = newQueue({ pollMs: 3_600_000 });
    const ran: JsonValue[] = [];
    q.work(kind, async (job) => void ran.push(job.payload), { concurrency: 1 });
    await q.start();
    await sleep(100);

    await expect(
      db.kysely.transaction().execute(async (tx) => {
        await tx
          .insertInto('instance_settings')
          .values({ key: `${kind}-rolled-back`, value: 'x' })
          .execute();
        await q.enqueue(kind, { which: 'rolled back' }, { tx });
        throw new Error('roll it back');
      }),
    ).rejects.toThrow('roll it back');

    const id = await db.kysely.transaction().execute(async (tx) => {
      await tx
        .insertInto('instance_settings')
        .values({ key: `${kind}-committed`, value: 'x' })
        .execute();
      const jobId = await q.enqueue(kind, { which: 'committed' }, { tx });
      await sleep(300); // the runner must not see the job before the commit
      expect(ran).toEqual([]);
      return jobId;
    });
    await waitFor(async () => (await inspect(id))?.state === 'completed', 'the committed job');
    expect(await countsOf(q, kind)).toEqual({ completed: 1 });
    await q.stop(); // every run has ended: `ran` is final
    expect(ran).toEqual([{ which: 'committed' }]);
    const keys = await db.kysely.selectFrom('instance_settings').select('key').where('key', 'like', `${kind}-%`).execute();
    expect(keys.map((k) => k.key)).toEqual([`${kind}-committed`]);
  });

  it('deduplicates unfinished jobs by singletonKey', async () => {
    const kind = newKind('singleton');
    const q = newQueue();
    const a = await q.enqueue(kind, { n: 1 }, { singletonKey: 'k1' });
    expect(await q.enqueue(kind, { n: 2 }, { singletonKey: 'k1' })).toBe(a);
    const concurrent = await Promise.all(Array.from({ length: 5 }, (_, i) => q.enqueue(kind, { n: i }, { singletonKey: 'k2' })));
    expect(new Set(concurrent).size).toBe(1);
    const other = await q.enqueue(kind, { n: 3 });
    expect(other).not.toBe(a);
    expect(await countsOf(q, kind)).toEqual({ queued: 3 });

    const gate = deferred();
    const ran: JsonValue[] = [];
    q.work(
      kind,
      async (job) => {
        ran.push(job.payload);
        await gate.promise;
      },
      { concurrency: 3 },
    );
    await q.start();
    await waitFor(() => ran.length === 3, 'three jobs running');
    // Running counts as unfinished.
    expect(await q.enqueue(kind, { n: 4 }, { singletonKey: 'k1' })).toBe(a);
    gate.resolve();
    await waitFor(async () => (await countsOf(q, kind)).completed === 3, 'completion');
    const again = await q.enqueue(kind, { n: 5 }, { singletonKey: 'k1' });
    expect(again).not.toBe(a);
    await waitFor(async () => (await inspect(again))?.state === 'completed', 'the new singleton job');
  });

  it('does not run a job before runAt', async () => {
    const kind = newKind('delayed');
    const q = newQueue();
    const started = new Map<string, number>();
    q.work(kind, async (job) => void started.set(job.id, Date.now()), { concurrency: 1 });
    await q.start();
    const runAt = new Date(Date.now() + 800);
    const id = await q.enqueue(kind, {}, { runAt });
    const notYet = await q.enqueue(kind, {}, { runAt: new Date(Date.now() + 3_600_000) });
    await waitFor(() => started.has(id), 'the delayed job');
    // It starts once its runAt has come (however late a busy machine gets to it), never before; the clock may round
    // by a few milliseconds. A job of the same kind whose runAt is still ahead is not touched meanwhile.
    expect(started.get(id)).toBeGreaterThanOrEqual(runAt.getTime() - 10);
    expect(await inspect(notYet)).toMatchObject({ state: 'queued' });
    expect(started.has(notYet)).toBe(false);
  });

  it('reports the position of queued jobs in claim order', async () => {
    const kind = newKind('position');
    const q = newQueue();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await q.enqueue(kind, { i }));
    const later = await q.enqueue(kind, { i: 'later' }, { runAt: new Date(Date.now() + 60_000) });
    expect(await Promise.all(ids.map((id) => q.position(id)))).toEqual([0, 1, 2, 3]);
    expect(await q.position(later)).toBe(4);
    expect(await q.position('00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await q.position('not-a-job')).toBeNull();

    const gate = deferred();
    const started: JsonValue[] = [];
    q.work(
      kind,
      async (job) => {
        started.push(job.payload);
        await gate.promise;
      },
      { concurrency: 1 },
    );
    await q.start();
    await waitFor(() => started.length === 1, 'the first job');
    expect(started).toEqual([{ i: 0 }]);
    expect(await Promise.all(ids.map((id) => q.position(id)))).toEqual([null, 0, 1, 2]);
    gate.resolve();
    await waitFor(() => started.length === 4, 'the rest');
    expect(started).toEqual([0, 1, 2, 3].map((i) => ({ i })));
    expect(await q.position(later)).toBe(0);
  });

  it('counts jobs per kind and state', async () => {
    const kind = newKind('stats');
    const q = newQueue();
    const gate = deferred();
    q.work(
      kind,
      async (job) => {
        const p = job.payload as { do: string };
        if (p.do === 'fail') throw new PermanentJobError('no');
        if (p.do === 'block') await gate.promise;
      },
      { concurrency: 2 },
    );
    await q.start();
    const ok = await q.enqueue(kind, { do: 'ok' });
    const bad = await q.enqueue(kind, { do: 'fail' });
    await waitFor(async () => (await inspect(ok))?.state === 'completed' && (await inspect(bad))?.state === 'failed', 'the first two');
    const blocked = await q.enqueue(kind, { do: 'block' });
    await waitFor(async () => (await inspect(blocked))?.state === 'running', 'the blocking job');
    await q.enqueue(kind, { do: 'ok' }, { runAt: new Date(Date.now() + 60_000) });
    await q.enqueue(kind, { do: 'ok' }, { runAt: new Date(Date.now() + 60_000) });
    expect(await countsOf(q, kind)).toEqual({ completed: 1, failed: 1, running: 1, queued: 2 });
    expect((await q.queuedCounts())[kind]).toBe(2);
    gate.resolve();
  });

  it.runIf(dialect === 'sqlite')('counts queued jobs from the claim index alone (SQLite: a covering index search)', async () => {
    // The statement LocalQueue.queuedCounts() sends.
    const { rows } = await sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT kind, count(*) AS n FROM jobs WHERE state = 'queued' GROUP BY kind`.execute(
      db.kysely,
    );
    expect(rows.map((r) => r.detail).join('\n')).toMatch(/SEARCH jobs USING COVERING INDEX jobs_claim_idx \(state=\?\)/);
  });

  it('stop() aborts job.signal, waits for the handler and gives the job back without using an attempt', async () => {
    const kind = newKind('stop');
    const q = newQueue();
    let settled = false;
    let signal: AbortSignal | undefined;
    q.work(
      kind,
      async (job) => {
        signal = job.signal;
        try {
          await untilAborted(job.signal);
        } finally {
          await sleep(200); // cleaning up takes a while; stop() waits for it
          settled = true;
        }
      },
      { concurrency: 1, maxAttempts: 1 },
    );
    await q.start();
    const id = await q.enqueue(kind, {});
    await waitFor(() => signal, 'the handler');
    await q.stop();
    expect(signal!.aborted).toBe(true);
    expect(settled).toBe(true);
    expect(await inspect(id)).toMatchObject({ state: 'queued' });

    const q2 = newQueue();
    const attempts: number[] = [];
    q2.work(kind, async (job) => void attempts.push(job.attempt), { concurrency: 1, maxAttempts: 1 });
    await q2.start();
    await waitFor(async () => (await inspect(id))?.state === 'completed', 'the job on the next queue');
    expect(attempts).toEqual([1]);
  });

  it('two queues sharing the database run each of 100 jobs exactly once, never concurrently', async () => {
    const kind = newKind('shared');
    const db2 = await openDatabase({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
    extraDbs.push(db2);
    const qa = newQueue();
    const qb = newQueue({}, db2);
    const runs = new Map<number, number>();
    const active = new Set<number>();
    const overlaps: number[] = [];
    const byQueue = [0, 0];
    const handler = (which: number) => async (job: Job) => {
      const n = (job.payload as { n: number }).n;
      if (active.has(n)) overlaps.push(n);
      active.add(n);
      runs.set(n, (runs.get(n) ?? 0) + 1);
      byQueue[which]!++;
      await sleep(5 + (n % 7));
      active.delete(n);
    };
    qa.work(kind, handler(0), { concurrency: 4 });
    qb.work(kind, handler(1), { concurrency: 4 });
    await Promise.all([qa.start(), qb.start()]);
    for (let i = 0; i < 100; i++) await (i % 2 ? qa : qb).enqueue(kind, { n: i });
    await waitFor(async () => (await countsOf(qa, kind)).completed === 100, '100 completions', 30_000);
    expect(overlaps).toEqual([]);
    expect(runs.size).toBe(100);
    expect([...runs.values()].every((c) => c === 1)).toBe(true);
    expect(byQueue[0]! + byQueue[1]!).toBe(100);
    expect(byQueue[0]).toBeGreaterThan(0);
    expect(byQueue[1]).toBeGreaterThan(0);
  });

  it('recovers the job of a process killed with SIGKILL: it runs again as attempt 2 and completes', async () => {
    const kind = newKind('crash');
    const q = newQueue();
    const id = await q.enqueue(kind, { important: true }, { maxAttempts: 1 });

    const childFile = path.join(target.dataDir, 'crash-child.mts');
    writeFileSync(
      childFile,
      `import { openDatabase } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/storage/database.ts')).href)};
import { createJobQueue } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/jobs/index.ts')).href)};
const [dataDir, databaseUrl, mode, kind, fast] = JSON.parse(process.argv[2]);
const db = await openDatabase({ dataDir, databaseUrl: databaseUrl || undefined });
const q = createJobQueue({ db, databaseUrl: databaseUrl || undefined, mode, ...fast, pgBoss: { maintenanceIntervalSeconds: 1 } });
q.work(kind, async (job) => {
  process.stdout.write('started ' + job.id + ' ' + job.attempt + '\\n');
  await new Promise(() => {});
}, { concurrency: 1 });
await q.start();
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', childFile, JSON.stringify([target.dataDir, target.databaseUrl ?? '', mode, kind, FAST])], {
      cwd: ROOT,
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    await waitFor(() => out.includes(`started ${id} 1`) || child.exitCode !== null, 'the child to start the job', 20_000);
    expect(child.exitCode, err).toBeNull();
    expect(await inspect(id)).toMatchObject({ state: 'running' });
    // Let the child heartbeat past one lease, so recovery is not just the first lease running out: wait until it has
    // renewed the lease at a moment when the first one had already ended.
    const firstLeaseEnd = (await leaseEnd(id))!;
    await waitFor(async () => ((await leaseEnd(id)) ?? 0) > firstLeaseEnd + FAST.leaseMs, 'a renewal past the first lease', 20_000);
    expect(await inspect(id)).toMatchObject({ state: 'running' });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    const attempts: number[] = [];
    q.work(kind, async (job) => void attempts.push(job.attempt), { concurrency: 1, maxAttempts: 1 });
    await q.start();
    await waitFor(async () => (await inspect(id))?.state === 'completed', 'the recovered job', 20_000);
    expect(attempts).toEqual([2]);
  });

  if (mode === 'local') {
    it("aborts job.signal when the lease is taken away, and discards that run's outcome", async () => {
      const kind = newKind('lease');
      const q = newQueue();
      let signal: AbortSignal | undefined;
      q.work(
        kind,
        async (job) => {
          signal = job.signal;
          await untilAborted(job.signal);
        },
        { concurrency: 1 },
      );
      await q.start();
      const id = await q.enqueue(kind, {});
      await waitFor(() => signal, 'the handler');
      await db.kysely.updateTable('jobs').set({ lease_owner: 'someone-else' }).where('id', '=', id).execute();
      await waitFor(() => signal!.aborted, 'the abort');
      await q.stop(); // the run has ended: whatever it was going to write is written
      const row = await db.kysely.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'running', lease_owner: 'someone-else' });
      expect(logs.some((l) => l.msg.startsWith('job lease lost') && l.detail?.id === id)).toBe(true);
      await db.kysely.deleteFrom('jobs').where('id', '=', id).execute();
    });

    it('fails a job whose lease expired more than maxRecoveries times, and keeps counting handler errors apart', async () => {
      const kind = newKind('recoveries');
      const q = newQueue({ maxRecoveries: 2 }) as LocalJobQueue;
      const past = new Date(Date.now() - 10_000).toISOString();
      const base = { kind, payload: '{}', max_attempts: 2, run_at: past, created_at: past, updated_at: past, lease_owner: 'dead', lease_until: past };
      await db.kysely
        .insertInto('jobs')
        .values([
          { ...base, id: timeOrderedId(), state: 'running', attempt: 3, recoveries: 2 },
          { ...base, id: timeOrderedId(), state: 'running', attempt: 3, recoveries: 1 },
        ])
        .execute();
      expect(await q.recoverExpired()).toBe(2);
      const rows = await db.kysely.selectFrom('jobs').selectAll().where('kind', '=', kind).orderBy('id').execute();
      expect(rows[0]).toMatchObject({ state: 'failed', recoveries: 3, lease_owner: null });
      expect(rows[0]!.last_error).toContain('lease expired');
      expect(rows[1]).toMatchObject({ state: 'queued', recoveries: 2, lease_owner: null });
      // attempt 3 after 2 runs: 1 crash + 1 failure, so with max_attempts 2 one more failure ends it.
      const attempts: number[] = [];
      q.work(
        kind,
        async (job) => {
          attempts.push(job.attempt);
          throw new Error('still broken');
        },
        { concurrency: 1, backoffMs: () => 10 },
      );
      await q.start();
      await waitFor(async () => (await inspect(rows[1]!.id))?.state === 'failed', 'the failure');
      expect(attempts).toEqual([4]);
    });

    it('deletes completed jobs after a day and failed jobs after a week', async () => {
      const kind = newKind('retention');
      const q = newQueue() as LocalJobQueue;
      const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
      const day = 24 * 3600 * 1000;
      const row = (state: 'completed' | 'failed', finished: string) => ({
        id: timeOrderedId(),
        kind,
        payload: '{}',
        state,
        max_attempts: null,
        run_at: finished,
        created_at: finished,
        updated_at: finished,
        finished_at: finished,
      });
      await db.kysely
        .insertInto('jobs')
        .values([row('completed', ago(2 * day)), row('completed', ago(3600_000)), row('failed', ago(2 * day)), row('failed', ago(8 * day))])
        .execute();
      expect(await q.sweep()).toBeGreaterThanOrEqual(2);
      expect(await countsOf(q, kind)).toEqual({ completed: 1, failed: 1 });
    });
  }
});

describe('createJobQueue', () => {
  it('picks the local queue by default and refuses pg-boss without PostgreSQL', async () => {
    const dir = tempDir('parlance-jobs-');
    const db = await openDatabase({ dataDir: dir });
    try {
      expect(createJobQueue({ db })).toBeInstanceOf(LocalJobQueue);
      expect(() => createJobQueue({ db, mode: 'pg-boss' })).toThrow(/PostgreSQL/);
      expect(() => createJobQueue({ db, mode: 'nope' as 'local' })).toThrow(/unknown/);
      expect(PgBossJobQueue).toBeTypeOf('function');
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
