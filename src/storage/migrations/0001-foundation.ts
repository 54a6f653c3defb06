import type { Kysely } from 'kysely';

// One schema for SQLite and PostgreSQL: only types both understand (text, integer, bigint).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('instance_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('available_balance_usd', 'text', (c) => c.notNull().defaultTo('0'))
    .addColumn('free_balance_usd', 'text', (c) => c.notNull().defaultTo('0'))
    .addColumn('used_balance_usd', 'text', (c) => c.notNull().defaultTo('0'))
    .addColumn('invoice_billing_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('autopay_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('autopay_threshold_usd', 'text')
    .addColumn('autopay_amount_usd', 'text')
    .addColumn('has_payment_method', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('has_payment_error', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('monthly_budget_usd', 'text')
    .addColumn('monthly_budget_notification_usd', 'text')
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .addColumn('monthly_budget_usd', 'text')
    .execute();
  await db.schema.createIndex('projects_org_idx').on('projects').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('public_api'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_by_key_id', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_project_idx').on('api_keys').columns(['project_id', 'created_at']).execute();

  await db.schema
    .createTable('temporary_api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('usage_type', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('single_use', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('consumed_at', 'text')
    .addColumn('max_session_duration_seconds', 'integer')
    .addColumn('client_reference_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('temporary_api_keys_expiry_idx').on('temporary_api_keys').column('expires_at').execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('client_reference_id', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'bigint')
    .addColumn('format', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('files_project_list_idx').on('files').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('files_org_idx').on('files').column('organization_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['files', 'temporary_api_keys', 'api_keys', 'projects', 'organizations', 'instance_settings'])
    await db.schema.dropTable(t).ifExists().execute();
}
