import type { Kysely } from 'kysely';

// Models brought over HTTP (/v1/admin/models): one row per model id with the pull's state (downloading → installing
// → ready, or failed with its error), what it was asked to bring (`plan`, JSON: the resolved source), and what was
// installed. The models directory stays the truth of what is installed; these rows say how a pull went. Every change
// also writes a new `models_version` into instance_settings, which each node polls to pick changes up.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('models')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('family', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('bytes_received', 'bigint')
    .addColumn('bytes_total', 'bigint')
    .addColumn('size_bytes', 'bigint')
    .addColumn('sha256', 'text')
    .addColumn('error_type', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('models').ifExists().execute();
}
