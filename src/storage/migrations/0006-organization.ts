import type { Kysely } from 'kysely';

// Organization administration and concurrency: per-organization / per-project concurrency caps that override
// the settings, and the per-minute concurrent-stream samples behind GET /v1/concurrent-streams-history.
// (projects.deleted_at, the soft delete, exists since 0001; this migration indexes what reads it.)
export async function up(db: Kysely<unknown>): Promise<void> {
  // A row overrides the setting for one scope and kind; max_streams NULL means unlimited.
  await db.schema
    .createTable('concurrency_limits')
    .addColumn('scope', 'text', (c) => c.notNull()) // 'organization' | 'project'
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull()) // 'stt' | 'tts'
    .addColumn('max_streams', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('concurrency_limits_pk', ['scope', 'scope_id', 'kind'])
    .execute();

  // One row per project, kind, minute and server node: each node records what it serves, reads add nodes up.
  await db.schema
    .createTable('concurrent_stream_samples')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('minute_start', 'text', (c) => c.notNull()) // ISO-8601 UTC, seconds zero
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('sample_min', 'integer', (c) => c.notNull())
    .addColumn('sample_max', 'integer', (c) => c.notNull())
    .addColumn('sample_sum', 'bigint', (c) => c.notNull())
    .addColumn('sample_count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('concurrent_stream_samples_pk', ['project_id', 'kind', 'minute_start', 'node_id'])
    .execute();
  await db.schema.createIndex('concurrent_stream_samples_minute_idx').on('concurrent_stream_samples').column('minute_start').execute();
  await db.schema.createIndex('api_keys_project_revoked_idx').on('api_keys').columns(['project_id', 'revoked_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_project_revoked_idx').ifExists().execute();
  await db.schema.dropTable('concurrent_stream_samples').ifExists().execute();
  await db.schema.dropTable('concurrency_limits').ifExists().execute();
}
