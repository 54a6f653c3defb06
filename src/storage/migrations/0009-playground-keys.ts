import type { Kysely } from 'kysely';

// Temporary keys remember the source of the credential that issued them: the web console signs in by minting a
// `playground` session key (usage_type 'playground'), and the WebSocket keys it mints from that session count as
// playground too, while keys minted by a plain API key stay public_api.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('temporary_api_keys')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('public_api'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('temporary_api_keys').dropColumn('source').execute();
}
