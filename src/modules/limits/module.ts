// Limits of a process: request rates, concurrent streams per organization and project (shared through Redis when
// set), the sampled stream history and its retention, and the /v1/limits routes.
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import { mount, type Mount } from '../../http/app-types.js';
import { randomToken } from '../../lib/ids.js';
import type { Db } from '../../storage/database.js';
import { ConcurrencyLimits } from './concurrency.js';
import { RateLimits } from './rate-limits.js';
import { LimitsRepository } from './repository.js';
import { limitsRoutes } from './routes.js';
import { StreamHistory, StreamSampler } from './stream-history.js';

const DAY_MS = 86_400_000;

export interface LimitsModule {
  rateLimits: RateLimits;
  concurrency: ConcurrencyLimits;
  routes: Mount;
  /** Start sampling streams; returns a stop function. */
  startSampler(): () => void;
  /** Drop stream samples past their retention. */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

export function limitsModule(settings: Settings, deps: { db: Db; log: Logger }): LimitsModule {
  const { log } = deps;
  const rateLimits = new RateLimits(settings);
  const repo = new LimitsRepository(deps.db.kysely);
  const concurrency = new ConcurrencyLimits(repo, {
    defaults: {
      stt: { organization: settings.realtimeConcurrentStreamsOrg, project: settings.realtimeConcurrentStreamsProject },
      tts: { organization: settings.ttsConcurrentOrg, project: settings.ttsConcurrentProject },
    },
    redisUrl: settings.redisUrl || undefined,
    leaseMs: settings.concurrencyLeaseSeconds * 1000,
    log,
  });
  const sampler = new StreamSampler(concurrency, repo, { intervalMs: settings.concurrencySampleSeconds * 1000, nodeId: randomToken(9), log });
  return {
    rateLimits,
    concurrency,
    routes: mount(limitsRoutes, { concurrency, streamHistory: new StreamHistory(repo) }),
    startSampler: () => sampler.start(),
    async sweep() {
      await repo.deleteSamplesBefore(new Date(Date.now() - settings.concurrencyHistoryRetentionDays * DAY_MS).toISOString());
    },
    async close() {
      await rateLimits.close();
      await sampler.settled();
      await concurrency.close();
    },
  };
}
