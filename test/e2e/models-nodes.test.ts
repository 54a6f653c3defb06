// Models managed over HTTP on two nodes, an API node and a worker node, on PostgreSQL, each with its own data directory
// and one models directory shared between them (a volume every node mounts): the pull asked of the API node runs as a
// job on the worker; each node picks up the change through the records' version stamp it polls, with no restart: the
// API node lists the model, the worker transcribes with it (and with the alias it is given later), and a removal asked
// of the API node takes it out of the worker's catalog too. The archive is built at test time from the real model.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, errorBody, logLines, type Parlance, startParlance, tempDir, waitFor } from '../harness.js';
import { hasRealModel, REAL_STREAMING_MODEL, realModelClips } from '../real-model.js';

const KWS = 'kws-zipformer-v1';
const json = { 'content-type': 'application/json' };

describe.skipIf(!hasRealModel)('models over HTTP with an API node and a worker node', () => {
  const root = tempDir('parlance-models-nodes-');
  const modelsDir = path.join(root, 'models');
  let server: Server;
  let base: string;
  let db: { url: string; drop(): Promise<void> };
  let api: Parlance;
  let worker: Parlance;
  const clip = hasRealModel ? realModelClips()[0]! : { file: '', reference: '' };

  beforeAll(async () => {
    execFileSync('tar', ['-czf', path.join(root, 'kws.tar.gz'), '-C', path.dirname(REAL_STREAMING_MODEL), path.basename(REAL_STREAMING_MODEL)]);
    execFileSync('ffmpeg', ['-v', 'error', '-i', clip.file, '-ar', '16000', '-ac', '1', path.join(root, 'clip.wav')]);
    server = createServer((req, res) => {
      const file = path.join(root, path.basename(new URL(req.url ?? '/', 'http://x').pathname));
      if (!existsSync(file)) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(file));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    db = await createPgDatabase();
    const env = {
      DATABASE_URL: db.url,
      PARLANCE_MODELS_DIR: modelsDir,
      PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      PARLANCE_MODEL_SYNC_SECONDS: '0.5',
      PARLANCE_LOG_LEVEL: 'info',
    };
    api = await startParlance({ env: { ...env, PARLANCE_ROLE: 'api' } });
    worker = await startParlance({ env: { ...env, PARLANCE_ROLE: 'worker' } });
  }, 180_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await db?.drop();
    await new Promise((r) => server?.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  const sttIds = async () => ((await (await api.request('/v1/models')).json()) as { models: { id: string; aliased_model_id: string | null }[] }).models;

  /** An async transcription of the clip (by its URL) with `model`, run by the worker; its transcript's text. */
  async function transcribe(model: string): Promise<string> {
    const res = await api.request('/v1/transcriptions', { method: 'POST', headers: json, body: JSON.stringify({ model, audio_url: `${base}/clip.wav` }) });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const rec = await waitFor(
      async () => (await api.request(`/v1/transcriptions/${id}`)).json() as Promise<{ status: string; error_type: string | null }>,
      (r) => r.status === 'completed' || r.status === 'failed',
      120_000,
    );
    expect(rec).toMatchObject({ status: 'completed' });
    return ((await (await api.request(`/v1/transcriptions/${id}/transcript`)).json()) as { text: string }).text.toLowerCase();
  }

  const heardMostOf = (text: string) => {
    const words = clip.reference.split(/\s+/);
    expect(words.filter((w) => text.includes(w)).length).toBeGreaterThan(words.length / 2);
  };

  it('pulls on the worker, and both nodes serve the model, its new alias, then neither once removed', async () => {
    const res = await api.request('/v1/admin/models', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ source: `${base}/kws.tar.gz`, family: 'stt-streaming', type: 'transducer', id: KWS }),
    });
    expect(res.status).toBe(202);
    const ready = await waitFor(
      async () => (await api.request(`/v1/admin/models/${KWS}`)).json() as Promise<{ status: string }>,
      (r) => r.status === 'ready' || r.status === 'failed',
      120_000,
    );
    expect(ready).toMatchObject({ status: 'ready' });
    // The job ran on the worker (an API node runs none).
    expect(logLines(worker).some((l) => l.msg === 'model pulled' && l.model === KWS)).toBe(true);
    expect(logLines(api).some((l) => l.msg === 'model pulled')).toBe(false);
    // The API node offers it once its poll saw the change; the worker transcribes with it.
    await waitFor(sttIds, (models) => models.some((m) => m.id === KWS), 30_000);
    heardMostOf(await transcribe(KWS));

    const aliased = await api.request(`/v1/admin/models/${KWS}/aliases`, { method: 'PUT', headers: json, body: JSON.stringify({ aliases: ['stt-async-v4'] }) });
    expect(aliased.status).toBe(200);
    expect((await sttIds()).find((m) => m.id === 'stt-async-v4')).toMatchObject({ aliased_model_id: KWS });
    // The worker resolves the alias again when it runs the job: it hears of the change in time, or the job fails.
    await waitFor(
      async () => logLines(worker).some((l) => l.msg === 'model aliases changed' && l.model === KWS),
      (ok) => ok,
      30_000,
    );
    heardMostOf(await transcribe('stt-async-v4'));

    expect((await api.request(`/v1/admin/models/${KWS}`, { method: 'DELETE' })).status).toBe(204);
    expect((await sttIds()).some((m) => m.id === KWS)).toBe(false);
    expect((await sttIds()).find((m) => m.id === 'stt-async-v4')).toMatchObject({ aliased_model_id: 'parlance-async-en-v1' });
    const refused = await api.request('/v1/transcriptions', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ model: KWS, audio_url: `${base}/clip.wav` }),
    });
    expect((await errorBody(refused)).error_type).toBe('model_not_available');
    await waitFor(
      async () => logLines(worker).some((l) => l.msg === 'model no longer offered' && l.model === KWS),
      (ok) => ok,
      30_000,
    );
    expect(existsSync(path.join(modelsDir, KWS))).toBe(false);
  }, 400_000);
});
