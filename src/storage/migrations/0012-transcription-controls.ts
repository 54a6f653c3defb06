import type { Kysely } from 'kysely';

// Transcript controls a transcription was created with (Parlance extensions such as `redact` and
// `profanity_filter`): one JSON object, applied when the job runs. Rows made before this migration have none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').addColumn('controls', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').dropColumn('controls').execute();
}
