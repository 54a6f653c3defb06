// Concurrent streams per organization and per project, for real-time STT sessions and TTS requests/streams.
// One tracker serves both. Counts live in memory (one node) or in Redis (several nodes share them): each
// session holds a lease with a TTL that the node refreshes while the session lives, so a crashed node's
// slots come free on their own after the TTL instead of leaking forever.
//
// Caps come from the settings, overridden per organization or project in the database
// (`parlance admin set-limits`; an override of null means unlimited).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ApiError } from '../../wire/api-error.js';
import type { LimitScope, LimitsRepository, StreamKind } from './repository.js';
import { streamKinds } from './repository.js';

/** Effective caps of one kind; null means unlimited. */
export interface Caps {
  organization: number | null;
  project: number | null;
}

export type CapsByKind = Record<StreamKind, Caps>;

interface LeaseInfo {
  id: string;
  kind: StreamKind;
  organizationId: string;
  projectId: string;
  /** Where the lease was taken: Redis, or this node's memory when Redis was unreachable. */
  backend: 'memory' | 'redis';
}

const scopeKey = (kind: StreamKind, scope: LimitScope, id: string) => `${kind}:${scope}:${id}`;

/** Counts in this process. Also the fallback of the Redis backend while Redis is unreachable. */
class MemoryCounts {
  private readonly sets = new Map<string, Set<string>>();

  /** `held`: this node's streams counted elsewhere (its Redis leases while Redis is unreachable), which count too. */
  tryAcquire(lease: LeaseInfo, caps: Caps, held: Record<LimitScope, number> = { project: 0, organization: 0 }): LimitScope | null {
    const p = this.sets.get(scopeKey(lease.kind, 'project', lease.projectId));
    if (caps.project !== null && (p?.size ?? 0) + held.project >= caps.project) return 'project';
    const o = this.sets.get(scopeKey(lease.kind, 'organization', lease.organizationId));
    if (caps.organization !== null && (o?.size ?? 0) + held.organization >= caps.organization) return 'organization';
    this.add(scopeKey(lease.kind, 'project', lease.projectId), lease.id);
    this.add(scopeKey(lease.kind, 'organization', lease.organizationId), lease.id);
    return null;
  }

  release(lease: LeaseInfo): void {
    this.remove(scopeKey(lease.kind, 'project', lease.projectId), lease.id);
    this.remove(scopeKey(lease.kind, 'organization', lease.organizationId), lease.id);
  }

  count(kind: StreamKind, scope: LimitScope, id: string): number {
    return this.sets.get(scopeKey(kind, scope, id))?.size ?? 0;
  }

  private add(key: string, id: string): void {
    let s = this.sets.get(key);
    if (!s) this.sets.set(key, (s = new Set()));
    s.add(id);
  }

  private remove(key: string, id: string): void {
    const s = this.sets.get(key);
    if (!s) return;
    s.delete(id);
    if (!s.size) this.sets.delete(key);
  }
}

// Scripts run atomically in Redis and use Redis's clock, so nodes with skewed clocks agree on expiry.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
/** KEYS: project set, organization set. ARGV: lease id, ttl ms, project cap, organization cap (-1: none). 0 ok, 1 project full, 2 organization full. */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local pc = tonumber(ARGV[3])
if pc >= 0 and redis.call('ZCARD', KEYS[1]) >= pc then return 1 end
local oc = tonumber(ARGV[4])
if oc >= 0 and redis.call('ZCARD', KEYS[2]) >= oc then return 2 end
local ttl = tonumber(ARGV[2])
for _, k in ipairs(KEYS) do redis.call('ZADD', k, now + ttl, ARGV[1]) redis.call('PEXPIRE', k, ttl) end
return 0`;
/** KEYS: sets; ARGV[1]: ttl ms, ARGV[i + 1]: the lease in KEYS[i]. Re-adds a lease that lapsed while its session lived. */
const REFRESH = `${NOW}
local ttl = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do redis.call('ZADD', k, now + ttl, ARGV[i + 1]) redis.call('PEXPIRE', k, ttl) end
return 0`;
/** KEYS: sets. Live leases in each. */
const COUNT = `${NOW}
local out = {}
for i, k in ipairs(KEYS) do redis.call('ZREMRANGEBYSCORE', k, '-inf', now) out[i] = redis.call('ZCARD', k) end
return out`;

type ScriptedRedis = Redis & {
  ccAcquire(...args: (string | number)[]): Promise<number>;
  ccRefresh(...args: (string | number)[]): Promise<number>;
  ccCount(...args: (string | number)[]): Promise<number[]>;
};

export interface ConcurrencyOptions {
  /** Settings caps (0 = unlimited) per kind and scope. */
  defaults: Record<StreamKind, { organization: number; project: number }>;
  /** Shared counts in Redis; empty: this process's memory. */
  redisUrl?: string;
  /** Lease lifetime in Redis; live sessions refresh it every third of it. */
  leaseMs?: number;
  keyPrefix?: string;
  log?: Logger;
}

const LABEL: Record<StreamKind, string> = {
  stt: 'real-time transcription streams',
  tts: 'text-to-speech requests',
};

/** One project's (or organization's) counts as the concurrency report shows them. */
export interface ScopeReport {
  current: { transcribe_concurrent: number; tts_concurrent: number };
  limits: { transcribe_concurrent: number | null; tts_concurrent: number | null };
}

/** What one node serves right now, for the stream-history sampler. */
export interface LocalSample {
  organizationId: string;
  projectId: string;
  kind: StreamKind;
  /** The highest count since the previous sample (a request shorter than the interval still shows). */
  value: number;
}

export class ConcurrencyLimits {
  private readonly memory = new MemoryCounts();
  private readonly leases = new Map<string, LeaseInfo>();
  /** This node's live leases and peaks per project and kind (Redis or not). */
  private readonly local = new Map<string, { organizationId: string; projectId: string; kind: StreamKind; current: number; peak: number }>();
  private readonly redis?: ScriptedRedis;
  private readonly leaseMs: number;
  private readonly prefix: string;
  private refreshTimer?: NodeJS.Timeout;
  private redisDownLogged = false;
  /** Settles once the first Redis connection attempt is over (ready or failed). */
  private firstConnection?: Promise<void>;

  constructor(
    private readonly repo: LimitsRepository,
    private readonly opts: ConcurrencyOptions,
  ) {
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.prefix = opts.keyPrefix ?? 'parlance:cc';
    if (opts.redisUrl) {
      // Commands wait for a (re)connection at most a second, then the insurance memory counts take over.
      const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 1000, enableOfflineQueue: true }) as ScriptedRedis;
      redis.on('error', () => undefined);
      redis.defineCommand('ccAcquire', { numberOfKeys: 2, lua: ACQUIRE });
      redis.defineCommand('ccRefresh', { lua: REFRESH });
      redis.defineCommand('ccCount', { lua: COUNT });
      this.redis = redis;
      this.firstConnection = new Promise<void>((resolve) => {
        const done = () => {
          redis.off('ready', done).off('error', done).off('end', done);
          resolve();
        };
        redis.once('ready', done).once('error', done).once('end', done);
      });
      // Back after an outage: the leases taken meanwhile (and those a restarted Redis lost) are counted there at once.
      redis.on('ready', () => void this.refresh());
      this.refreshTimer = setInterval(() => void this.refresh(), Math.max(100, this.leaseMs / 3));
      this.refreshTimer.unref();
    }
  }

  get backend(): 'memory' | 'redis' {
    return this.redis ? 'redis' : 'memory';
  }

  /** Effective caps of an organization and project: database overrides, else the settings. */
  async caps(organizationId: string, projectId: string): Promise<CapsByKind> {
    const overrides = await this.repo.overrides(organizationId, projectId);
    const out = {} as CapsByKind;
    for (const kind of streamKinds) {
      const d = this.opts.defaults[kind];
      const pick = (scope: LimitScope, fallback: number): number | null => {
        const o = overrides.find((x) => x.kind === kind && x.scope === scope);
        return o ? o.max : fallback > 0 ? fallback : null;
      };
      out[kind] = { organization: pick('organization', d.organization), project: pick('project', d.project) };
    }
    return out;
  }

  /**
   * Take a slot of `kind` for the organization and project, or throw 429 limit_exceeded naming the limit.
   * The returned release is idempotent and synchronous for the caller (Redis removal runs in the background).
   */
  async acquire(kind: StreamKind, who: { organizationId: string; projectId: string }): Promise<() => void> {
    const caps = (await this.caps(who.organizationId, who.projectId))[kind];
    const lease: LeaseInfo = { id: randomUUID(), kind, organizationId: who.organizationId, projectId: who.projectId, backend: 'memory' };
    let full: LimitScope | null;
    if (await this.redisReady()) {
      try {
        const r = await this.redis!.ccAcquire(
          this.key(kind, 'project', who.projectId),
          this.key(kind, 'organization', who.organizationId),
          lease.id,
          this.leaseMs,
          caps.project ?? -1,
          caps.organization ?? -1,
        );
        full = r === 1 ? 'project' : r === 2 ? 'organization' : null;
        lease.backend = 'redis';
      } catch (err) {
        this.redisDown(err);
        lease.backend = 'memory';
        full = this.memory.tryAcquire(lease, caps, this.heldInRedis(lease));
      }
    } else {
      full = this.memory.tryAcquire(lease, caps, this.heldInRedis(lease));
    }
    if (full)
      throw new ApiError('limit_exceeded', `Concurrent ${LABEL[kind]} limit exceeded for the ${full} (${caps[full]}).`, {
        headers: { 'retry-after': '1' },
      });
    this.leases.set(lease.id, lease);
    const l = this.localEntry(lease);
    l.current++;
    l.peak = Math.max(l.peak, l.current);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.leases.delete(lease.id);
      l.current--;
      if (lease.backend === 'memory') this.memory.release(lease);
      else void this.removeFromRedis(lease);
    };
  }

  /** Drop a lease from Redis; if Redis cannot be reached, the lease lapses after its TTL. */
  private async removeFromRedis(lease: LeaseInfo): Promise<void> {
    try {
      await this.redis!.zrem(this.key(lease.kind, 'project', lease.projectId), lease.id);
      await this.redis!.zrem(this.key(lease.kind, 'organization', lease.organizationId), lease.id);
    } catch (err) {
      this.redisDown(err);
    }
  }

  /** This node's live Redis leases of the lease's kind in its project and organization. */
  private heldInRedis(lease: LeaseInfo): Record<LimitScope, number> {
    const held = { project: 0, organization: 0 };
    for (const l of this.leases.values()) {
      if (l.backend !== 'redis' || l.kind !== lease.kind) continue;
      if (l.projectId === lease.projectId) held.project++;
      if (l.organizationId === lease.organizationId) held.organization++;
    }
    return held;
  }

  /** Live streams of each kind for an organization and a project (every node with Redis, this node without). */
  async current(organizationId: string, projectId: string): Promise<Record<LimitScope, Record<StreamKind, number>>> {
    const out: Record<LimitScope, Record<StreamKind, number>> = { organization: { stt: 0, tts: 0 }, project: { stt: 0, tts: 0 } };
    const pairs: [LimitScope, StreamKind, string][] = [];
    for (const kind of streamKinds) {
      pairs.push(['organization', kind, organizationId], ['project', kind, projectId]);
    }
    let fromRedis: number[] | undefined;
    if (await this.redisReady()) {
      try {
        fromRedis = await this.redis!.ccCount(pairs.length, ...pairs.map(([scope, kind, id]) => this.key(kind, scope, id)));
      } catch (err) {
        this.redisDown(err);
      }
    }
    pairs.forEach(([scope, kind, id], i) => {
      // Leases that fell back to memory while Redis was down count too; without Redis' answer, this node's
      // Redis leases are the best count there is.
      const shared = fromRedis
        ? Number(fromRedis[i])
        : [...this.leases.values()].filter((l) => l.backend === 'redis' && l.kind === kind && (scope === 'project' ? l.projectId : l.organizationId) === id)
            .length;
      out[scope][kind] = shared + this.memory.count(kind, scope, id);
    });
    return out;
  }

  /** The Concurrency report: current counts and effective limits for the project and its organization. */
  async report(organizationId: string, projectId: string): Promise<{ project: ScopeReport; organization: ScopeReport }> {
    const [caps, current] = await Promise.all([this.caps(organizationId, projectId), this.current(organizationId, projectId)]);
    const scope = (s: LimitScope): ScopeReport => ({
      current: { transcribe_concurrent: current[s].stt, tts_concurrent: current[s].tts },
      limits: { transcribe_concurrent: caps.stt[s], tts_concurrent: caps.tts[s] },
    });
    return { project: scope('project'), organization: scope('organization') };
  }

  /** This node's streams per project and kind since the last call; entries idle since then are dropped. */
  takeSamples(): LocalSample[] {
    const out: LocalSample[] = [];
    for (const [key, l] of this.local) {
      if (l.peak > 0) out.push({ organizationId: l.organizationId, projectId: l.projectId, kind: l.kind, value: l.peak });
      l.peak = l.current;
      if (l.current === 0) this.local.delete(key);
    }
    return out;
  }

  /**
   * Renew this node's Redis leases (live sessions keep their slots; a dead node's lapse; a Redis that restarted
   * empty gets them back), and move the leases taken in memory while Redis was unreachable into Redis, so that
   * every node counts them again. Runs every third of the lease and whenever the Redis connection is (re)made.
   */
  async refresh(): Promise<void> {
    if (!this.redis) return;
    const live = [...this.leases.values()];
    if (!live.length) return;
    const keys: string[] = [];
    const members: string[] = [];
    for (const l of live) {
      keys.push(this.key(l.kind, 'project', l.projectId), this.key(l.kind, 'organization', l.organizationId));
      members.push(l.id, l.id);
    }
    try {
      await this.redis.ccRefresh(keys.length, ...keys, this.leaseMs, ...members);
    } catch (err) {
      this.redisDown(err);
      return;
    }
    for (const l of live) {
      if (l.backend !== 'memory') continue;
      if (this.leases.has(l.id)) {
        this.memory.release(l);
        l.backend = 'redis';
      } else void this.removeFromRedis(l); // it ended while it was being moved
    }
  }

  async close(): Promise<void> {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    if (this.redis) await this.redis.quit().catch(() => this.redis?.disconnect());
  }

  private localEntry(lease: LeaseInfo) {
    const key = `${lease.kind}:${lease.projectId}`;
    let l = this.local.get(key);
    if (!l) this.local.set(key, (l = { organizationId: lease.organizationId, projectId: lease.projectId, kind: lease.kind, current: 0, peak: 0 }));
    return l;
  }

  /** Redis connected: use it. While it is down, do not make every session start wait for a timeout. */
  private async redisReady(): Promise<boolean> {
    if (!this.redis) return false;
    await this.firstConnection;
    if (this.redis.status === 'ready') return true;
    this.redisDown(new Error(`Redis connection ${this.redis.status}`));
    return false;
  }

  private key(kind: StreamKind, scope: LimitScope, id: string): string {
    return `${this.prefix}:${scopeKey(kind, scope, id)}`;
  }

  private redisDown(err: unknown): void {
    if (this.redisDownLogged) return;
    this.redisDownLogged = true;
    this.opts.log?.warn({ err }, 'Redis unreachable: concurrency counts fall back to this node until it returns');
    setTimeout(() => (this.redisDownLogged = false), 60_000).unref();
  }
}
