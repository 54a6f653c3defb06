import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('transcriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull()) // as the client named it
    .addColumn('resolved_model', 'text', (c) => c.notNull()) // the catalog model serving it
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('audio_url', 'text')
    .addColumn('file_id', 'text')
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('language_hints', 'text', (c) => c.notNull()) // JSON array
    .addColumn('language_hints_strict', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('context', 'text') // JSON: string or object, as given
    .addColumn('translation', 'text') // JSON or null
    .addColumn('enable_speaker_diarization', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enable_language_identification', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_auth_header_name', 'text')
    .addColumn('webhook_auth_header_value', 'text')
    .addColumn('webhook_status_code', 'integer')
    .addColumn('client_reference_id', 'text')
    .addColumn('audio_duration_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('audio_blob_key', 'text')
    .addColumn('error_type', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('transcript_purged_at', 'text')
    .execute();
  await db.schema.createIndex('transcriptions_project_list_idx').on('transcriptions').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('transcriptions_file_idx').on('transcriptions').columns(['file_id', 'status']).execute();
  await db.schema.createIndex('transcriptions_retention_idx').on('transcriptions').columns(['completed_at']).execute();

  await db.schema
    .createTable('transcripts')
    .addColumn('transcription_id', 'text', (c) => c.primaryKey())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('tokens', 'text', (c) => c.notNull()) // JSON array of tokens
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('transcripts').ifExists().execute();
  await db.schema.dropTable('transcriptions').ifExists().execute();
}
