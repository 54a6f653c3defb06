import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startParlance, type Parlance } from '../harness.js';

let s: Parlance;
beforeAll(async () => {
  s = await startParlance();
});
afterAll(async () => s?.stop());

describe('server basics', () => {
  it('answers /health with 200 without a key', async () => {
    const res = await s.request('/health', { key: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('prints a first-start key that authenticates', async () => {
    expect(s.apiKey).toMatch(/^prl_/);
    const res = await s.request('/v1/files/count');
    expect(res.status).toBe(200);
  });

  it('gives every response a unique request id, matching the error body', async () => {
    const a = await s.request('/v1/files', { key: null });
    const b = await s.request('/v1/files', { key: null });
    const ea = await errorBody(a);
    const eb = await errorBody(b);
    expect(a.headers.get('x-request-id')).toBe(ea.request_id);
    expect(ea.request_id).not.toBe(eb.request_id);
    expect(ea.more_info).toBe(`${s.url}/docs/errors#unauthenticated`);
  });
});
