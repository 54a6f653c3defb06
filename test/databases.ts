// The two storage engines every repository must behave the same on, for `describe.each`: each entry opens a
// fresh, migrated database (SQLite in a temp dir, or a new PostgreSQL database) and removes it on cleanup.
import { rmSync } from 'node:fs';
import { openDatabase, type Db } from '../src/storage/database.js';
import { createPgDatabase, tempDir } from './harness.js';

export interface OpenedDatabase {
  db: Db;
  cleanup(): Promise<void>;
}

export const DATABASE_ENGINES: [name: 'sqlite' | 'postgres', open: () => Promise<OpenedDatabase>][] = [
  [
    'sqlite',
    async () => {
      const dir = tempDir('parlance-repo-');
      const db = await openDatabase({ dataDir: dir });
      return {
        db,
        cleanup: async () => {
          await db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'postgres',
    async () => {
      const dir = tempDir('parlance-repo-');
      const pgdb = await createPgDatabase();
      const db = await openDatabase({ dataDir: dir, databaseUrl: pgdb.url });
      return {
        db,
        cleanup: async () => {
          await db.close();
          await pgdb.drop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];
