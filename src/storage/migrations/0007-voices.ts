import type { Kysely } from 'kysely';

// Cloned voices: one row per voice (the reference clip lives in the blob store), one row per voice and TTS
// model it has been prepared (or is being prepared) for. A model with no row is `not_computed` for the voice.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('voices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('reference_profile', 'text') // JSON VoiceProfile of the clip, measured once by the first job
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // Names are unique per project: the index is what makes concurrent creates with one name give one 409.
  await db.schema.createIndex('voices_project_name_idx').on('voices').columns(['project_id', 'name']).unique().execute();
  await db.schema.createIndex('voices_project_list_idx').on('voices').columns(['project_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('voice_models')
    .addColumn('voice_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull()) // catalog model id (never an alias)
    .addColumn('status', 'text', (c) => c.notNull()) // processing | ready | failed
    .addColumn('error_type', 'text')
    .addColumn('error_message', 'text')
    .addColumn('adaptation', 'text') // JSON VoiceAdaptation once ready
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('voice_models_pk', ['voice_id', 'model'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('voice_models').ifExists().execute();
  await db.schema.dropTable('voices').ifExists().execute();
}
