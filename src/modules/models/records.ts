// The `models` table (migration 0014-models): one row per model pulled over HTTP, with how its pull went, and the
// `models_version` stamp in instance_settings that every change renews so that each node notices it (sync.ts).
import type { Kysely } from 'kysely';
import { randomToken } from '../../lib/ids.js';
import type { Database, ModelsTable } from '../../storage/schema.js';

export type ModelStatus = 'downloading' | 'installing' | 'ready' | 'failed';
export const MODEL_STATUSES: readonly ModelStatus[] = ['downloading', 'installing', 'ready', 'failed'];

export type ModelRow = Omit<ModelsTable, 'status'> & { status: ModelStatus };

const VERSION_KEY = 'models_version';

export class ModelRecords {
  constructor(private readonly db: Kysely<Database>) {}

  async get(id: string): Promise<ModelRow | undefined> {
    return (await this.db.selectFrom('models').selectAll().where('id', '=', id).executeTakeFirst()) as ModelRow | undefined;
  }

  async list(): Promise<ModelRow[]> {
    return (await this.db.selectFrom('models').selectAll().orderBy('id').execute()) as ModelRow[];
  }

  /**
   * Insert a new pull's row, and run `then` (the job's enqueueing) in the same transaction; false when a row of that
   * id exists (nothing is written). A failed row of the id is replaced.
   */
  async insert(row: ModelRow, then: (tx: Kysely<Database>) => Promise<unknown>): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('models').where('id', '=', row.id).where('status', '=', 'failed').execute();
      const r = await tx
        .insertInto('models')
        .values(row)
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
      await then(tx);
      await bump(tx);
      return true;
    });
  }

  /**
   * Update the row while its status is one of `from` (a removed or settled row is left alone) and, with `createdAt`,
   * while it is the row of that pull (not a newer pull of the id); false otherwise.
   */
  async update(
    id: string,
    from: readonly ModelStatus[],
    patch: Partial<Omit<ModelRow, 'id' | 'created_at'>>,
    bumpVersion = true,
    createdAt?: string,
  ): Promise<boolean> {
    let query = this.db
      .updateTable('models')
      .set({ ...patch, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', 'in', [...from]);
    if (createdAt !== undefined) query = query.where('created_at', '=', createdAt);
    const r = await query.executeTakeFirst();
    const changed = Number(r.numUpdatedRows) > 0;
    if (changed && bumpVersion) await bump(this.db);
    return changed;
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Say that the installed models changed (a removal or new aliases of a model with or without a row). */
  async changed(): Promise<void> {
    await bump(this.db);
  }

  /** The current stamp; a node that read another one last time looks at the models directory again. */
  async version(): Promise<string | undefined> {
    const row = await this.db.selectFrom('instance_settings').select('value').where('key', '=', VERSION_KEY).executeTakeFirst();
    return row?.value;
  }
}

async function bump(db: Kysely<Database>): Promise<void> {
  const value = randomToken(12);
  await db
    .insertInto('instance_settings')
    .values({ key: VERSION_KEY, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
