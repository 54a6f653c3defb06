// Usage and billing over HTTP: monthly usage and balance (organization), usage logs and the daily summary
// (the key's project). Transport only.
import type { RoutePlugin } from '../../http/app-types.js';
import { balanceSchema, monthlyUsageSchema, usageLogsSchema, usageSummarySchema } from './schemas.js';
import type { UsageService } from './service.js';

const organizationRead = { permission: { scope: 'organization', level: 'read' }, rate: 'usage_logs' } as const;
const usageRead = { permission: { scope: 'usage', level: 'read' }, rate: 'usage_logs' } as const;

export interface UsageRoutesOptions {
  usage: UsageService;
}

export const usageRoutes: RoutePlugin<UsageRoutesOptions> = async (app, { usage }) => {
  const query = (q: unknown) => (q ?? {}) as Record<string, unknown>;

  app.get('/v1/organization/usage/monthly', { schema: monthlyUsageSchema, config: { guard: organizationRead } }, async (req) =>
    usage.monthlyUsage(req.auth.organizationId, query(req.query).month),
  );

  app.get('/v1/organization/balance', { schema: balanceSchema, config: { guard: organizationRead } }, async (req) => usage.balance(req.auth.organizationId));

  app.get('/v1/usage-logs', { schema: usageLogsSchema, config: { guard: usageRead } }, async (req) => usage.logs(req.auth.projectId, query(req.query)));

  app.get('/v1/usage/summary', { schema: usageSummarySchema, config: { guard: usageRead } }, async (req) =>
    usage.summary(req.auth.projectId, query(req.query)),
  );
};
