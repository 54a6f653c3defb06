import type { Kysely } from 'kysely';

// Multichannel transcriptions (`enable_multichannel`): each channel of the audio is recognised on its own. The flag is
// chosen at creation; the channel count is found when the job reads its audio (a mono file fails the job) and kept, so
// a job resumed after a restart recognises the same channels and meters the same audio.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('transcriptions')
    .addColumn('enable_multichannel', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('transcriptions').addColumn('audio_channels', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('transcriptions').dropColumn('audio_channels').execute();
  await db.schema.alterTable('transcriptions').dropColumn('enable_multichannel').execute();
}
