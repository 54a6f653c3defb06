// Who Wyoming's requests are for: the protocol carries no credentials, so everything is metered to one project.
import { ConfigError } from '../../config/settings.js';
import type { TenancyService } from '../tenancy/service.js';
import type { WyomingTenant } from './service.js';

/** The project Wyoming requests are metered to: PARLANCE_WYOMING_PROJECT, else the first organization's first project. */
export async function resolveWyomingTenant(tenancy: Pick<TenancyService, 'project' | 'allProjects'>, projectId: string): Promise<WyomingTenant> {
  if (projectId) {
    const project = await tenancy.project(projectId);
    if (!project || project.deleted_at) throw new ConfigError(`PARLANCE_WYOMING_PROJECT: project ${projectId} does not exist (or was deleted)`);
    return { organizationId: project.organization_id, projectId: project.id };
  }
  const project = (await tenancy.allProjects())[0];
  if (!project)
    throw new ConfigError('the Wyoming server needs a project to meter to: set PARLANCE_WYOMING_PROJECT (no organization with a project exists yet)');
  return { organizationId: project.organization_id, projectId: project.id };
}
