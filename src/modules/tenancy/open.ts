// Storage and the tenancy service alone: what the admin CLI needs (and the server starts from). Kept apart from the
// server's assembly so that admin commands do not load the HTTP stack, the engines and Redis.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ensureDataDir } from '../../config/data-dir.js';
import type { Settings } from '../../config/settings.js';
import { DATABASE_FILE, openDatabase, type Db } from '../../storage/database.js';
import { KeyRepository } from '../auth/repository.js';
import { TenancyRepository } from './repository.js';
import { TenancyError, TenancyService } from './service.js';

export async function openTenancy(
  settings: Settings,
  opts: { mustExist?: boolean } = {},
): Promise<{ db: Db; tenancy: TenancyService; close(): Promise<void> }> {
  // A mistyped --data-dir should say so, not quietly create an empty database there.
  if (opts.mustExist && !settings.databaseUrl && !existsSync(path.join(settings.dataDir, DATABASE_FILE)))
    throw new TenancyError(`no Parlance database in ${settings.dataDir} (start \`parlance serve\` or run \`parlance admin bootstrap\` there first)`);
  ensureDataDir(settings.dataDir);
  const db = await openDatabase({ dataDir: settings.dataDir, databaseUrl: settings.databaseUrl || undefined });
  const tenancy = new TenancyService(new TenancyRepository(db.kysely), new KeyRepository(db.kysely), { environment: settings.environment });
  return { db, tenancy, close: () => db.close() };
}
