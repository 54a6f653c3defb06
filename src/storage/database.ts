import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration } from 'kysely';
import pg from 'pg';
import * as m0001 from './migrations/0001-foundation.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
};

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
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
    db = { kysely: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres', close: () => db.kysely.destroy() };
  } else {
    mkdirSync(opts.dataDir, { recursive: true });
    const sqlite = new SQLite(path.join(opts.dataDir, 'parlance.db'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // The admin CLI writes while the server runs: wait for the lock instead of failing.
    sqlite.pragma('busy_timeout = 10000');
    sqlite.pragma('foreign_keys = ON');
    db = { kysely: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), dialect: 'sqlite', close: () => db.kysely.destroy() };
  }
  await migrate(db);
  return db;
}

export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`);
  }
}
