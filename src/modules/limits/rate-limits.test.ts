// RateLimits against the real stores: rate-limiter-flexible's memory store and a real Redis.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REDIS_TEST_URL } from '../../../test/harness.js';
import { loadSettings } from '../../config/settings.js';
import { ApiError } from '../../wire/api-error.js';
import { RateLimits } from './rate-limits.js';

const opened: RateLimits[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

function limits(env: Record<string, string>, keyPrefix = `test:rl:${randomBytes(6).toString('hex')}`): RateLimits {
  const r = new RateLimits(loadSettings({ env: { PARLANCE_CONFIG: '', ...env } }), { keyPrefix });
  opened.push(r);
  return r;
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => {
      throw new Error('expected limit_exceeded');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const api = err as ApiError;
  expect(api.type).toBe('limit_exceeded');
  expect(api.status).toBe(429);
  return api;
}

describe.each([
  ['memory', {}],
  ['redis', { REDIS_URL: REDIS_TEST_URL }],
] as const)('RateLimits with the %s store', (_name, storeEnv) => {
  it('passes the limit, reports remaining points, then refuses with Retry-After', async () => {
    const rl = limits({ ...storeEnv, PARLANCE_RATE_FILES_PROJECT_PER_MIN: '3', PARLANCE_RATE_FILES_ORG_PER_MIN: '0' });
    const org = randomUUID();
    const project = randomUUID();
    for (let i = 1; i <= 3; i++) {
      const h = await rl.consume('files', org, project);
      expect(h).not.toBeNull();
      expect(h!['ratelimit-limit']).toBe('3');
      expect(h!['ratelimit-remaining']).toBe(String(3 - i));
      expect(Number(h!['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
      expect(Number(h!['ratelimit-reset'])).toBeLessThanOrEqual(60);
    }
    const err = await refusal(rl.consume('files', org, project));
    expect(err.message).toContain('project');
    expect(err.message).toContain('files');
    expect(err.headers['ratelimit-limit']).toBe('3');
    expect(err.headers['ratelimit-remaining']).toBe('0');
    const retry = Number(err.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(err.headers['ratelimit-reset']).toBe(String(retry));
  });

  it('applies the organization limit across its projects, and reports the tighter limit', async () => {
    const rl = limits({ ...storeEnv, PARLANCE_RATE_TTS_PROJECT_PER_MIN: '3', PARLANCE_RATE_TTS_ORG_PER_MIN: '4' });
    const org = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await rl.consume('tts', org, a))!['ratelimit-limit']).toBe('3'); // project 2 left, org 3 left
    await rl.consume('tts', org, a);
    const third = await rl.consume('tts', org, a); // project 0 left, org 1 left
    expect(third).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '0' });
    await refusal(rl.consume('tts', org, a));
    const fromB = await rl.consume('tts', org, b); // project 2 left, org 0 left
    expect(fromB).toMatchObject({ 'ratelimit-limit': '4', 'ratelimit-remaining': '0' });
    const err = await refusal(rl.consume('tts', org, b));
    expect(err.message).toContain('organization');
    expect(err.message).toContain('tts');
    // Another organization is untouched.
    expect(await rl.consume('tts', randomUUID(), randomUUID())).toMatchObject({ 'ratelimit-remaining': '2' });
  });

  it('keeps categories apart', async () => {
    const rl = limits({ ...storeEnv, PARLANCE_RATE_FILES_PROJECT_PER_MIN: '1', PARLANCE_RATE_TEMPORARY_API_KEY_PROJECT_PER_MIN: '2' });
    const [org, project] = [randomUUID(), randomUUID()];
    await rl.consume('files', org, project);
    const err = await refusal(rl.consume('files', org, project));
    expect(err.message).toContain('files');
    expect(await rl.consume('temporary_api_key', org, project)).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1' });
    expect((await refusal(rl.consume('files', org, project))).message).not.toContain('temporary');
  });

  it('treats 0 as unlimited: no headers, never refused', async () => {
    const rl = limits({ ...storeEnv, PARLANCE_RATE_MODELS_PROJECT_PER_MIN: '0', PARLANCE_RATE_MODELS_ORG_PER_MIN: '0' });
    const [org, project] = [randomUUID(), randomUUID()];
    for (let i = 0; i < 50; i++) expect(await rl.consume('models', org, project)).toBeNull();
  });
});

describe('RateLimits with Redis shared by several processes', () => {
  const inspector = new Redis(REDIS_TEST_URL);
  afterAll(() => inspector.disconnect());

  it('shares one counter between instances with the same key prefix (two nodes)', async () => {
    const prefix = `test:rl:${randomBytes(6).toString('hex')}`;
    const env = { REDIS_URL: REDIS_TEST_URL, PARLANCE_RATE_FILES_PROJECT_PER_MIN: '5', PARLANCE_RATE_FILES_ORG_PER_MIN: '0' };
    const [nodeA, nodeB] = [limits(env, prefix), limits(env, prefix)];
    const [org, project] = [randomUUID(), randomUUID()];
    const remaining: string[] = [];
    for (const node of [nodeA, nodeA, nodeA, nodeB, nodeB]) remaining.push((await node.consume('files', org, project))!['ratelimit-remaining']);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    await refusal(nodeB.consume('files', org, project));
    await refusal(nodeA.consume('files', org, project));
    // A different prefix is a different deployment: its own counters.
    expect(await limits(env).consume('files', org, project)).toMatchObject({ 'ratelimit-remaining': '4' });
  });

  it('counts the very first request after construction in Redis, with a 60-second expiry', async () => {
    const prefix = `test:rl:${randomBytes(6).toString('hex')}`;
    const rl = limits({ REDIS_URL: REDIS_TEST_URL, PARLANCE_RATE_FILES_PROJECT_PER_MIN: '5', PARLANCE_RATE_FILES_ORG_PER_MIN: '7' }, prefix);
    const [org, project] = [randomUUID(), randomUUID()];
    await rl.consume('files', org, project);
    expect(await inspector.get(`${prefix}:files:project:${project}`)).toBe('1');
    expect(await inspector.get(`${prefix}:files:organization:${org}`)).toBe('1');
    const ttl = await inspector.pttl(`${prefix}:files:project:${project}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('falls back to per-process counting when Redis is unreachable', async () => {
    const rl = limits({ REDIS_URL: 'redis://127.0.0.1:1', PARLANCE_RATE_FILES_PROJECT_PER_MIN: '2' });
    const [org, project] = [randomUUID(), randomUUID()];
    // Each call is answered while Redis stays unreachable (a stall would be a hang, caught by the test's timeout).
    expect(await rl.consume('files', org, project)).toMatchObject({ 'ratelimit-remaining': '1' });
    await rl.consume('files', org, project);
    await refusal(rl.consume('files', org, project));
  });
});

describe('RateLimits with the memory store', () => {
  it('counts per process: separate instances do not share', async () => {
    const env = { PARLANCE_RATE_FILES_PROJECT_PER_MIN: '1' };
    const [org, project] = [randomUUID(), randomUUID()];
    const a = limits(env, 'same');
    const b = limits(env, 'same');
    await a.consume('files', org, project);
    await refusal(a.consume('files', org, project));
    expect(await b.consume('files', org, project)).toMatchObject({ 'ratelimit-remaining': '0' });
  });
});
