import type { Kysely } from 'kysely';

// Voices a request names for itself (OpenAI's known_speaker_names / known_speaker_references): their prints and names
// as JSON, from the transcription's creation until its job ends (completed or failed), then cleared; null otherwise.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').addColumn('known_speakers', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').dropColumn('known_speakers').execute();
}
