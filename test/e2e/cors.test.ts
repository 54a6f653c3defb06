// CORS: PARLANCE_CORS_ORIGINS lets web pages on the listed origins call the HTTP API (preflight, then the call;
// error answers readable too); any other origin, and every origin by default, gets no CORS headers, so browsers refuse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Parlance, startParlance } from '../harness.js';

const PAGE = 'https://app.example.test';
let open: Parlance;
let closed: Parlance;

beforeAll(async () => {
  [open, closed] = await Promise.all([startParlance({ env: { PARLANCE_CORS_ORIGINS: `${PAGE},https://other.example.test` } }), startParlance()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([open?.stop(), closed?.stop()]);
});

const preflight = (s: Parlance, origin: string) =>
  fetch(`${s.url}/tts`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });

describe('PARLANCE_CORS_ORIGINS', () => {
  it("answers a listed origin's preflight and its calls, errors included", async () => {
    const pre = await preflight(open, PAGE);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(pre.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(pre.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();

    const models = await fetch(`${open.url}/v1/models`, { headers: { origin: PAGE, authorization: `Bearer ${open.apiKey}` } });
    expect(models.status).toBe(200);
    expect(models.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(models.headers.get('access-control-expose-headers')).toContain('x-request-id');

    // A streamed answer (POST /tts writes its own head) carries them too.
    const speech = await fetch(`${open.url}/tts`, {
      method: 'POST',
      headers: { origin: PAGE, authorization: `Bearer ${open.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-rt-v2', voice: 'Adrian', language: 'en', audio_format: 'wav', text: 'Hello.' }),
    });
    expect(speech.status).toBe(200);
    expect(speech.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(44);

    const refused = await fetch(`${open.url}/v1/files`, { headers: { origin: PAGE, authorization: 'Bearer nope' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect((await refused.json()).error_type).toBe('unauthenticated');
  });

  it('gives an unlisted origin no CORS headers', async () => {
    const pre = await preflight(open, 'https://evil.example.test');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const models = await fetch(`${open.url}/v1/models`, { headers: { origin: 'https://evil.example.test', authorization: `Bearer ${open.apiKey}` } });
    expect(models.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is off by default: no origin gets CORS headers', async () => {
    const pre = await preflight(closed, PAGE);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const models = await fetch(`${closed.url}/v1/models`, { headers: { origin: PAGE, authorization: `Bearer ${closed.apiKey}` } });
    expect(models.status).toBe(200);
    expect(models.headers.get('access-control-allow-origin')).toBeNull();
  });
});
