// openDatabase against both real engines: embedded SQLite in a temp dir and a fresh PostgreSQL database.
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPgDatabase, PG_ADMIN_URL, ROOT, tempDir, waitFor } from '../../test/harness.js';

const execFileP = promisify(execFile);
import { DatabaseTimeoutError, migrationNames, openDatabase, type Db, type DatabaseOptions } from './database.js';
import { isTransientDatabaseError } from './transient-errors.js';

/** A TCP relay to PostgreSQL that can stop passing bytes: a frozen server, or a failover black-holing connections. */
async function freezableRelay(target: URL): Promise<{ url: string; freeze(): void; thaw(): void; close(): Promise<void> }> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (d) => frozen || to.write(d)); // while frozen, what is sent is never answered
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(target.href);
  url.host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: url.href,
    freeze: () => (frozen = true),
    thaw: () => (frozen = false),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

interface Target {
  options: DatabaseOptions;
  cleanup(): Promise<void>;
}

const targets: [string, () => Promise<Target>][] = [
  [
    'sqlite',
    async () => {
      const dir = tempDir('parlance-db-');
      // A data dir that does not exist yet: openDatabase creates it.
      return { options: { dataDir: path.join(dir, 'nested', 'data') }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'postgres',
    async () => {
      const dir = tempDir('parlance-db-');
      const pgdb = await createPgDatabase();
      return {
        options: { dataDir: dir, databaseUrl: pgdb.url },
        cleanup: async () => {
          await pgdb.drop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

/** Backends connected to database `name` (the asking connection apart), as PostgreSQL lists them. */
async function backendsOf(admin: pg.Client, name: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  return rows[0]!.n;
}

async function withOptions<T>(options: DatabaseOptions, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDatabase(options);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

const TABLES = [
  'api_keys',
  'budget_notifications',
  'concurrency_limits',
  'concurrent_stream_samples',
  'file_usage',
  'files',
  'instance_settings',
  'jobs',
  'models',
  'organizations',
  'pending_blob_deletions',
  'projects',
  'speaker_samples',
  'speakers',
  'temporary_api_keys',
  'transcriptions',
  'transcripts',
  'usage_monthly',
  'usage_prices',
  'usage_records',
  'voice_models',
  'voices',
];

describe.each(targets)('openDatabase (%s)', (dialect, make) => {
  let target: Target;
  beforeAll(async () => {
    target = await make();
  });
  afterAll(async () => target?.cleanup());

  const withDb = <T>(fn: (db: Db) => Promise<T>): Promise<T> => withOptions(target.options, fn);

  it('creates every table and records the migration', async () => {
    await withDb(async (db) => {
      expect(db.dialect).toBe(dialect);
      const tables = (await db.kysely.introspection.getTables()).map((t) => t.name).sort();
      expect(tables).toEqual(TABLES);
      const migrations = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely);
      expect(migrations.rows.map((r) => r.name)).toEqual(migrationNames);
    });
    if (dialect === 'sqlite') expect(existsSync(path.join(target.options.dataDir, 'parlance.db'))).toBe(true);
  });

  it('is idempotent: reopening keeps the data and runs nothing twice', async () => {
    await withDb((db) => db.kysely.insertInto('instance_settings').values({ key: 'probe', value: 'kept' }).execute());
    await withDb(async (db) => {
      const row = await db.kysely.selectFrom('instance_settings').select('value').where('key', '=', 'probe').executeTakeFirst();
      expect(row).toEqual({ value: 'kept' });
      const migrations = await sql<{ n: number }>`SELECT count(*) AS n FROM kysely_migration`.execute(db.kysely);
      expect(Number(migrations.rows[0]!.n)).toBe(migrationNames.length);
    });
  });

  it.runIf(dialect === 'sqlite')('a transaction that SQLite already rolled back fails with its own error, not the rollback', async () => {
    await withDb(async (db) => {
      const failing = db.kysely.transaction().execute(async (trx) => {
        await trx.insertInto('instance_settings').values({ key: 'gone', value: 'x' }).execute();
        // What SQLite does by itself on SQLITE_FULL or SQLITE_IOERR: the transaction is over before Kysely's ROLLBACK.
        await sql`ROLLBACK`.execute(trx);
        throw new Error('database or disk is full');
      });
      await expect(failing).rejects.toThrow('database or disk is full');
      expect(await db.kysely.selectFrom('instance_settings').select('key').where('key', '=', 'gone').execute()).toEqual([]);
      // The connection is usable afterwards, in and out of transactions.
      await db.kysely.transaction().execute((trx) => trx.insertInto('instance_settings').values({ key: 'after', value: 'y' }).execute());
      expect(await db.kysely.selectFrom('instance_settings').select('value').where('key', '=', 'after').executeTakeFirst()).toEqual({ value: 'y' });
    });
  });

  it.runIf(dialect === 'postgres')('keeps working after the server terminates its idle connections', async () => {
    await withDb(async (db) => {
      await db.kysely.selectFrom('organizations').selectAll().execute();
      const dbName = new URL(target.options.databaseUrl!).pathname.slice(1);
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      try {
        // What a database restart or failover does to idle pooled connections.
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
        // A terminated backend sends its client the error, then leaves pg_stat_activity: once all are gone, the errors
        // have reached this process ahead of the answer that says so.
        await waitFor(
          () => backendsOf(admin, dbName),
          (n) => n === 0,
          10_000,
          20,
        );
      } finally {
        await admin.end();
      }
      // Without an 'error' listener on the pool the process would have crashed by now (unhandled error).
      expect(await db.kysely.selectFrom('organizations').selectAll().execute()).toEqual([]);
    });
  });

  it.runIf(dialect === 'postgres')('fails the transaction, not the process, when its connection dies while the transaction is open', async () => {
    await withDb(async (db) => {
      let proceed!: () => void;
      const held = new Promise<void>((r) => (proceed = r));
      const tx = db.kysely.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        await held; // the connection stays checked out, idle in the transaction
        await sql`SELECT 1`.execute(trx);
      });
      tx.catch(() => undefined);
      const dbName = new URL(target.options.databaseUrl!).pathname.slice(1);
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      try {
        // What a database crash or restart does to a connection checked out for a transaction under way.
        let terminated = false;
        for (let i = 0; i < 100 && !terminated; i++) {
          const { rows } = await admin.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'idle in transaction' AND pid <> pg_backend_pid()`,
            [dbName],
          );
          if (rows.length) terminated = (await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])).rowCount === 1;
          else await new Promise((r) => setTimeout(r, 20));
        }
        expect(terminated).toBe(true);
        // Gone from pg_stat_activity only after it sent its client the error (see above).
        await waitFor(
          () => backendsOf(admin, dbName),
          (n) => n === 0,
          10_000,
          20,
        );
      } finally {
        await admin.end();
      }
      // Without an 'error' listener on checked-out clients, the dead connection's 'error' event crashes the process
      // (an unhandled error) here.
      proceed();
      await expect(tx).rejects.toThrow();
      expect(await db.kysely.selectFrom('organizations').selectAll().execute()).toEqual([]);
    });
  });

  it.runIf(dialect === 'postgres')('cancels a statement that runs past the query timeout; the connection serves on', async () => {
    await withOptions({ ...target.options, queryTimeoutMs: 300 }, async (db) => {
      // Cancelled by the server (57014), not finished: it would sleep 5 s and return a row.
      const err = (await sql`SELECT pg_sleep(5)`.execute(db.kysely).catch((e: unknown) => e)) as { code?: string };
      expect(err.code).toBe('57014');
      expect(isTransientDatabaseError(err)).toBe(true);
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db.kysely)).rows).toEqual([{ one: 1 }]);
    });
  });

  it.runIf(dialect === 'postgres')('fails queries and connects at their bounds while the server does not answer, and serves again once it does', async () => {
    const relay = await freezableRelay(new URL(target.options.databaseUrl!));
    try {
      await withOptions({ ...target.options, databaseUrl: relay.url, queryTimeoutMs: 300, connectTimeoutMs: 500 }, async (db) => {
        await sql`SELECT 1`.execute(db.kysely); // a pooled connection, idle when the server freezes
        relay.freeze();
        // The server's statement_timeout cannot fire: the client gives up a second after it (1.3 s). The ROLLBACK
        // that follows in the transaction fails at once instead of waiting behind the lost query.
        // Each ends in its bound's error while the relay is still frozen (a hang would be caught by the test's timeout).
        const lost = await db.kysely
          .transaction()
          .execute((trx) => sql`SELECT 1`.execute(trx))
          .catch((e: unknown) => e);
        expect(lost).toBeInstanceOf(DatabaseTimeoutError);
        expect(isTransientDatabaseError(lost)).toBe(true);
        // The client whose query was lost is not reused; a new connection cannot start either: the connect bound.
        const refused = await sql`SELECT 1`.execute(db.kysely).catch((e: unknown) => e);
        expect(isTransientDatabaseError(refused)).toBe(true);
        relay.thaw();
        expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db.kysely)).rows).toEqual([{ one: 1 }]);
      });
    } finally {
      await relay.close();
    }
  });

  it.runIf(dialect === 'postgres')('runs migrations without the query timeout', async () => {
    // Statements of a migration may rightly take longer than any request's: here every one of them is longer than 1 ms.
    const fresh = await make();
    try {
      await withOptions({ ...fresh.options, queryTimeoutMs: 1 }, async (db) => {
        await expect(sql`SELECT pg_sleep(0.05)`.execute(db.kysely)).rejects.toMatchObject({ code: '57014' });
      });
      await withOptions(fresh.options, async (db) => {
        expect((await db.kysely.introspection.getTables()).map((t) => t.name).sort()).toEqual(TABLES);
      });
    } finally {
      await fresh.cleanup();
    }
  });

  it('backfills the file counters of files stored before migration 0002', async () => {
    const fresh = await make();
    try {
      const file = (id: string, project: string, source: string, size: number) => ({
        id,
        organization_id: 'org-1',
        project_id: project,
        filename: `${id}.wav`,
        size,
        client_reference_id: null,
        source,
        blob_key: `files/${project}/${id}`,
        duration_ms: null,
        format: null,
        created_at: '2026-01-01T00:00:00.000Z',
      });
      await withOptions({ ...fresh.options, migrateTo: '0001-foundation' }, async (db) => {
        expect((await db.kysely.introspection.getTables()).map((t) => t.name)).not.toContain('file_usage');
        await db.kysely
          .insertInto('files')
          .values([file('a', 'p1', 'public_api', 10), file('b', 'p1', 'public_api', 5), file('c', 'p1', 'playground', 7), file('d', 'p2', 'public_api', 1)])
          .execute();
      });
      await withOptions(fresh.options, async (db) => {
        const rows = await db.kysely.selectFrom('file_usage').selectAll().orderBy('project_id').orderBy('source').execute();
        expect(rows.map((r) => ({ ...r, files: Number(r.files), bytes: Number(r.bytes) }))).toEqual([
          { project_id: 'p1', organization_id: 'org-1', source: 'playground', files: 1, bytes: 7 },
          { project_id: 'p1', organization_id: 'org-1', source: 'public_api', files: 2, bytes: 15 },
          { project_id: 'p2', organization_id: 'org-1', source: 'public_api', files: 1, bytes: 1 },
        ]);
      });
    } finally {
      await fresh.cleanup();
    }
  });

  it('survives several processes migrating a fresh database at once (nodes and the admin CLI starting together)', async () => {
    const fresh = await make();
    try {
      // Separate processes (the compiled module, as `parlance` runs it): better-sqlite3 blocks its thread
      // while waiting for a lock, so in-process connections cannot stand in for other processes.
      const script = `const { openDatabase } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'storage', 'database.js')).href)});
        const db = await openDatabase(JSON.parse(process.argv[1])); await db.close();`;
      const runs = await Promise.allSettled(
        Array.from({ length: 3 }, () => execFileP(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(fresh.options)])),
      );
      const failures = runs.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as { stderr?: string }).stderr ?? r.reason)] : []));
      expect(failures).toEqual([]);
      await withOptions(fresh.options, async (db) => {
        expect((await db.kysely.introspection.getTables()).map((t) => t.name).sort()).toEqual(TABLES);
        const migrations = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely);
        expect(migrations.rows.map((r) => r.name)).toEqual(migrationNames);
      });
    } finally {
      await fresh.cleanup();
    }
  });

  it('returns counts, sums and bigint columns as JS numbers, exactly', async () => {
    await withDb(async (db) => {
      const big = 2 ** 40 + 7; // beyond 32 bits
      await db.kysely
        .insertInto('files')
        .values([
          {
            id: 'n1',
            organization_id: 'o',
            project_id: 'p',
            filename: 'a',
            size: big,
            client_reference_id: null,
            source: 'public_api',
            blob_key: 'k1',
            duration_ms: 1500,
            format: 'wav',
            created_at: '2025-01-01T00:00:00.000Z',
          },
          {
            id: 'n2',
            organization_id: 'o',
            project_id: 'p',
            filename: 'b',
            size: 3,
            client_reference_id: null,
            source: 'public_api',
            blob_key: 'k2',
            duration_ms: null,
            format: null,
            created_at: '2025-01-01T00:00:00.000Z',
          },
        ])
        .execute();
      const row = await db.kysely.selectFrom('files').select(['size', 'duration_ms']).where('id', '=', 'n1').executeTakeFirstOrThrow();
      expect(row).toEqual({ size: big, duration_ms: 1500 });
      const agg = await db.kysely
        .selectFrom('files')
        .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum('size').as('total')])
        .where('project_id', '=', 'p')
        .executeTakeFirstOrThrow();
      expect(agg).toEqual({ n: 2, total: big + 3 });
    });
  });

  if (dialect === 'sqlite') {
    it('runs SQLite in WAL mode with foreign keys and a busy timeout', async () => {
      await withDb(async (db) => {
        const mode = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(db.kysely);
        expect(mode.rows[0]!.journal_mode).toBe('wal');
        const fk = await sql<{ foreign_keys: number }>`PRAGMA foreign_keys`.execute(db.kysely);
        expect(fk.rows[0]!.foreign_keys).toBe(1);
        const busy = await sql<{ timeout: number }>`PRAGMA busy_timeout`.execute(db.kysely);
        expect(busy.rows[0]!.timeout).toBeGreaterThanOrEqual(1000);
      });
    });
  }
});
