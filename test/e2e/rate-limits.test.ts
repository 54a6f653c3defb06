// Requests-per-minute limits end to end: in-memory counters in one process, Redis counters shared by two.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, errorBody, REDIS_TEST_URL, startParlance, type Parlance } from '../harness.js';

function rateHeaders(res: Response): { limit: string | null; remaining: string | null; reset: string | null; retryAfter: string | null } {
  return {
    limit: res.headers.get('ratelimit-limit'),
    remaining: res.headers.get('ratelimit-remaining'),
    reset: res.headers.get('ratelimit-reset'),
    retryAfter: res.headers.get('retry-after'),
  };
}

async function expectRateLimited(res: Response, scope: 'project' | 'organization', category: string, limit: number): Promise<void> {
  expect(res.status).toBe(429);
  const h = rateHeaders(res);
  expect(Number(h.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(h.retryAfter)).toBeLessThanOrEqual(60);
  expect(h.limit).toBe(String(limit));
  expect(h.remaining).toBe('0');
  const body = await errorBody(res);
  expect(body.error_type).toBe('limit_exceeded');
  expect(body.message).toContain(scope);
  expect(body.message).toContain(category);
  expect(body.message).toMatch(/per minute/);
}

const temporaryKey = (s: Parlance, key?: string) =>
  s.request('/v1/auth/temporary-api-key', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ usage_type: 'transcribe_websocket', expires_in_seconds: 60 }),
  });

describe('in-memory limits, one server', () => {
  let s: Parlance;
  let second: { projectId: string; key: string };

  beforeAll(async () => {
    s = await startParlance({
      env: {
        PARLANCE_RATE_FILES_PROJECT_PER_MIN: '5',
        PARLANCE_RATE_FILES_ORG_PER_MIN: '8',
        PARLANCE_RATE_TEMPORARY_API_KEY_PROJECT_PER_MIN: '3',
        PARLANCE_RATE_TEMPORARY_API_KEY_ORG_PER_MIN: '0',
      },
    });
    // Made before any request is counted, so the whole scenario runs well inside one 60-second window.
    const p = await s.admin<{ id: string }>('create-project', '--name', 'second');
    second = { projectId: p.id, key: (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key };
  });
  afterAll(async () => s?.stop());

  it('counts file requests of a project: 5 pass with RateLimit headers, the 6th is refused', async () => {
    for (let i = 1; i <= 5; i++) {
      const res = await s.request(i % 2 ? '/v1/files/count' : '/v1/files');
      expect(res.status).toBe(200);
      const h = rateHeaders(res);
      expect(h.limit).toBe('5');
      expect(h.remaining).toBe(String(5 - i));
      expect(Number(h.reset)).toBeGreaterThanOrEqual(1);
      expect(Number(h.reset)).toBeLessThanOrEqual(60);
      expect(h.retryAfter).toBeNull();
    }
    await expectRateLimited(await s.request('/v1/files/count'), 'project', 'files', 5);
    // Every files endpoint shares the category, unknown ids included.
    await expectRateLimited(await s.request('/v1/files/00000000-0000-4000-8000-000000000000'), 'project', 'files', 5);
  });

  it('does not count unauthenticated requests against the project', async () => {
    const res = await s.request('/v1/files/count', { key: 'prl_not_a_real_key' });
    expect(res.status).toBe(401);
    expect(rateHeaders(res).limit).toBeNull();
  });

  it('keeps the limits of categories apart: temporary keys still work with files exhausted', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await temporaryKey(s);
      expect(res.status).toBe(201);
      expect(rateHeaders(res).limit).toBe('3');
      expect(rateHeaders(res).remaining).toBe(String(3 - i));
    }
    await expectRateLimited(await temporaryKey(s), 'project', 'temporary api key', 3);
    // ...and files are still refused.
    expect((await s.request('/v1/files/count')).status).toBe(429);
  });

  it('leaves another project its own project budget, but the organization limit spans both', async () => {
    // The first project spent 5 of the organization's 8; its refused requests did not count.
    for (let i = 1; i <= 3; i++) {
      const res = await s.request('/v1/files/count', { key: second.key });
      expect(res.status).toBe(200);
      // The organization is now the tighter limit, so its numbers are reported.
      expect(rateHeaders(res).limit).toBe('8');
      expect(rateHeaders(res).remaining).toBe(String(3 - i));
    }
    await expectRateLimited(await s.request('/v1/files/count', { key: second.key }), 'organization', 'files', 8);
    // The second project's temporary-key budget is untouched (project-scoped, organization unlimited).
    const t = await temporaryKey(s, second.key);
    expect(t.status).toBe(201);
    expect(rateHeaders(t).remaining).toBe('2');
  });
});

describe('Redis-backed limits shared by two server processes', () => {
  let db: { url: string; drop(): Promise<void> };
  let a: Parlance;
  let b: Parlance;

  beforeAll(async () => {
    db = await createPgDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL: REDIS_TEST_URL, PARLANCE_RATE_FILES_PROJECT_PER_MIN: '5' };
    a = await startParlance({ env });
    b = await startParlance({ env });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('serves one organization and project from both nodes', () => {
    expect(b.organizationId).toBe(a.organizationId);
    expect(b.projectId).toBe(a.projectId);
    expect(b.url).not.toBe(a.url);
  });

  it('counts requests to either node against one counter', async () => {
    const remaining: string[] = [];
    for (const [node, n] of [
      [a, 3],
      [b, 2],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const res = await node.request('/v1/files/count');
        expect(res.status).toBe(200);
        expect(rateHeaders(res).limit).toBe('5');
        remaining.push(rateHeaders(res).remaining!);
      }
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    await expectRateLimited(await b.request('/v1/files/count'), 'project', 'files', 5);
    await expectRateLimited(await a.request('/v1/files/count'), 'project', 'files', 5);
  });
});

describe('Redis unreachable', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { REDIS_URL: 'redis://127.0.0.1:1', PARLANCE_RATE_FILES_PROJECT_PER_MIN: '2' } });
  });
  afterAll(async () => s?.stop());

  it('keeps serving and limiting with per-process counters', async () => {
    expect((await s.request('/v1/files/count')).status).toBe(200);
    expect((await s.request('/v1/files/count')).status).toBe(200);
    await expectRateLimited(await s.request('/v1/files/count'), 'project', 'files', 2);
  });
});
