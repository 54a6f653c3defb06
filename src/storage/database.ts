import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import * as m0001 from './migrations/0001-foundation.js';
import * as m0002 from './migrations/0002-file-usage.js';
import * as m0003 from './migrations/0003-jobs.js';
import * as m0004 from './migrations/0004-transcriptions.js';
import * as m0005 from './migrations/0005-usage.js';
import * as m0006 from './migrations/0006-organization.js';
import * as m0007 from './migrations/0007-voices.js';
import * as m0008 from './migrations/0008-text-formatting.js';
import * as m0009 from './migrations/0009-playground-keys.js';
import * as m0010 from './migrations/0010-speakers.js';
import * as m0011 from './migrations/0011-pending-blob-deletions.js';
import * as m0012 from './migrations/0012-transcription-controls.js';
import * as m0013 from './migrations/0013-multichannel.js';
import * as m0014 from './migrations/0014-models.js';
import * as m0015 from './migrations/0015-known-speakers.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** The embedded database's file name inside the data directory. */
export const DATABASE_FILE = 'parlance.db';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-file-usage': m0002,
  '0003-jobs': m0003,
  '0004-transcriptions': m0004,
  '0005-usage': m0005,
  '0006-organization': m0006,
  '0007-voices': m0007,
  '0008-text-formatting': m0008,
  '0009-playground-keys': m0009,
  '0010-speakers': m0010,
  '0011-pending-blob-deletions': m0011,
  '0012-transcription-controls': m0012,
  '0013-multichannel': m0013,
  '0014-models': m0014,
  '0015-known-speakers': m0015,
};

/** Every migration, in order; a database at the latest version has run exactly these. */
export const migrationNames: readonly string[] = Object.keys(migrations);

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Stop at this migration instead of the latest (upgrade tests). */
  migrateTo?: string;
  /** PostgreSQL: longest a statement may run, and a client waits for its answer (a frozen host). Default 10 s. */
  queryTimeoutMs?: number;
  /** PostgreSQL: longest a new connection, or the wait for a free pooled one, may take. Default 5 s. */
  connectTimeoutMs?: number;
}

export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

// int8 (counts, sums, sizes) as JS numbers: every value we store fits in 2^53.
const pgTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};

/** A query given up on because PostgreSQL did not answer in time (a frozen or unreachable host). */
export class DatabaseTimeoutError extends Error {
  constructor(ms: number, options?: { cause?: unknown }) {
    super(`the database did not answer within ${ms} ms`, options);
    this.name = 'DatabaseTimeoutError';
  }
}

/** Open the embedded SQLite database (WAL) or PostgreSQL when a URL is given, and migrate it. */
export async function openDatabase(opts: DatabaseOptions): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts);
  mkdirSync(opts.dataDir, { recursive: true });
  const sqlite = new SQLite(path.join(opts.dataDir, DATABASE_FILE));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // The admin CLI writes while the server runs: wait for the lock instead of failing.
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const db: Db = { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
  await migrate(db, opts.migrateTo);
  return db;
}

async function openPostgres(url: string, opts: DatabaseOptions): Promise<Db> {
  const connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const queryTimeoutMs = opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  // Migrations on a connection of their own, without the query bounds: one may rightly run for minutes.
  const migrating = postgresKysely(newPgPool({ connectionString: url, max: 1, connectionTimeoutMillis: connectTimeoutMs }));
  try {
    await migrate({ kysely: migrating, dialect: 'postgres', close: () => migrating.destroy() }, opts.migrateTo);
  } finally {
    await migrating.destroy();
  }
  // A database that stops answering (a frozen host, a failover that black-holes connections) must fail requests,
  // not hang them: bounded connects (and waits for a pooled client), and statements the server itself cancels.
  const pool = newPgPool({ connectionString: url, max: 10, connectionTimeoutMillis: connectTimeoutMs, statement_timeout: queryTimeoutMs });
  // A frozen server cannot cancel anything: the client's own bound, a second after the server's.
  const kysely = postgresKysely(boundedPool(pool, queryTimeoutMs + 1000));
  return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
}

function newPgPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ ...config, types: pgTypes });
  // An idle client whose server connection ends (database restart, failover, a forced drop) emits 'error' on the
  // pool; unheard, that would crash the process. pg drops the client by itself and the next query opens a fresh
  // connection, so listening is all that is needed.
  pool.on('error', () => undefined);
  // A client checked out by Kysely (a query or a transaction under way) has no listener of its own: when its
  // connection dies (the database crashed or restarted, the backend was terminated), pg rejects the query and
  // also emits 'error' on the client, which unheard would crash the process. The query's caller gets the error;
  // the dead client is dropped from the pool when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

function postgresKysely(pool: PostgresPool): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * The pool as Kysely sees it, with every query bounded by `timeoutMs` on the client side. A client whose query
 * timed out still has that query on the wire (pg cannot take it back): it fails the rest of its checkout at once
 * (a transaction's ROLLBACK would wait behind it again) and is destroyed on release instead of being reused.
 */
function boundedPool(pool: pg.Pool, timeoutMs: number): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let timedOut: DatabaseTimeoutError | undefined;
      const query = async (text: string, values: readonly unknown[]) => {
        if (timedOut) throw timedOut;
        try {
          return await client.query({ text, values: [...values], query_timeout: timeoutMs } as pg.QueryConfig);
        } catch (err) {
          if ((err as Error).message === 'Query read timeout') throw (timedOut = new DatabaseTimeoutError(timeoutMs, { cause: err }));
          throw err;
        }
      };
      // Kysely streams through a cursor only when asked to (we never do): the plain form is all it calls.
      return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release(timedOut) };
    },
    end: () => pool.end(),
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every statement anew; preparing cost more than running in profiles of
 * hot endpoints (auth lookup ~54 µs to prepare, ~1 µs to run). Reuse prepared statements by SQL text.
 * Safe because Kysely runs one statement at a time on this connection and we never stream results.
 */
function withStatementCache(sqlite: SQLite.Database): { prepare(sql: string): SQLite.Statement; close(): void } {
  const cache = new Map<string, SQLite.Statement>();
  let noop: SQLite.Statement | undefined;
  return {
    prepare(text) {
      // SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR); Kysely's ROLLBACK
      // then fails with "cannot rollback - no transaction is active" and that error replaces the real cause.
      if (text === 'rollback' && !sqlite.inTransaction) return (noop ??= sqlite.prepare('SELECT 1'));
      let stmt = cache.get(text);
      if (stmt) return stmt;
      stmt = sqlite.prepare(text);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(text, stmt);
      return stmt;
    },
    close: () => sqlite.close(),
  };
}

export async function migrate(db: Db, target?: string): Promise<void> {
  const run = (kysely: Kysely<Database>, disableTransactions: boolean) => {
    const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => migrations }, disableTransactions });
    return target ? migrator.migrateTo(target) : migrator.migrateToLatest();
  };
  // Kysely's SQLite migration lock is a no-op (it assumes one connection). Take SQLite's write lock first,
  // so a second process on the same data dir (another server, the admin CLI) waits, then finds the work done.
  const { error, results } =
    db.dialect === 'sqlite'
      ? await db.kysely.connection().execute(async (conn) => {
          await sql`BEGIN IMMEDIATE`.execute(conn);
          try {
            const outcome = await run(conn, true);
            await sql.raw(outcome.error ? 'ROLLBACK' : 'COMMIT').execute(conn);
            return outcome;
          } catch (err) {
            await sql`ROLLBACK`.execute(conn).catch(() => undefined);
            throw err;
          }
        })
      : await run(db.kysely, false);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`);
  }
}
