import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../storage/database.js';
import type { Database, FilesTable } from '../../storage/schema.js';

export type FileRow = FilesTable;

export interface Usage {
  count: number;
  bytes: number;
}

export interface CapCheck {
  /** Returns an error message when adding one file of `size` bytes would break a cap. */
  (usage: { project: Usage; organization: Usage }, size: number): string | null;
}

export class FilesRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Files and bytes stored by a project or organization, from the counters (one row per project and source). */
  async usage(scope: 'project' | 'organization', id: string, db: Kysely<Database> = this.db): Promise<Usage> {
    const col = scope === 'project' ? 'project_id' : 'organization_id';
    const r = await db
      .selectFrom('file_usage')
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number>('files'), sql<number>`0`).as('count'),
        eb.fn.coalesce(eb.fn.sum<number>('bytes'), sql<number>`0`).as('bytes'),
      ])
      .where(col, '=', id)
      .executeTakeFirstOrThrow();
    return { count: Number(r.count), bytes: Number(r.bytes) };
  }

  /** Adjust the counters of the file's project and source by one file (+1 or -1), in the caller's transaction. */
  private async adjustUsage(tx: Kysely<Database>, row: FileRow, sign: 1 | -1): Promise<void> {
    await tx
      .insertInto('file_usage')
      .values({ project_id: row.project_id, organization_id: row.organization_id, source: row.source, files: sign, bytes: sign * row.size })
      .onConflict((oc) =>
        oc.columns(['project_id', 'source']).doUpdateSet((eb) => ({
          files: eb(eb.ref('file_usage.files'), '+', sign),
          bytes: eb(eb.ref('file_usage.bytes'), '+', sign * row.size),
        })),
      )
      .execute();
  }

  /**
   * Insert the row only if the caps still allow it, checked inside one transaction so that concurrent
   * uploads cannot together overshoot a cap. Returns the cap message when refused.
   */
  async insertWithinCaps(row: FileRow, check: CapCheck): Promise<string | null> {
    return this.db.transaction().execute(async (tx) => {
      if (this.dialect === 'postgres') {
        // Serialise uploads of one organization: lock its row for the duration of the check + insert.
        await tx.selectFrom('organizations').select('id').where('id', '=', row.organization_id).forUpdate().execute();
      }
      const usage = { project: await this.usage('project', row.project_id, tx), organization: await this.usage('organization', row.organization_id, tx) };
      const refused = check(usage, row.size);
      if (refused) return refused;
      await tx.insertInto('files').values(row).execute();
      await this.adjustUsage(tx, row, 1);
      return null;
    });
  }

  async get(projectId: string, id: string): Promise<FileRow | undefined> {
    return this.db.selectFrom('files').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `after` is the (created_at, id) of the previous page's last row. */
  async list(projectId: string, limit: number, after?: [string, string]): Promise<FileRow[]> {
    let q = this.db.selectFrom('files').selectAll().where('project_id', '=', projectId);
    if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async countBySource(projectId: string): Promise<Record<string, number>> {
    const rows = await this.db.selectFrom('file_usage').select(['source', 'files']).where('project_id', '=', projectId).execute();
    return Object.fromEntries(rows.map((r) => [r.source, Number(r.files)]));
  }

  /** Delete the row and its share of the counters together; returns the deleted row. */
  async delete(projectId: string, id: string): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('files').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      const r = await tx.deleteFrom('files').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) return undefined;
      await this.adjustUsage(tx, row, -1);
      return row;
    });
  }
}
