// Cloned voices and their per-model preparation rows, on SQLite and PostgreSQL alike.
import type { Kysely } from 'kysely';
import type { Database, VoiceModelsTable, VoicesTable } from '../../storage/schema.js';

export type VoiceRow = VoicesTable;
export type VoiceModelRow = VoiceModelsTable;

/** The database refused a second voice with the same name in a project. */
export class VoiceNameTaken extends Error {}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export class VoicesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The voice and its first model rows together; throws VoiceNameTaken when the name is in use. */
  async insert(voice: VoiceRow, models: VoiceModelRow[], after?: (tx: Kysely<Database>) => Promise<void>): Promise<void> {
    try {
      await this.db.transaction().execute(async (tx) => {
        await tx.insertInto('voices').values(voice).execute();
        if (models.length) await tx.insertInto('voice_models').values(models).execute();
        await after?.(tx);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new VoiceNameTaken(voice.name);
      throw err;
    }
  }

  async get(projectId: string, id: string): Promise<VoiceRow | undefined> {
    return this.db.selectFrom('voices').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  }

  async getById(id: string): Promise<VoiceRow | undefined> {
    return this.db.selectFrom('voices').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async models(voiceIds: string[]): Promise<VoiceModelRow[]> {
    if (!voiceIds.length) return [];
    return this.db.selectFrom('voice_models').selectAll().where('voice_id', 'in', voiceIds).execute();
  }

  async model(voiceId: string, model: string): Promise<VoiceModelRow | undefined> {
    return this.db.selectFrom('voice_models').selectAll().where('voice_id', '=', voiceId).where('model', '=', model).executeTakeFirst();
  }

  /** Newest first; `after` is the (created_at, id) of the previous page's last row. */
  async list(projectId: string, limit: number, after?: [string, string]): Promise<VoiceRow[]> {
    let q = this.db.selectFrom('voices').selectAll().where('project_id', '=', projectId);
    if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async count(projectId: string): Promise<number> {
    const r = await this.db
      .selectFrom('voices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Start preparing `models` that have no row yet (not_computed → processing), with `after` (enqueueing
   * their jobs) in the same transaction. Returns the models actually moved; rows that exist are left alone
   * (a failed voice stays failed).
   */
  async startModels(voiceId: string, models: string[], now: string, after: (tx: Kysely<Database>, moved: string[]) => Promise<void>): Promise<string[]> {
    return this.db.transaction().execute(async (tx) => {
      const moved: string[] = [];
      for (const model of models) {
        const r = await tx
          .insertInto('voice_models')
          .values({ voice_id: voiceId, model, status: 'processing', error_type: null, error_message: null, adaptation: null, updated_at: now })
          .onConflict((oc) => oc.columns(['voice_id', 'model']).doNothing())
          .executeTakeFirst();
        if (Number(r.numInsertedOrUpdatedRows ?? 0) > 0) moved.push(model);
      }
      if (moved.length) await after(tx, moved);
      return moved;
    });
  }

  /** processing → ready | failed; false when the row is not processing (finished already, or voice deleted). */
  async finish(
    voiceId: string,
    model: string,
    outcome: Pick<VoiceModelRow, 'status' | 'error_type' | 'error_message' | 'adaptation'>,
    now: string,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('voice_models')
      .set({ ...outcome, updated_at: now })
      .where('voice_id', '=', voiceId)
      .where('model', '=', model)
      .where('status', '=', 'processing')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Back to not_computed (the row goes). */
  async deleteModel(voiceId: string, model: string): Promise<void> {
    await this.db.deleteFrom('voice_models').where('voice_id', '=', voiceId).where('model', '=', model).execute();
  }

  async setReferenceProfile(voiceId: string, profile: string): Promise<void> {
    await this.db.updateTable('voices').set({ reference_profile: profile }).where('id', '=', voiceId).execute();
  }

  /** Delete the voice and its model rows; returns the deleted voice. */
  async delete(projectId: string, id: string): Promise<VoiceRow | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('voices').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      await tx.deleteFrom('voice_models').where('voice_id', '=', id).execute();
      const r = await tx.deleteFrom('voices').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0 ? row : undefined;
    });
  }
}
