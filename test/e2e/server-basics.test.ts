import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, ROOT, runCli, startParlance, tempDir, type Parlance } from '../harness.js';

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

  it('answers /ready with 200 and the database check, without a key', async () => {
    const res = await s.request('/ready', { key: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  it('prints its version', async () => {
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });

  it('a first start on a port in use stops with one line (exit 2) and creates no key', async () => {
    const dataDir = tempDir();
    try {
      const r = await runCli(['serve', '--port', new URL(s.url).port, '--host', '127.0.0.1', '--data-dir', dataDir], {
        PARLANCE_STT_PRELOAD: '0',
        PARLANCE_LOG_LEVEL: 'warn',
      });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        `parlance: port ${new URL(s.url).port} on 127.0.0.1 is in use: stop what holds it, or choose another port (--port / PARLANCE_PORT)`,
      ]);
      expect(r.stdout).not.toMatch(/api_key/);
      // Nothing was bootstrapped: the data dir has no organization yet.
      const keys = await runCli(['admin', 'list-keys', '--data-dir', dataDir, '--json']);
      expect(keys.code).toBe(0);
      expect(JSON.parse(keys.stdout)).toEqual({ api_keys: [] });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
