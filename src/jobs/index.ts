// Choosing the job queue: the local runner over our own database by default (SQLite or PostgreSQL),
// pg-boss only when asked for (PostgreSQL only).
import type { Db } from '../storage/database.js';
import { LocalJobQueue, type LocalQueueOptions } from './local-queue.js';
import { PgBossJobQueue, type PgBossQueueOptions } from './pgboss-queue.js';
import type { JobLog, JobQueue } from './queue.js';
import type { RunnerOptions } from './runner.js';

export type JobQueueMode = 'local' | 'pg-boss';

export interface CreateJobQueueOptions extends RunnerOptions {
  db: Db;
  /** The PostgreSQL URL the database was opened with (LISTEN/NOTIFY wake-ups; pg-boss's own pool). */
  databaseUrl?: string;
  mode?: JobQueueMode;
  log?: JobLog;
  /** Implementation-specific extras (retention, pg-boss schema and maintenance interval). */
  local?: Omit<LocalQueueOptions, keyof RunnerOptions | 'db'>;
  pgBoss?: Omit<PgBossQueueOptions, keyof RunnerOptions | 'db' | 'databaseUrl'>;
}

export function createJobQueue(options: CreateJobQueueOptions): JobQueue {
  const { db, databaseUrl, mode = 'local', local, pgBoss, ...runner } = options;
  if (mode === 'pg-boss') {
    if (db.dialect !== 'postgres' || !databaseUrl) {
      throw new Error('the pg-boss job queue needs PostgreSQL: set DATABASE_URL, or use the local job queue');
    }
    return new PgBossJobQueue({ ...runner, ...pgBoss, db, databaseUrl });
  }
  if (mode !== 'local') throw new Error(`unknown job queue mode ${String(mode)}`);
  return new LocalJobQueue({
    ...runner,
    ...local,
    db,
    listenUrl: runner.listenUrl ?? (db.dialect === 'postgres' ? databaseUrl : undefined),
  });
}

export { LocalJobQueue } from './local-queue.js';
export { PgBossJobQueue } from './pgboss-queue.js';
export * from './queue.js';
