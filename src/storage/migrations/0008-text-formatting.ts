import type { Kysely } from 'kysely';

// Formatted transcripts (sentence capitals, punctuation, numbers as digits): chosen per transcription at creation
// (`enable_text_formatting`, else the server's PARLANCE_TEXT_FORMATTING) and applied when the job runs. Rows made
// before this migration keep raw words, as they were promised.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('transcriptions')
    .addColumn('enable_text_formatting', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').dropColumn('enable_text_formatting').execute();
}
