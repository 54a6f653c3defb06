import type { Kysely } from 'kysely';
import type { ApiKeysTable, Database, TemporaryApiKeysTable } from '../../storage/schema.js';

export type ApiKeyRow = ApiKeysTable;
export type TemporaryKeyRow = TemporaryApiKeysTable;

/** An API key row joined with what authentication needs to know about its project. */
export interface ApiKeyWithProject extends ApiKeyRow {
  project_deleted_at: string | null;
}

export class KeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertApiKey(row: ApiKeyRow): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  async findApiKeyByPrefix(prefix: string): Promise<ApiKeyWithProject | undefined> {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('projects', 'projects.id', 'api_keys.project_id')
      .selectAll('api_keys')
      .select('projects.deleted_at as project_deleted_at')
      .where('api_keys.key_prefix', '=', prefix)
      .executeTakeFirst();
  }

  async getApiKeyWithProject(id: string): Promise<ApiKeyWithProject | undefined> {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('projects', 'projects.id', 'api_keys.project_id')
      .selectAll('api_keys')
      .select('projects.deleted_at as project_deleted_at')
      .where('api_keys.id', '=', id)
      .executeTakeFirst();
  }

  async getApiKey(id: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Keys of a project, newest first; revoked ones only when asked. */
  async listApiKeys(projectId: string, includeRevoked: boolean): Promise<ApiKeyRow[]> {
    let q = this.db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId);
    if (!includeRevoked) q = q.where('revoked_at', 'is', null);
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  }

  async revokeApiKey(id: string, at: string): Promise<boolean> {
    const r = await this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async insertTemporaryKey(row: TemporaryKeyRow): Promise<void> {
    await this.db.insertInto('temporary_api_keys').values(row).execute();
  }

  async findTemporaryKeyByPrefix(prefix: string): Promise<TemporaryKeyRow | undefined> {
    return this.db.selectFrom('temporary_api_keys').selectAll().where('key_prefix', '=', prefix).executeTakeFirst();
  }

  /** Atomically marks a single-use key consumed; false when another session consumed it first. */
  async consumeTemporaryKey(id: string, at: string): Promise<boolean> {
    const r = await this.db.updateTable('temporary_api_keys').set({ consumed_at: at }).where('id', '=', id).where('consumed_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Housekeeping: expired temporary keys are useless; keep the table small. */
  async deleteExpiredTemporaryKeys(before: string): Promise<number> {
    const r = await this.db.deleteFrom('temporary_api_keys').where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
