// Organization administration for API clients: the key's organization, its projects, a project's keys and
// key deletion. Projects of other organizations (and deleted projects) are unknown: 404, never 403.
import { type Clock, systemClock } from '../../lib/clock.js';
import { ApiError } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import type { KeyRepository } from '../auth/repository.js';
import type { ProjectRow, TenancyRepository } from '../tenancy/repository.js';
import type { Organization as OrganizationRecord, Project as ProjectRecord, ProjectApiKey as ProjectApiKeyRecord } from './schemas.js';

const projectNotFound = (id: string) => new ApiError('project_not_found', `Project ${id} not found.`);

export class OrganizationService {
  private readonly clock: Clock;

  constructor(
    private readonly tenancy: TenancyRepository,
    private readonly keys: KeyRepository,
    opts: { clock?: Clock } = {},
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  async organization(auth: AuthContext): Promise<OrganizationRecord> {
    const org = await this.tenancy.getOrganization(auth.organizationId);
    if (!org) throw new ApiError('unauthenticated', 'Organization no longer exists.');
    return { id: org.id, name: org.name, created_at: org.created_at };
  }

  /** Live projects, oldest first. */
  async projects(auth: AuthContext): Promise<{ projects: ProjectRecord[] }> {
    const rows = await this.tenancy.listProjects(auth.organizationId);
    return { projects: rows.map(toProjectRecord) };
  }

  /** A project's live keys, newest first. */
  async apiKeys(auth: AuthContext, projectId: string): Promise<{ api_keys: ProjectApiKeyRecord[] }> {
    const project = await this.visibleProject(auth, projectId);
    const rows = await this.keys.listApiKeys(project.id, false);
    return {
      api_keys: rows.map((r) => ({
        id: r.id,
        key_prefix: r.key_prefix,
        name: r.name,
        permissions: JSON.parse(r.permissions) as string[],
        created_at: r.created_at,
        created_by: r.created_by,
        created_by_key_id: r.created_by_key_id,
      })),
    };
  }

  /** Delete (revoke) a key: authentication reads the key row on every request, so it is refused at once. */
  async deleteApiKey(auth: AuthContext, projectId: string, keyId: string): Promise<void> {
    const project = await this.visibleProject(auth, projectId);
    const key = await this.keys.getApiKey(keyId);
    if (!key || key.project_id !== project.id || key.revoked_at) throw new ApiError('api_key_not_found', `API key ${keyId} not found in project ${projectId}.`);
    // A concurrent deletion of the same key wins the race; this one then reports the key as gone.
    if (!(await this.keys.revokeApiKey(key.id, this.clock.now().toISOString())))
      throw new ApiError('api_key_not_found', `API key ${keyId} not found in project ${projectId}.`);
  }

  private async visibleProject(auth: AuthContext, projectId: string): Promise<ProjectRow> {
    const project = await this.tenancy.getProject(projectId);
    if (!project || project.organization_id !== auth.organizationId || project.deleted_at) throw projectNotFound(projectId);
    return project;
  }
}

export function toProjectRecord(p: ProjectRow): ProjectRecord {
  return { id: p.id, name: p.name, description: p.description, region: p.region, created_at: p.created_at };
}
