// The concurrency tracker on a real SQLite database, in memory and on a real Redis shared by two trackers
// (two nodes in one process; test/e2e/concurrency.test.ts runs two server processes).
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_TEST_URL, tempDir, waitFor } from '../../../test/harness.js';
import { openDatabase, type Db } from '../../storage/database.js';
import { ApiError } from '../../wire/api-error.js';
import { ConcurrencyLimits, type ConcurrencyOptions } from './concurrency.js';
import { LimitsRepository } from './repository.js';

let dir: string;
let db: Db;
let repo: LimitsRepository;
const trackers: ConcurrencyLimits[] = [];

beforeAll(async () => {
  dir = tempDir('parlance-concurrency-');
  db = await openDatabase({ dataDir: dir });
  repo = new LimitsRepository(db.kysely);
});
afterAll(async () => {
  for (const t of trackers) await t.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

function tracker(opts: Partial<ConcurrencyOptions> = {}): ConcurrencyLimits {
  const t = new ConcurrencyLimits(repo, { defaults: { stt: { organization: 3, project: 2 }, tts: { organization: 0, project: 1 } }, ...opts });
  trackers.push(t);
  return t;
}

const tenant = () => ({ organizationId: randomUUID(), projectId: randomUUID() });

async function refused(p: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).type).toBe('limit_exceeded');
  expect((err as ApiError).status).toBe(429);
  expect((err as ApiError).message).toMatch(message);
}

describe.each([
  ['memory', () => ({})],
  ['redis', () => ({ redisUrl: REDIS_TEST_URL, keyPrefix: `parlance-test:${randomUUID()}` })],
] as const)('ConcurrencyLimits (%s)', (_name, backend) => {
  it('enforces the project cap, then the organization cap across projects; messages name the limit', async () => {
    const t = tracker(backend());
    const org = randomUUID();
    const a = { organizationId: org, projectId: randomUUID() };
    const b = { organizationId: org, projectId: randomUUID() };
    const releases = [await t.acquire('stt', a), await t.acquire('stt', a)];
    await refused(t.acquire('stt', a), /real-time transcription streams limit exceeded for the project \(2\)/);
    releases.push(await t.acquire('stt', b));
    await refused(t.acquire('stt', b), /real-time transcription streams limit exceeded for the organization \(3\)/);
    // Kinds are counted apart: TTS has its own caps.
    const tts = await t.acquire('tts', a);
    await refused(t.acquire('tts', a), /text-to-speech requests limit exceeded for the project \(1\)/);
    expect(await t.current(org, a.projectId)).toEqual({ organization: { stt: 3, tts: 1 }, project: { stt: 2, tts: 1 } });
    // Release frees exactly one slot, and is idempotent. (Redis drops the lease in the background: wait for it.)
    releases[0]!();
    releases[0]!();
    await waitFor(
      () => t.current(org, a.projectId),
      (c) => c.project.stt < 2 && c.organization.stt < 3,
      10_000,
      10,
    );
    expect(await t.current(org, a.projectId)).toEqual({ organization: { stt: 2, tts: 1 }, project: { stt: 1, tts: 1 } });
    const again = await t.acquire('stt', b);
    await refused(t.acquire('stt', a), /organization \(3\)/);
    for (const r of [...releases, again, tts]) r();
    const idle = { organization: { stt: 0, tts: 0 }, project: { stt: 0, tts: 0 } };
    expect(
      await waitFor(
        () => t.current(org, a.projectId),
        (c) => JSON.stringify(c) === JSON.stringify(idle),
        10_000,
        10,
      ),
    ).toEqual(idle);
  });

  it('database overrides beat the settings: null is unlimited, 0 refuses every stream; removing restores the setting', async () => {
    const t = tracker(backend());
    const who = tenant();
    const now = new Date().toISOString();
    await repo.setOverride('project', who.projectId, 'tts', null, now);
    await repo.setOverride('organization', who.organizationId, 'tts', 4, now);
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await t.acquire('tts', who)); // the setting's project cap of 1 no longer applies
    await refused(t.acquire('tts', who), /organization \(4\)/);
    await repo.setOverride('project', who.projectId, 'stt', 0, now);
    await refused(t.acquire('stt', who), /project \(0\)/);
    expect(await t.report(who.organizationId, who.projectId)).toEqual({
      project: { current: { transcribe_concurrent: 0, tts_concurrent: 4 }, limits: { transcribe_concurrent: 0, tts_concurrent: null } },
      organization: { current: { transcribe_concurrent: 0, tts_concurrent: 4 }, limits: { transcribe_concurrent: 3, tts_concurrent: 4 } },
    });
    await repo.clearOverride('project', who.projectId, 'stt');
    const r = await t.acquire('stt', who);
    for (const x of [...held, r]) x();
  });

  it("samples report each project's peak since the previous sample, then drop idle projects", async () => {
    const t = tracker(backend());
    const who = tenant();
    const r1 = await t.acquire('stt', who);
    const r2 = await t.acquire('stt', who);
    r2();
    expect(t.takeSamples()).toEqual([{ ...who, kind: 'stt', value: 2 }]);
    expect(t.takeSamples()).toEqual([{ ...who, kind: 'stt', value: 1 }]);
    r1();
    expect(t.takeSamples()).toEqual([{ ...who, kind: 'stt', value: 1 }]); // it was live during this interval
    expect(t.takeSamples()).toEqual([]);
  });
});

describe('ConcurrencyLimits on a shared Redis', () => {
  it('two nodes share one cap; a node that dies without releasing frees its slots after the lease TTL', async () => {
    const keyPrefix = `parlance-test:${randomUUID()}`;
    // Nodes renew their leases every third of it: a stall of this process shorter than two seconds loses none.
    const leaseMs = 3000;
    const nodeA = tracker({ redisUrl: REDIS_TEST_URL, keyPrefix, leaseMs });
    const nodeB = tracker({ redisUrl: REDIS_TEST_URL, keyPrefix, leaseMs });
    const who = tenant();
    const projectKey = `${keyPrefix}:stt:project:${who.projectId}`;
    const redis = new Redis(REDIS_TEST_URL);
    // Expiry is decided on Redis's clock (the scripts read TIME): the test watches the same clock.
    const redisNow = async () => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    const latestExpiry = async () => Math.max(...(await redis.zrange(projectKey, 0, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number));
    const projectStreams = async () => (await nodeB.current(who.organizationId, who.projectId)).project.stt;
    try {
      await nodeA.acquire('stt', who);
      const b1 = await nodeB.acquire('stt', who);
      await refused(nodeA.acquire('stt', who), /project \(2\)/);
      await refused(nodeB.acquire('stt', who), /project \(2\)/);
      expect(await projectStreams()).toBe(2);
      // Live leases outlast their TTL because their node refreshes them: once both leases as they stand now have run
      // out on Redis's clock, both are still counted.
      const expiry = await latestExpiry();
      await waitFor(redisNow, (now) => now > expiry, 20_000, 50);
      await refused(nodeB.acquire('stt', who), /project \(2\)/);
      // Node A "crashes": it stops refreshing and never releases (its lease is still there)...
      await nodeA.close();
      expect(await redis.zcard(projectKey)).toBe(2);
      // ...and once it has run out, only B's renewed lease counts.
      await waitFor(projectStreams, (n) => n < 2, 20_000, 50);
      expect(await projectStreams()).toBe(1);
      const b2 = await nodeB.acquire('stt', who);
      b1();
      b2();
      await waitFor(projectStreams, (n) => n === 0, 10_000, 10);
    } finally {
      redis.disconnect();
    }
  });

  it('keeps no key behind once every lease is released', async () => {
    const keyPrefix = `parlance-test:${randomUUID()}`;
    const t = tracker({ redisUrl: REDIS_TEST_URL, keyPrefix });
    const redis = new Redis(REDIS_TEST_URL);
    try {
      const r = await t.acquire('tts', tenant());
      expect(await redis.keys(`${keyPrefix}:*`)).toHaveLength(2); // the project's and the organization's
      r();
      // The release runs in the background: wait until Redis holds nothing of it.
      await waitFor(
        () => redis.keys(`${keyPrefix}:*`),
        (keys) => keys.length === 0,
        10_000,
        10,
      );
    } finally {
      redis.disconnect();
    }
  });

  it('Redis unreachable: counts fall back to this node, caps still hold', async () => {
    const t = tracker({ redisUrl: 'redis://127.0.0.1:1' });
    const who = tenant();
    const r1 = await t.acquire('stt', who);
    const r2 = await t.acquire('stt', who);
    await refused(t.acquire('stt', who), /project \(2\)/);
    expect((await t.current(who.organizationId, who.projectId)).project.stt).toBe(2);
    r1();
    r2();
    expect((await t.current(who.organizationId, who.projectId)).project.stt).toBe(0);
  }, 20_000);
});
