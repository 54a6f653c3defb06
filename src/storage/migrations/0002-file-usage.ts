import { sql, type Kysely } from 'kysely';

// Per-project file counters by source, kept in the same transaction as every file insert and delete, so
// counts and cap checks cost one indexed row read instead of a scan of all the project's files.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('file_usage')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('file_usage_pk', ['project_id', 'source'])
    .execute();
  await db.schema.createIndex('file_usage_org_idx').on('file_usage').column('organization_id').execute();
  await sql`INSERT INTO file_usage (project_id, organization_id, source, files, bytes)
            SELECT project_id, organization_id, source, COUNT(*), SUM(size) FROM files
            GROUP BY project_id, organization_id, source`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('file_usage').ifExists().execute();
}
