// The CLI's `models pull`, `models import` and `models remove` change the models directory behind a running server's
// back: they renew the `models_version` stamp (records.ts) that every node polls, as a change over HTTP does, so that
// the servers sharing this data directory's database serve the change within PARLANCE_MODEL_SYNC_SECONDS, without a
// restart. A data directory with no database yet (no server has run there) has nobody to tell.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Settings } from '../../config/settings.js';
import { DATABASE_FILE, type Db, openDatabase } from '../../storage/database.js';
import { ModelRecords } from './records.js';

export type Told = { told: true } | { told: false; reason?: string };

/**
 * Renew the stamp the servers poll; with `removed`, the record of that model's pull goes too (it would show a model
 * no longer there). `told: false` with no reason: there is no database; with one: it could not be written.
 */
export async function tellServers(settings: Pick<Settings, 'dataDir' | 'databaseUrl'>, change: { removed?: string } = {}): Promise<Told> {
  if (!settings.databaseUrl && !existsSync(path.join(settings.dataDir, DATABASE_FILE))) return { told: false };
  let db: Db | undefined;
  try {
    db = await openDatabase({ dataDir: settings.dataDir, databaseUrl: settings.databaseUrl || undefined });
    const records = new ModelRecords(db.kysely);
    if (change.removed !== undefined) await records.delete(change.removed);
    await records.changed();
    return { told: true };
  } catch (err) {
    return { told: false, reason: (err as Error).message };
  } finally {
    await db?.close().catch(() => undefined);
  }
}
