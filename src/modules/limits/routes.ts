// Concurrency report and concurrent-streams history over HTTP (docs/wire-compat.md, "REST conventions").
import type { RoutePlugin } from '../../http/app-types.js';
import { concurrencyLimitsSchema, streamsHistorySchema } from './schemas.js';
import type { StreamHistory } from './stream-history.js';
import type { ConcurrencyLimits } from './concurrency.js';

// Monitoring data of the key's project: the usage read permission, counted under its own rate category.
const guard = { permission: { scope: 'usage', level: 'read' }, rate: 'concurrency' } as const;

export interface LimitsRoutesOptions {
  concurrency: ConcurrencyLimits;
  streamHistory: StreamHistory;
}

export const limitsRoutes: RoutePlugin<LimitsRoutesOptions> = async (app, { concurrency, streamHistory }) => {
  app.get('/v1/concurrency-limits', { schema: concurrencyLimitsSchema, config: { guard } }, async (req) =>
    concurrency.report(req.auth.organizationId, req.auth.projectId),
  );

  app.get('/v1/concurrent-streams-history', { schema: streamsHistorySchema, config: { guard } }, async (req) =>
    streamHistory.history(req.auth.projectId, req.query),
  );
};
