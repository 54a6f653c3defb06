import type { Kysely } from 'kysely';

// Usage metering. Money is stored as integer nano-USD (1e-9 USD, bigint) so both engines sum it exactly;
// decimal strings are made only at the API edge. Balances stay decimal text on organizations (0001).
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per billable request or session (async transcription, real-time session, TTS request/stream).
  await db.schema
    .createTable('usage_records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('source', 'text', (c) => c.notNull()) // public_api | playground
    .addColumn('kind', 'text', (c) => c.notNull()) // stt_async | stt_rt | tts
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('client_reference_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('start_time', 'text', (c) => c.notNull())
    .addColumn('end_time', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'bigint', (c) => c.notNull().defaultTo(0)) // wall time of the request or session
    .addColumn('input_text_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('input_audio_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('input_audio_duration_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_text_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_audio_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_audio_duration_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('input_text_cost_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('input_audio_cost_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_text_cost_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('output_audio_cost_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('free_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('invoiced_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('usage_records_project_end_idx').on('usage_records').columns(['project_id', 'end_time', 'id']).execute();
  await db.schema.createIndex('usage_records_org_end_idx').on('usage_records').columns(['organization_id', 'end_time']).execute();

  // Per project, month (UTC, of the record's end time) and source: what budgets and monthly usage read.
  // Kept in the same transaction as each record, so a budget check is a few indexed rows, never a scan.
  await db.schema
    .createTable('usage_monthly')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('cost_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('free_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('invoiced_nusd', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_monthly_pk', ['project_id', 'month', 'source'])
    .execute();
  await db.schema.createIndex('usage_monthly_org_idx').on('usage_monthly').columns(['organization_id', 'month']).execute();

  // One budget notification per organization or project and month, across restarts and nodes.
  await db.schema
    .createTable('budget_notifications')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('notified_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('budget_notifications_pk', ['scope', 'scope_id', 'month'])
    .execute();

  // Operator price overrides (`parlance admin set-price`) over the settings' price table.
  await db.schema
    .createTable('usage_prices')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('unit', 'text', (c) => c.notNull())
    .addColumn('price_usd', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_prices_pk', ['model', 'unit'])
    .execute();

  await db.schema.alterTable('projects').addColumn('monthly_budget_notification_usd', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').dropColumn('monthly_budget_notification_usd').execute();
  for (const t of ['usage_prices', 'budget_notifications', 'usage_monthly', 'usage_records']) await db.schema.dropTable(t).ifExists().execute();
}
