// Organization administration over HTTP. Reads need organization:read, key deletion organization:write.
import type { RoutePlugin } from '../../http/app-types.js';
import { deleteApiKeySchema, getOrganizationSchema, listApiKeysSchema, listProjectsSchema } from './schemas.js';
import type { OrganizationService } from './service.js';

const read = { permission: { scope: 'organization', level: 'read' }, rate: 'organization' } as const;
const write = { permission: { scope: 'organization', level: 'write' }, rate: 'organization' } as const;

export interface OrganizationRoutesOptions {
  organization: OrganizationService;
}

export const organizationRoutes: RoutePlugin<OrganizationRoutesOptions> = async (app, { organization: org }) => {
  app.get('/v1/organization', { schema: getOrganizationSchema, config: { guard: read } }, async (req) => org.organization(req.auth));

  app.get('/v1/organization/projects', { schema: listProjectsSchema, config: { guard: read } }, async (req) => org.projects(req.auth));

  app.get('/v1/organization/projects/:project_id/api-keys', { schema: listApiKeysSchema, config: { guard: read } }, async (req) =>
    org.apiKeys(req.auth, req.params.project_id),
  );

  app.delete('/v1/organization/projects/:project_id/api-keys/:key_id', { schema: deleteApiKeySchema, config: { guard: write } }, async (req, reply) => {
    await org.deleteApiKey(req.auth, req.params.project_id, req.params.key_id);
    return reply.code(204).send(null);
  });
};
