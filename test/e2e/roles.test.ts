// `parlance serve --role api|worker`: an API node queues the jobs it accepts and runs none; a worker node on the
// same database and data directory runs them (and their webhooks) and answers only its probes and metrics.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createPgDatabase, errorBody, makeSpeech, runCli, startParlance, tempDir, uploadFile, waitFor, type Parlance } from '../harness.js';

interface Rec {
  id: string;
  status: string;
  webhook_status_code: number | null;
}

/** The distinct statuses a record shows, polled every 250 ms for `ms` (stops early once it leaves `queued`). */
async function statusesFor(read: () => Promise<Rec>, ms: number): Promise<string[]> {
  const seen = new Set<string>();
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const { status } = await read();
    seen.add(status);
    if (status !== 'queued') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return [...seen];
}

let work: string;
let speech: string;

beforeAll(async () => {
  work = tempDir('parlance-roles-');
  speech = await makeSpeech(path.join(work, 'hello.wav'), 'hello world');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('--role', () => {
  it('refuses an unknown role with one line and exit 2, from the flag or the environment', async () => {
    for (const [args, env] of [
      [['--role', 'bogus'], {}],
      [[], { PARLANCE_ROLE: 'bogus' }],
    ] as const) {
      const r = await runCli(['serve', '--port', '0', '--data-dir', path.join(work, 'never'), ...args], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('parlance: PARLANCE_ROLE (role) must be one of all, api, worker; got "bogus"\n');
      expect(r.stdout).toBe('');
    }
  });
});

// PostgreSQL is how nodes on several machines share a database (with either job queue); on one machine they may
// share the SQLite file.
describe.each([
  ['PostgreSQL', { postgres: true, queue: 'local' }],
  ['PostgreSQL and pg-boss', { postgres: true, queue: 'pg-boss' }],
  ['SQLite', { postgres: false, queue: 'local' }],
])('an API node and a worker node (%s)', (_name, setup) => {
  const dataDir = tempDir('parlance-roles-data-');
  let db: { url: string; drop(): Promise<void> } | undefined;
  let env: Record<string, string>;
  let api: Parlance;
  let worker: Parlance | undefined;
  let hookServer: Server;
  let hookUrl: string;
  const hooks: unknown[] = [];

  beforeAll(async () => {
    hookServer = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hooks.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
    if (setup.postgres) db = await createPgDatabase();
    env = { PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1', PARLANCE_JOB_QUEUE: setup.queue, ...(db ? { DATABASE_URL: db.url } : {}) };
    api = await startParlance({ dataDir, env: { ...env, PARLANCE_ROLE: 'api' } });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.stop();
    await db?.drop();
    await new Promise<void>((r) => hookServer.close(() => r()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const get = async (id: string) => (await (await api.request(`/v1/transcriptions/${id}`)).json()) as Rec;
  const terminal = (r: Rec) => ['completed', 'failed', 'error'].includes(r.status);

  it('the API node accepts a transcription that stays queued until a worker node completes it', async () => {
    const fileId = await uploadFile(api, speech);
    const res = await api.request('/v1/transcriptions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stt-async-v4', file_id: fileId, webhook_url: hookUrl }),
    });
    expect(res.status).toBe(201);
    const { id, status } = (await res.json()) as Rec;
    expect(status).toBe('queued');

    // No worker yet: polled for 2.5 s (a node running jobs takes a job within a second), it never leaves `queued`.
    expect(await statusesFor(() => get(id), 2500)).toEqual(['queued']);

    worker = await startParlance({ dataDir, env: { ...env, PARLANCE_ROLE: 'worker' } });
    const done = await waitFor(
      () => get(id),
      (r) => terminal(r) && r.webhook_status_code !== null,
      120_000,
    );
    expect(done).toMatchObject({ status: 'completed', webhook_status_code: 200 });
    expect(hooks).toContainEqual({ id, status: 'completed' });
    const transcript = (await (await api.request(`/v1/transcriptions/${id}/transcript`)).json()) as { text: string };
    expect(transcript.text.toLowerCase()).toContain('hello');
  }, 180_000);

  it('the worker node answers its probes and metrics, 404 for every API route and the console, and refuses WebSockets', async () => {
    const w = worker!;
    expect(await (await w.request('/health', { key: null })).json()).toEqual({ status: 'ok' });
    expect((await w.request('/ready', { key: null })).status).toBe(200);
    const metrics = await w.request('/metrics', { key: null });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE');
    for (const [method, pathname] of [
      ['GET', '/v1/files'],
      ['POST', '/v1/transcriptions'],
      ['GET', '/v1/models'],
      ['POST', '/tts'],
      ['GET', '/openapi.json'],
      ['GET', '/docs/errors'],
      // No web console either (the API nodes serve it).
      ['GET', '/'],
      ['POST', '/v1/auth/playground-session'],
    ]) {
      const res = await w.request(pathname!, { method });
      expect(res.status, `${method} ${pathname}`).toBe(404);
      const body = await errorBody(res);
      expect(body.error_type).toBe('invalid_request');
      expect(body.message).toBe(`This is a worker node: ${pathname} is served by the API nodes.`);
    }
    for (const pathname of ['/transcribe-websocket', '/tts-websocket']) {
      const ws = new WebSocket(`${w.url.replace('http', 'ws')}${pathname}`);
      const status = await new Promise<number>((resolve, reject) => {
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => reject(new Error(`${pathname} opened on a worker node`)));
        ws.once('error', () => undefined);
      });
      ws.terminate();
      expect(status, pathname).toBe(404);
    }
    // The API node still serves everything else, and its probes too.
    expect((await api.request('/v1/files')).status).toBe(200);
    expect((await api.request('/health', { key: null })).status).toBe(200);
  });
});
