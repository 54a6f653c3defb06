// Requests-per-minute limits per organization and per project, for each category the spec lists.
// rate-limiter-flexible keeps the counters: in memory by default, in Redis when several nodes share them.
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { rateCategories, rateLimitOf, type RateCategory, type Settings } from '../../config/settings.js';
import { ApiError } from '../../wire/api-error.js';

const WINDOW_SECONDS = 60;
/** Longest wait for one Redis answer; a request counted against both scopes waits at most twice this. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

export type RateLimitHeaders = Record<'ratelimit-limit' | 'ratelimit-remaining' | 'ratelimit-reset', string>;

interface Scoped {
  scope: 'organization' | 'project';
  points: number;
  limiter: RateLimiterAbstract;
}

export class RateLimits {
  private readonly limiters = new Map<RateCategory, Scoped[]>();
  private readonly redis?: Redis;
  /** Settles once the first Redis connection attempt is over (ready or failed). */
  private readonly firstConnection?: Promise<void>;

  constructor(settings: Settings, opts: { keyPrefix?: string } = {}) {
    const prefix = opts.keyPrefix ?? 'parlance:rl';
    if (settings.redisUrl) {
      // rate-limiter-flexible asks for no offline queue, so a Redis outage fails fast to the insurance limiter.
      // A Redis that stops answering on an open connection (hung, or a network partition) fails over too:
      // without a command timeout every counted request would wait for it forever.
      this.redis = new Redis(settings.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        lazyConnect: false,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      });
      this.redis.on('error', () => undefined);
      // Without the offline queue, a command sent while still connecting fails at once and is counted by the
      // per-process insurance limiter instead: the first requests after start would escape the shared count.
      const redis = this.redis;
      this.firstConnection = new Promise<void>((resolve) => {
        const done = () => {
          redis.off('ready', done).off('error', done).off('end', done);
          resolve();
        };
        redis.once('ready', done).once('error', done).once('end', done);
      });
    }
    for (const cat of rateCategories) {
      const scoped: Scoped[] = [];
      for (const scope of ['project', 'organization'] as const) {
        const points = rateLimitOf(settings, cat, scope);
        if (!points) continue;
        const keyPrefix = `${prefix}:${cat}:${scope}`;
        const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix });
        const limiter = this.redis
          ? new RateLimiterRedis({ storeClient: this.redis, points, duration: WINDOW_SECONDS, keyPrefix, insuranceLimiter: memory })
          : memory;
        scoped.push({ scope, points, limiter });
      }
      this.limiters.set(cat, scoped);
    }
  }

  /** Count one request; throws 429 limit_exceeded naming the limit, or returns the headers to send. */
  async consume(category: RateCategory, organizationId: string, projectId: string): Promise<RateLimitHeaders | null> {
    const scoped = this.limiters.get(category) ?? [];
    if (this.firstConnection && scoped.length) await this.firstConnection;
    let tightest: { points: number; res: RateLimiterRes } | null = null;
    for (const s of scoped) {
      const key = s.scope === 'project' ? projectId : organizationId;
      try {
        const res = await s.limiter.consume(key, 1);
        if (!tightest || res.remainingPoints < tightest.res.remainingPoints) tightest = { points: s.points, res };
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new ApiError(
          'limit_exceeded',
          `Requests per minute limit exceeded for the ${s.scope} (${category.replace(/_/g, ' ')}: ${s.points} requests per minute).`,
          {
            headers: {
              'retry-after': String(retryAfter),
              'ratelimit-limit': String(s.points),
              'ratelimit-remaining': '0',
              'ratelimit-reset': String(retryAfter),
            },
          },
        );
      }
    }
    if (!tightest) return null;
    return {
      'ratelimit-limit': String(tightest.points),
      'ratelimit-remaining': String(Math.max(0, tightest.res.remainingPoints)),
      'ratelimit-reset': String(Math.max(0, Math.ceil(tightest.res.msBeforeNext / 1000))),
    };
  }

  async close(): Promise<void> {
    if (this.redis) await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
