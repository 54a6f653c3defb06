import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import * as m0001 from './migrations/0001-foundation.js';
import * as m0002 from './migrations/0002-file-usage.js';
import * as m0003 from './migrations/0003-jobs.js';
import * as m0004 from './migrations/0004-transcriptions.js';
import * as m0005 from './migrations/0005-usage.js';
import * as m0006 from './migrations/0006-organization.js';
import * as m0007 from './migrations/0007-voices.js';
import * as m0008 from './migrations/0008-text-formatting.js';
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
};

/** Every migration, in order; a database at the latest version has run exactly these. */
export const migrationNames: readonly string[] = Object.keys(migrations);

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Stop at this migration instead of the latest (upgrade tests). */
  migrateTo?: string;
}

/** Open the embedded SQLite database (WAL) or PostgreSQL when a URL is given, and migrate it. */
export async function openDatabase(opts: DatabaseOptions): Promise<Db> {
  let db: Db;
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      // int8 (counts, sums, sizes) as JS numbers: every value we store fits in 2^53.
      types: {
        getTypeParser: (oid: number, format?: 'text' | 'binary') =>
          oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
      },
    });
    // An idle client whose server connection ends (database restart, failover, a forced drop) emits
    // 'error' on the pool; unheard, that would crash the process. pg drops the client by itself and the
    // next query opens a fresh connection, so listening is all that is needed.
    pool.on('error', () => undefined);
    // A client checked out by Kysely (a query or a transaction under way) has no listener of its own: when its
    // connection dies (the database crashed or restarted, the backend was terminated), pg rejects the query and
    // also emits 'error' on the client, which unheard would crash the process. The query's caller gets the error;
    // the dead client is dropped from the pool when it is released.
    pool.on('connect', (client) => client.on('error', () => undefined));
    db = { kysely: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres', close: () => db.kysely.destroy() };
  } else {
    mkdirSync(opts.dataDir, { recursive: true });
    const sqlite = new SQLite(path.join(opts.dataDir, DATABASE_FILE));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // The admin CLI writes while the server runs: wait for the lock instead of failing.
    sqlite.pragma('busy_timeout = 10000');
    sqlite.pragma('foreign_keys = ON');
    db = {
      kysely: new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) }),
      dialect: 'sqlite',
      close: () => db.kysely.destroy(),
    };
  }
  await migrate(db, opts.migrateTo);
  return db;
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
