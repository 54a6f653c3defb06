// Usage of a process: prices, the meter every billable surface records through (counted in the metrics), the
// balance and budget guard checked before billable work starts, and the /v1/usage routes.
import type { Logger } from 'pino';
import { ConfigError, type Settings } from '../../config/settings.js';
import { mount, type Mount } from '../../http/app-types.js';
import { countedMeter, type Metrics } from '../../http/metrics.js';
import type { CursorCodec } from '../../lib/cursor.js';
import type { Db } from '../../storage/database.js';
import { type BillingGuard, BudgetGuard } from '../billing/guard.js';
import { TenancyRepository } from '../tenancy/repository.js';
import { PriceTable } from './prices.js';
import { UsageRepository } from './repository.js';
import { usageRoutes } from './routes.js';
import { type UsageMeter, UsageService } from './service.js';

export interface UsageModule {
  usage: UsageService;
  meter: UsageMeter;
  billing: BillingGuard;
  routes: Mount;
}

export function usageModule(settings: Settings, deps: { db: Db; cursors: CursorCodec; metrics: Metrics; log: Logger }): UsageModule {
  const { db, log } = deps;
  const tenancyRepo = new TenancyRepository(db.kysely);
  const usageRepo = new UsageRepository(db.kysely, db.dialect);
  let prices: PriceTable;
  try {
    prices = new PriceTable(settings.usagePrices, usageRepo);
  } catch (err) {
    throw new ConfigError(`PARLANCE_USAGE_PRICES (usagePrices): ${(err as Error).message}`);
  }
  const usage = new UsageService(usageRepo, prices, tenancyRepo, deps.cursors, { event: (detail, msg) => log.warn(detail, msg) });
  return { usage, meter: countedMeter(usage, deps.metrics), billing: new BudgetGuard(tenancyRepo, usageRepo), routes: mount(usageRoutes, { usage }) };
}
