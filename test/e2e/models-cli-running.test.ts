// `parlance models import` and `models remove` run beside a running server on the same data directory: the server
// serves the change without a restart (the CLI renews the stamp every node polls), the admin list follows, and a
// data directory without a database (no server ran there) is changed quietly, to be served from the next start.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { hasRealModel, REAL_STREAMING_MODEL } from '../real-model.js';

const ID = 'cli-live-kws-v1';

const sttIds = async (s: Parlance) => ((await (await s.request('/v1/models')).json()) as { models: { id: string; aliased_model_id: string | null }[] }).models;

describe.skipIf(!hasRealModel)('models changed with the CLI while the server runs', () => {
  const importDir = tempDir('parlance-cli-live-import-');
  let s: Parlance;

  beforeAll(async () => {
    mkdirSync(importDir, { recursive: true });
    cpSync(REAL_STREAMING_MODEL, path.join(importDir, 'kws'), { recursive: true });
    s = await startParlance({ env: { PARLANCE_MODEL_SYNC_SECONDS: '1', PARLANCE_MODELS_IMPORT_DIR: importDir } });
  }, 90_000);

  afterAll(async () => {
    await s?.stop();
    rmSync(importDir, { recursive: true, force: true });
  });

  it('serves a model the CLI imports, and drops one the CLI removes, without a restart', async () => {
    expect((await sttIds(s)).some((m) => m.id === ID)).toBe(false);
    const r = await runCli([
      'models',
      'import',
      REAL_STREAMING_MODEL,
      '--family',
      'stt-streaming',
      '--type',
      'transducer',
      '--id',
      ID,
      '--alias',
      'cli-live',
      '--data-dir',
      s.dataDir,
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ model: { id: ID }, servers_told: true });
    // The same server process: offered in both modes, its alias with it.
    const offered = await waitFor(
      () => sttIds(s),
      (models) => models.some((m) => m.id === ID),
      30_000,
    );
    expect(offered.filter((m) => m.id === ID)).toHaveLength(2);
    expect(offered.find((m) => m.id === 'cli-live')).toMatchObject({ aliased_model_id: ID });
    const admin = (await (await s.request(`/v1/admin/models/${ID}`)).json()) as { status: string; source: string | null };
    expect(admin).toMatchObject({ status: 'ready', source: null });

    const removed = await runCli(['models', 'remove', ID, '--data-dir', s.dataDir, '--json']);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ removed: { id: ID }, servers_told: true });
    await waitFor(
      () => sttIds(s),
      (models) => !models.some((m) => m.id === ID || m.id === 'cli-live'),
      30_000,
    );
    expect((await s.request(`/v1/admin/models/${ID}`)).status).toBe(404);
  }, 120_000);

  it('drops the record of a model pulled over HTTP when the CLI removes it', async () => {
    const pulled = await s.request('/v1/admin/models', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'kws/', family: 'stt-streaming', type: 'transducer', id: 'cli-live-two-v1' }),
    });
    expect(pulled.status).toBe(202);
    const ready = await waitFor(
      async () => (await (await s.request('/v1/admin/models/cli-live-two-v1')).json()) as { status: string },
      (r) => r.status === 'ready' || r.status === 'failed',
      60_000,
    );
    expect(ready).toMatchObject({ status: 'ready', source: 'kws/' });
    const removed = await runCli(['models', 'remove', 'cli-live-two-v1', '--data-dir', s.dataDir]);
    expect(removed.code).toBe(0);
    await waitFor(
      () => sttIds(s),
      (models) => !models.some((m) => m.id === 'cli-live-two-v1'),
      30_000,
    );
    // Its pull's record went with it, rather than listing a model that is gone as ready.
    expect((await s.request('/v1/admin/models/cli-live-two-v1')).status).toBe(404);
    const listed = (await (await s.request('/v1/admin/models')).json()) as { models: { id: string }[] };
    expect(listed.models.map((m) => m.id)).not.toContain('cli-live-two-v1');
  }, 120_000);
});

describe.skipIf(!hasRealModel)('the CLI on a data directory no server used', () => {
  it('installs quietly and says the server offers it from its next start', async () => {
    const dataDir = tempDir('parlance-cli-no-db-');
    const r = await runCli(['models', 'import', REAL_STREAMING_MODEL, '--family', 'stt-streaming', '--type', 'transducer', '--id', ID, '--data-dir', dataDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\(the server offers it from its next start\)/);
    // No database was made for it.
    expect(existsSync(path.join(dataDir, 'parlance.db'))).toBe(false);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);
});
