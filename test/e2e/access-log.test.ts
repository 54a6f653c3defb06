// The access log: one JSON line per HTTP request at info, on stderr, with method, route pattern, status, duration,
// request_id (the one of the x-request-id header and of an error body) and the project when authenticated; never a
// key, an auth header or the query string. And one line per WebSocket session when it ends.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { errorBody, logLines, startParlance, waitFor, type Parlance } from '../harness.js';
import { openTts, startMsg } from './tts-helpers.js';

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
    const line = await waitFor(
      async () => logLines(s).find((l) => l.request_id === requestId),
      (l) => l !== undefined,
      5000,
      20,
    );
    expect(line).toMatchObject({ level: 30, status: 400, msg: 'malformed or late HTTP request refused' });
  });
});

describe('access log of WebSocket sessions', () => {
  /** The session lines of `route` so far. */
  const sessionLines = (route: string) => logLines(s).filter((l) => l.msg === 'websocket session ended' && l.route === route);

  /** A /transcribe-websocket session: the configuration with `apiKey`, 0.2 s of silence, the end; its close code. */
  async function realtimeSession(apiKey: string): Promise<number> {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket?api_key=query-secret`);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ api_key: apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
    ws.send(Buffer.alloc(6400));
    ws.send('');
    return closed;
  }

  it('logs a /transcribe-websocket session when it ends: close code, duration, session id and project, never the key', async () => {
    const before = sessionLines('/transcribe-websocket').length;
    expect(await realtimeSession(s.apiKey)).toBe(1000);
    const lines = await waitFor(
      async () => sessionLines('/transcribe-websocket'),
      (l) => l.length > before,
      5000,
      20,
    );
    expect(lines).toHaveLength(before + 1);
    const line = lines.at(-1)!;
    expect(line).toMatchObject({ level: 30, route: '/transcribe-websocket', close_code: 1000, project_id: s.projectId });
    expect(line.session_id).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(line.duration_ms as number).toBeGreaterThan(0);
    expect(s.stderr()).not.toContain(s.apiKey);
    expect(s.stderr()).not.toContain('query-secret');
  });

  it('logs a refused session without a project, with the close code the client saw', async () => {
    const badKey = 'prl_not-a-real-key-but-a-secret-all-the-same';
    const before = sessionLines('/transcribe-websocket').length;
    const code = await realtimeSession(badKey);
    const line = (
      await waitFor(
        async () => sessionLines('/transcribe-websocket'),
        (l) => l.length > before,
        5000,
        20,
      )
    ).at(-1)!;
    expect(line.close_code).toBe(code);
    expect(line).not.toHaveProperty('project_id');
    expect(s.stderr()).not.toContain(badKey);
  });

  it('logs a /tts-websocket connection when it ends, with the project of its streams', async () => {
    const before = sessionLines('/tts-websocket').length;
    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 'log1'));
    c.send({ stream_id: 'log1', text: 'Logged once.', text_end: true });
    await c.next((f) => f.stream_id === 'log1' && f.terminated === true, 30_000);
    c.ws.close(1000);
    expect((await c.closed).code).toBe(1000);
    const line = (
      await waitFor(
        async () => sessionLines('/tts-websocket'),
        (l) => l.length > before,
        5000,
        20,
      )
    ).at(-1)!;
    expect(line).toMatchObject({ level: 30, route: '/tts-websocket', close_code: 1000, project_id: s.projectId });
    expect(s.stderr()).not.toContain(s.apiKey);
  }, 60_000);
});
