// The STT model list over HTTP. The entries (shape and aliases) are the model catalog's (catalog.ts).
import type { RouteModule } from '../../http/context.js';
import { modelsSchema } from './schemas.js';

export const modelsRoutes: RouteModule = async (app, { ctx }) => {
  app.get('/v1/models', { schema: modelsSchema, config: { guard: { permission: null, rate: 'models' } } }, async () => ({ models: ctx.models.list() }));
};
