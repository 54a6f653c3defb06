import type { Kysely } from 'kysely';

// Enrolled speakers: one row per named speaker (its profile, computed from all its samples by a job, and the revision
// of its sample set that the profile is for), one row per enrolment sample (the audio lives in the blob store; the
// sample's own voice print is kept once measured, so adding a sample measures only that one). Transcriptions remember
// which enrolled speakers they were asked to recognise.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('speakers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text') // JSON object given at creation
    .addColumn('status', 'text', (c) => c.notNull()) // no_samples | processing | ready | failed
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0)) // bumped by every sample added or removed
    .addColumn('error_type', 'text')
    .addColumn('error_message', 'text')
    .addColumn('profile', 'text') // JSON VoicePrint once ready
    .addColumn('speech_ms', 'integer') // speech in the profile, once ready
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Names are unique per project: the index makes concurrent creates with one name give one 409.
  await db.schema.createIndex('speakers_project_name_idx').on('speakers').columns(['project_id', 'name']).unique().execute();
  await db.schema.createIndex('speakers_project_list_idx').on('speakers').columns(['project_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('speaker_samples')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('speaker_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    // Who added it and in which request: the measurement is metered to them.
    .addColumn('api_key_id', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('print', 'text') // JSON VoicePrint of this sample once measured
    .addColumn('speech_ms', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('speaker_samples_speaker_idx').on('speaker_samples').columns(['speaker_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('speaker_samples_project_idx').on('speaker_samples').columns(['project_id']).execute();

  await db.schema.alterTable('transcriptions').addColumn('speakers', 'text').execute(); // JSON array of speaker ids
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').dropColumn('speakers').execute();
  await db.schema.dropTable('speaker_samples').ifExists().execute();
  await db.schema.dropTable('speakers').ifExists().execute();
}
