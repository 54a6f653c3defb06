// The access log: one JSON line per HTTP request at info, on stderr, with method, route pattern, status, duration,
// request_id (the one of the x-request-id header and of an error body) and the project when authenticated; never a
// key, an auth header or the query string.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, logLines, startParlance, waitFor, type Parlance } from '../harness.js';

let s: Parlance;
beforeAll(async () => {
  s = await startParlance({ env: { PARLANCE_LOG_LEVEL: 'info' } });
});
afterAll(async () => s?.stop());

/** The log lines of one request, once its access line is out. */
async function linesOf(requestId: string): Promise<Record<string, unknown>[]> {
  return waitFor(
    async () => logLines(s).filter((l) => l.request_id === requestId),
    (lines) => lines.some((l) => l.msg === 'request completed'),
    5000,
    20,
  );
}

describe('access log', () => {
  it("logs a 4xx's request_id at info once, with route, status and duration, and no key or query secret", async () => {
    const badKey = 'prl_not-a-real-key-but-still-a-secret';
    const res = await s.request('/v1/files?limit=5&temporary_api_key=tmp-secret-value', { key: badKey });
    expect(res.status).toBe(401);
    const { request_id } = await errorBody(res);
    expect(res.headers.get('x-request-id')).toBe(request_id);
    const lines = await linesOf(request_id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request completed', request_id, method: 'GET', route: '/v1/files', status: 401 });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    expect(lines[0]).not.toHaveProperty('project_id');
    const log = s.stderr();
    for (const secret of [badKey, 'tmp-secret-value', 'temporary_api_key', 'Bearer']) expect(log).not.toContain(secret);
  });

  it('names the project of an authenticated request, never its key; an unmatched path is logged without its query', async () => {
    const missing = await s.request('/v1/files/0b9c2f7e-0000-4000-8000-000000000000?token=query-secret');
    expect(missing.status).toBe(404);
    const { request_id } = await errorBody(missing);
    expect((await linesOf(request_id))[0]).toMatchObject({ level: 30, route: '/v1/files/:file_id', status: 404, project_id: s.projectId });

    const unknown = await s.request('/v1/no-such-thing?token=query-secret');
    expect(unknown.status).toBe(404);
    const unmatched = (await linesOf((await errorBody(unknown)).request_id))[0]!;
    expect(unmatched).toMatchObject({ level: 30, method: 'GET', path: '/v1/no-such-thing', status: 404 });
    expect(unmatched).not.toHaveProperty('route');

    const ok = await s.request('/v1/files?limit=1');
    expect(ok.status).toBe(200);
    expect((await linesOf(ok.headers.get('x-request-id')!))[0]).toMatchObject({ route: '/v1/files', status: 200, project_id: s.projectId });
    const log = s.stderr();
    expect(log).not.toContain(s.apiKey);
    expect(log).not.toContain('query-secret');
  });

  it('logs a request the HTTP parser refuses with the request_id it answered', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(s.url).port), '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'));
      let data = '';
      socket.setEncoding('utf8').on('data', (d: string) => (data += d));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const requestId = /x-request-id: (\S+)/i.exec(answer)![1]!;
    const line = await waitFor(async () => logLines(s).find((l) => l.request_id === requestId), (l) => l !== undefined, 5000, 20);
    expect(line).toMatchObject({ level: 30, status: 400, msg: 'malformed HTTP request refused' });
  });
});
