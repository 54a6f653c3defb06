// Concurrency report and concurrent-streams history over HTTP (docs/wire-compat.md, "REST conventions").
import type { RouteModule } from '../../http/context.js';
import { concurrencyLimitsSchema, streamsHistorySchema } from './schemas.js';

// Monitoring data of the key's project: the usage read permission, counted under its own rate category.
const guard = { permission: { scope: 'usage', level: 'read' }, rate: 'concurrency' } as const;

export const limitsRoutes: RouteModule = async (app, { ctx }) => {
  app.get('/v1/concurrency-limits', { schema: concurrencyLimitsSchema, config: { guard } }, async (req) =>
    ctx.concurrency.report(req.auth.organizationId, req.auth.projectId),
  );

  app.get('/v1/concurrent-streams-history', { schema: streamsHistorySchema, config: { guard } }, async (req) =>
    ctx.streamHistory.history(req.auth.projectId, req.query),
  );
};
