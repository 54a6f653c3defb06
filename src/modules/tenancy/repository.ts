import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Database, OrganizationsTable, ProjectsTable } from '../../storage/schema.js';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type ProjectRow = ProjectsTable;

export class TenancyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertOrganization(row: Insertable<OrganizationsTable>): Promise<void> {
    await this.db.insertInto('organizations').values(row).execute();
  }

  async firstOrganization(): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  }

  async getOrganization(id: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async updateOrganization(id: string, patch: Updateable<OrganizationsTable>): Promise<boolean> {
    const r = await this.db.updateTable('organizations').set(patch).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async insertProject(row: Omit<ProjectRow, 'deleted_at' | 'monthly_budget_usd' | 'monthly_budget_notification_usd'>): Promise<void> {
    await this.db.insertInto('projects').values(row).execute();
  }

  async getProject(id: string): Promise<ProjectRow | undefined> {
    return this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async listProjects(organizationId: string): Promise<ProjectRow[]> {
    return this.db
      .selectFrom('projects')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Soft delete: the row stays (usage reports still name it); false when unknown or already deleted. */
  async softDeleteProject(id: string, at: string): Promise<boolean> {
    const r = await this.db.updateTable('projects').set({ deleted_at: at }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Every project of the organization, deleted ones too (usage reports must add up). */
  async listProjectsWithDeleted(organizationId: string): Promise<ProjectRow[]> {
    return this.db.selectFrom('projects').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
  }

  async updateProject(id: string, patch: Partial<Omit<ProjectRow, 'id' | 'organization_id' | 'created_at'>>): Promise<boolean> {
    const r = await this.db.updateTable('projects').set(patch).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
