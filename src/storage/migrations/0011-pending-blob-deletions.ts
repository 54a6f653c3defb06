import type { Kysely } from 'kysely';

// Blobs whose records are gone but whose bytes the store has not yet removed (it was unreachable): one row per key,
// written before the removal is tried and deleted once the store accepts it, so a sweeper on a job-running node
// retries until nothing is orphaned.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pending_blob_deletions')
    .addColumn('blob_key', 'text', (c) => c.primaryKey())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull()) // ISO time; the sweeper takes rows due by now
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pending_blob_deletions_due_idx').on('pending_blob_deletions').columns(['next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pending_blob_deletions').ifExists().execute();
}
