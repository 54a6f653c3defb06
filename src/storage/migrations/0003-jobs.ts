import { sql, type Kysely } from 'kysely';

// The durable job queue of the default (local) runner: one table, the same on SQLite and PostgreSQL.
// Timestamps are ISO-8601 UTC text with milliseconds like everywhere else in this schema, so they compare
// as text. See src/jobs/local-queue.ts for the state machine and the attempt accounting.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull()) // JSON
    .addColumn('state', 'text', (c) => c.notNull()) // queued | running | completed | failed
    // Runs started (a run interrupted by a graceful stop is given back), including re-runs after a crash.
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    // Runs allowed to end in a handler error; NULL: the kind's default (WorkOptions.maxAttempts, else 1).
    .addColumn('max_attempts', 'integer')
    // Runs lost to an expired lease (the process running it crashed or lost the database).
    .addColumn('recoveries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('singleton_key', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  // Claiming: the due queued jobs of one kind in run_at order; also finds running jobs with expired leases.
  await db.schema.createIndex('jobs_claim_idx').on('jobs').columns(['state', 'kind', 'run_at']).execute();
  // Retention sweep: finished jobs by age.
  await db.schema.createIndex('jobs_finished_idx').on('jobs').columns(['state', 'finished_at']).execute();
  // At most one unfinished job per (kind, singleton_key). A partial unique index: SQLite and PostgreSQL both
  // have them, and both let INSERT ... ON CONFLICT DO NOTHING skip a duplicate inside a transaction.
  await db.schema
    .createIndex('jobs_singleton_idx')
    .unique()
    .on('jobs')
    .columns(['kind', 'singleton_key'])
    .where(sql<boolean>`state IN ('queued', 'running') AND singleton_key IS NOT NULL`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('jobs').ifExists().execute();
}
