// PARLANCE_MODEL_IDLE_UNLOAD_SECONDS for voices you bring: a voice (a tiny generated Piper graph, installed in the
// models directory) that speaks, then nobody uses, is unloaded (its synthesizer threads stopped: the log says so,
// `loaded` turns false, the gauge of loaded models drops), and the next request loads it again and speaks.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeToneVitsModel } from '../fixtures/sherpa-models.js';
import { logLines, type Parlance, startParlance, tempDir, waitFor } from '../harness.js';

const ID = 'tone-idle-v1';
const root = tempDir('parlance-idle-voice-');
const dataDir = path.join(root, 'data');
let s: Parlance;

beforeAll(async () => {
  const dir = path.join(dataDir, 'models', 'tone-idle');
  mkdirSync(dir, { recursive: true });
  writeToneVitsModel(dir, { sampleRate: 16000 });
  writeFileSync(
    path.join(dir, 'parlance-model.json'),
    JSON.stringify({
      id: ID,
      family: 'tts',
      type: 'vits',
      files: { model: 'model.onnx', tokens: 'tokens.txt', data_dir: 'espeak-ng-data' },
      languages: ['en'],
    }),
  );
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info', PARLANCE_MODEL_IDLE_UNLOAD_SECONDS: '1' } });
}, 90_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

const unloads = () => logLines(s).filter((l) => l.msg === 'idle model unloaded' && l.model === ID).length;
const record = async () => (await (await s.request(`/v1/admin/models/${ID}`)).json()) as { status: string; family: string; loaded: boolean };

async function speak(): Promise<void> {
  const res = await s.request('/tts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: ID, language: 'en', voice: 'tone-idle', audio_format: 'pcm_s16le', sample_rate: 16000, text: 'Hello there.' }),
  });
  expect(res.status).toBe(200);
  expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
}

describe('idle unloading of a voice you brought', () => {
  it('unloads the voice nobody uses, and loads it again on the next request', async () => {
    expect(await record()).toMatchObject({ status: 'ready', family: 'tts', loaded: false });
    await speak();
    // Nobody speaks with it now: its synthesizer is stopped.
    await waitFor(
      async () => unloads(),
      (n) => n === 1,
      30_000,
    );
    expect((await record()).loaded).toBe(false);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/^parlance_models_loaded 0$/m);
    // The next request loads it again (an unload stops synthesizers only when some were started), and it speaks.
    await speak();
    await waitFor(
      async () => unloads(),
      (n) => n === 2,
      30_000,
    );
    expect((await record()).loaded).toBe(false);
  }, 120_000);
});
