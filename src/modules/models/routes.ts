// The STT model list over HTTP. The entries (shape and aliases) are the model catalog's (catalog.ts).
import type { RoutePlugin } from '../../http/app-types.js';
import { modelsSchema } from './schemas.js';
import type { ModelCatalog } from './catalog.js';

export interface ModelsRoutesOptions {
  models: ModelCatalog;
}

export const modelsRoutes: RoutePlugin<ModelsRoutesOptions> = async (app, { models }) => {
  app.get('/v1/models', { schema: modelsSchema, config: { guard: { permission: null, rate: 'models' } } }, async () => ({ models: models.list() }));
};
