// Webhooks to addresses the SSRF guard blocks: refused when the transcription is created (400 invalid_request naming
// webhook_url and PARLANCE_ALLOW_PRIVATE_HOSTS) unless the setting allows them; one that gets past creation and is
// blocked at delivery (the setting changed, or DNS) is not retried, keeps webhook_status_code null, and says why
// in the log and in parlance_webhook_deliveries_total{outcome="refused"}.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, logLines, makeAudio, startParlance, tempDir, uploadFile, waitFor, type Parlance } from '../harness.js';

let work: string;
let toneWav: string;
/** A receiver that holds every request unanswered (so a delivery is still in flight when its server stops). */
let hooks: { url: string; received: string[]; close(): Promise<void> };

beforeAll(async () => {
  work = tempDir('parlance-webhook-private-');
  toneWav = await makeAudio(path.join(work, 'tone.wav'), { seconds: 1 });
  const held: ServerResponse[] = [];
  const received: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    received.push(req.url ?? '');
    held.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hooks = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
});
afterAll(async () => {
  await hooks?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const create = (s: Parlance, body: Record<string, unknown>, key?: string) =>
  s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'stt-async-v4', ...body }),
    key,
  });

describe('webhooks to private addresses', () => {
  let dataDir: string;
  let s: Parlance | undefined;
  afterAll(async () => {
    await s?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('are refused at creation without PARLANCE_ALLOW_PRIVATE_HOSTS; a refusal at delivery is visible and final', async () => {
    dataDir = tempDir('parlance-webhook-private-data-');
    // Allowed: the job is created and its delivery starts (held by the receiver).
    s = await startParlance({ dataDir, env: { PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    const fileId = await uploadFile(s, toneWav);
    const created = await create(s, { file_id: fileId, webhook_url: `${hooks.url}/hold` });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await waitFor(
      async () => hooks.received.length,
      (n) => n === 1,
      60_000,
      50,
    );
    await s.stop();

    // The same data without the setting: creation refuses every private spelling and says how to allow it.
    s = await startParlance({ dataDir });
    for (const url of [
      `${hooks.url}/h`,
      'http://localhost:8080/h',
      'http://[::1]/h',
      'http://169.254.169.254/latest/meta-data/',
      'https://10.0.0.8/h',
      'http://2130706433/h',
    ]) {
      const res = await create(s, { file_id: fileId, webhook_url: url });
      expect(res.status, url).toBe(400);
      const e = await errorBody(res);
      expect(e.error_type).toBe('invalid_request');
      expect(e.validation_errors).toEqual([
        {
          error_type: 'invalid_value',
          location: 'webhook_url',
          message: expect.stringMatching(/private or reserved network address.*PARLANCE_ALLOW_PRIVATE_HOSTS/),
        },
      ]);
      expect(e.message).toMatch(/^Invalid request: webhook_url: /);
    }
    // A public address passes the check (an unknown file id is what stops this request, after validation).
    const publicHook = await create(s, { file_id: '00000000-0000-4000-8000-000000000000', webhook_url: 'https://93.184.216.34/hook' });
    expect(publicHook.status).toBe(404);
    expect((await errorBody(publicHook)).error_type).toBe('file_not_found');

    // The delivery given back at the stop is made now and blocked by the guard: refused, not retried, and said so.
    const refused = async () =>
      Number(/^parlance_webhook_deliveries_total\{outcome="refused"\} (\S+)$/m.exec(await (await s!.request('/metrics', { key: null })).text())?.[1]);
    expect(await waitFor(refused, (n) => n === 1, 30_000, 100)).toBe(1);
    const rec = (await (await s.request(`/v1/transcriptions/${id}`)).json()) as Record<string, unknown>;
    expect(rec).toMatchObject({ status: 'completed', webhook_status_code: null, error_type: null, error_message: null });
    const line = await waitFor(
      async () => logLines(s!).find((l) => l.msg === 'job failed' && l.kind === 'transcription.webhook'),
      (l) => l !== undefined,
      10_000,
    );
    expect(line!.level).toBe(40);
    expect(String(line!.error)).toContain(id);
    expect(String(line!.error)).toMatch(
      /host 127\.0\.0\.1 is or resolves to a private or reserved network address; delivery is blocked \(PARLANCE_ALLOW_PRIVATE_HOSTS/,
    );
    expect(hooks.received).toHaveLength(1);
    expect(Number(/^parlance_webhook_deliveries_total\{outcome="retried"\} (\S+)$/m.exec(await (await s.request('/metrics', { key: null })).text())?.[1])).toBe(
      0,
    );
  }, 120_000);
});
