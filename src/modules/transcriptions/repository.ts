import type { Kysely, Updateable } from 'kysely';
import type { Database, TranscriptionsTable } from '../../storage/schema.js';
import type { TranscriptionStatus } from '../../wire/compat.js';

export type TranscriptionRow = TranscriptionsTable;

export class TranscriptionsRepository {
  constructor(readonly db: Kysely<Database>) {}

  async insert(row: TranscriptionRow, db: Kysely<Database> = this.db): Promise<void> {
    await db.insertInto('transcriptions').values(row).execute();
  }

  async get(projectId: string, id: string): Promise<TranscriptionRow | undefined> {
    return this.db.selectFrom('transcriptions').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  }

  /** For the worker, which acts on behalf of the row's own project. */
  async getById(id: string): Promise<TranscriptionRow | undefined> {
    return this.db.selectFrom('transcriptions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(projectId: string, limit: number, after?: [string, string]): Promise<TranscriptionRow[]> {
    let q = this.db.selectFrom('transcriptions').selectAll().where('project_id', '=', projectId);
    if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async countBySource(projectId: string): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('transcriptions')
      .select((eb) => ['source', eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy('source')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.source, Number(r.n)]));
  }

  /**
   * Move a job between states only if it is still in one of `from`: every actor (worker, file deletion,
   * delete request) changes state through this, so concurrent actors cannot overwrite each other.
   */
  async transition(
    id: string,
    from: readonly TranscriptionStatus[],
    to: TranscriptionStatus,
    patch: Updateable<TranscriptionsTable>,
    now: string,
    db: Kysely<Database> = this.db,
  ): Promise<boolean> {
    const r = await db
      .updateTable('transcriptions')
      .set({ ...patch, status: to, updated_at: now })
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async update(id: string, patch: Updateable<TranscriptionsTable>, db: Kysely<Database> = this.db): Promise<void> {
    await db.updateTable('transcriptions').set(patch).where('id', '=', id).execute();
  }

  /** Still-queued jobs that read this file (they fail when it is deleted). */
  async queuedForFile(fileId: string): Promise<TranscriptionRow[]> {
    return this.db.selectFrom('transcriptions').selectAll().where('file_id', '=', fileId).where('status', '=', 'queued').execute();
  }

  /** Delete unless transcribing; returns the deleted row, 'transcribing', or undefined when absent. */
  async deleteUnlessTranscribing(projectId: string, id: string): Promise<TranscriptionRow | 'transcribing' | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('transcriptions').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      if (row.status === 'transcribing') return 'transcribing';
      const r = await tx.deleteFrom('transcriptions').where('id', '=', id).where('status', '!=', 'transcribing').executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return 'transcribing';
      await tx.deleteFrom('transcripts').where('transcription_id', '=', id).execute();
      return row;
    });
  }

  async saveTranscript(id: string, text: string, tokensJson: string, db: Kysely<Database> = this.db): Promise<void> {
    await db.deleteFrom('transcripts').where('transcription_id', '=', id).execute();
    await db.insertInto('transcripts').values({ transcription_id: id, text, tokens: tokensJson }).execute();
  }

  async getTranscript(id: string): Promise<{ text: string; tokens: string } | undefined> {
    return this.db.selectFrom('transcripts').select(['text', 'tokens']).where('transcription_id', '=', id).executeTakeFirst();
  }

  /** Drop transcript data of jobs completed before `before`; returns how many were purged. */
  async purgeTranscripts(before: string, now: string): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      const ids = (
        await tx
          .selectFrom('transcriptions')
          .select('id')
          .where('status', '=', 'completed')
          .where('completed_at', '<', before)
          .where('transcript_purged_at', 'is', null)
          .limit(1000)
          .execute()
      ).map((r) => r.id);
      if (!ids.length) return 0;
      await tx.deleteFrom('transcripts').where('transcription_id', 'in', ids).execute();
      await tx.updateTable('transcriptions').set({ transcript_purged_at: now }).where('id', 'in', ids).execute();
      return ids.length;
    });
  }
}
