// /v1/admin/models over HTTP (keys with models:admin): parse, delegate to ModelAdmin, shape the reply.
import type { RoutePlugin } from '../../http/app-types.js';
import type { ModelAdmin } from './admin.js';
import { deleteAdminModelSchema, getAdminModelSchema, listAdminModelsSchema, pullModelSchema, setAliasesSchema } from './admin-schemas.js';

const guard = { permission: { scope: 'models', level: 'admin' }, rate: 'models' } as const;

export interface AdminModelsRoutesOptions {
  admin: ModelAdmin;
}

export const adminModelsRoutes: RoutePlugin<AdminModelsRoutesOptions> = async (app, { admin }) => {
  app.get('/v1/admin/models', { schema: listAdminModelsSchema, config: { guard } }, async () => admin.list());

  app.post('/v1/admin/models', { schema: pullModelSchema, config: { guard } }, async (req, reply) => reply.code(202).send(await admin.pull(req.body)));

  app.get('/v1/admin/models/:model_id', { schema: getAdminModelSchema, config: { guard } }, async (req) => admin.get(req.params.model_id));

  app.delete('/v1/admin/models/:model_id', { schema: deleteAdminModelSchema, config: { guard } }, async (req, reply) => {
    await admin.remove(req.params.model_id);
    return reply.code(204).send(null);
  });

  app.put('/v1/admin/models/:model_id/aliases', { schema: setAliasesSchema, config: { guard } }, async (req) =>
    admin.setAliases(req.params.model_id, req.body.aliases),
  );
};
