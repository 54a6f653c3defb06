// Models users bring (sherpa-onnx) through the models directory, end to end: a tiny model built at test time that
// hears "yes" wherever the audio is loud (test/fixtures/sherpa-models.ts) appears in GET /v1/models and
// `parlance models list`, takes over the `stt-async-v4` alias, and transcribes uploaded files; a broken manifest stops
// the start with one line naming the file (exit 2); a model sherpa-onnx cannot use fails its jobs with
// model_not_available while the server and the built-in model go on (every surface: models-load-failed.test.ts).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneBursts, writeCtcModelWithoutMetadata, writeEnergyCtcModel, writeEnergyStreamingModel } from '../fixtures/sherpa-models.js';
import {
  makeSpeech,
  type Parlance,
  runCli,
  settledTranscription,
  startParlance,
  streamRealtime,
  tempDir,
  type TranscriptBody,
  uploadFile,
} from '../harness.js';

const root = tempDir('parlance-models-');
const dataDir = path.join(root, 'data');

function modelFolder(modelsDir: string, name: string, manifest: Record<string, unknown>, write: (dir: string) => void): string {
  const dir = path.join(modelsDir, name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(
    path.join(dir, 'parlance-model.json'),
    JSON.stringify({ family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' }, languages: ['en'], ...manifest }),
  );
  return dir;
}

let s: Parlance;
let speech: string;

beforeAll(async () => {
  const models = path.join(dataDir, 'models');
  modelFolder(models, 'yes', { id: 'energy-yes-v1', name: 'Energy test model', aliases: ['stt-async-v4'] }, (d) => writeEnergyCtcModel(d));
  modelFolder(models, 'broken', { id: 'broken-ctc-v1' }, (d) => writeCtcModelWithoutMetadata(d));
  modelFolder(
    models,
    'live',
    {
      id: 'energy-live-v1',
      family: 'stt-streaming',
      type: 'transducer',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' },
      aliases: ['stt-rt-v4'],
    },
    (d) => writeEnergyStreamingModel(d),
  );
  // Two sentences, 1.5 s of silence after the speech.
  speech = await makeSpeech(path.join(root, 'two.wav'), 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.', {
    padSeconds: 1.5,
  });
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info' } });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

async function transcribe(model: string, fileId: string, extra: Record<string, unknown> = {}) {
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, file_id: fileId, ...extra }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  return settledTranscription(s, id, 60_000);
}

describe('a model in the models directory', () => {
  it('is listed with its alias, by the API and the command line', async () => {
    const { models } = (await (await s.request('/v1/models')).json()) as {
      models: { id: string; aliased_model_id: string | null; transcription_mode: string; name: string }[];
    };
    expect(models.find((m) => m.id === 'energy-yes-v1')).toMatchObject({ transcription_mode: 'async', aliased_model_id: null, name: 'Energy test model' });
    expect(models.find((m) => m.id === 'stt-async-v4')).toMatchObject({ aliased_model_id: 'energy-yes-v1' });
    expect(models.find((m) => m.id === 'energy-live-v1')).toMatchObject({ transcription_mode: 'real_time' });
    expect(models.find((m) => m.id === 'stt-rt-v4')).toMatchObject({ aliased_model_id: 'energy-live-v1' });
    // The other aliases stay with the built-in model.
    expect(models.find((m) => m.id === 'stt-async-v3')?.aliased_model_id).toBe('parlance-async-en-v1');
    const cli = await runCli(['models', 'list', '--data-dir', dataDir, '--json']);
    expect(cli.code).toBe(0);
    const listed = (JSON.parse(cli.stdout) as { models: { id: string; aliased_model_id: string | null }[] }).models;
    expect(listed.find((m) => m.id === 'stt-async-v4')?.aliased_model_id).toBe('energy-yes-v1');
    // Each model brought is loaded once in a child process by `models list`: those that load say so.
    expect(listed.find((m) => m.id === 'energy-yes-v1')).toMatchObject({ status: 'ok', load_error: null });
  }, 60_000);

  it('transcribes a file through the alias it claimed: a word where the speech is, none in the silence', async () => {
    const fileId = await uploadFile(s, speech);
    const job = await transcribe('stt-async-v4', fileId, { enable_text_formatting: false });
    expect(job).toMatchObject({ status: 'completed', model: 'stt-async-v4' });
    const transcript = (await (await s.request(`/v1/transcriptions/${job.id}/transcript`)).json()) as TranscriptBody;
    expect(transcript.tokens.length).toBeGreaterThanOrEqual(2);
    const words = transcript.text.split(/\s+/);
    expect(new Set(words)).toEqual(new Set(['yes']));
    expect(job.audio_duration_ms).toBeGreaterThan(3000);
    for (const t of transcript.tokens) {
      expect(t.end_ms).toBeGreaterThan(t.start_ms);
      // The 1.5 s of padding after the speech is silence: nothing is heard there.
      expect(t.end_ms).toBeLessThanOrEqual(job.audio_duration_ms! - 1000);
    }
  }, 90_000);

  it('fails the jobs of a model sherpa-onnx cannot use with model_not_available; the server and the built-in model go on', async () => {
    const fileId = await uploadFile(s, speech);
    const job = await transcribe('broken-ctc-v1', fileId);
    expect(job).toMatchObject({ status: 'failed', error_type: 'model_not_available' });
    expect(job.error_message).not.toMatch(/0x[0-9a-f]{6,}|\/tmp\/|at .*\.js:/);
    expect((await s.request('/health', { key: null })).status).toBe(200);
    expect(s.stderr()).toMatch(/broken-ctc-v1 .*could not be loaded by sherpa-onnx \(exit 255\)/);
    const builtIn = await transcribe('parlance-async-en-v1', fileId);
    expect(builtIn.status).toBe('completed');
  }, 120_000);
});

describe('a streaming model in the models directory', () => {
  it('serves /transcribe-websocket through the alias it claimed: a final word and an endpoint per pause', async () => {
    const t = toneBursts(3, { gapMs: 1200 });
    const frames = await streamRealtime(s, Buffer.from(t.pcm16.buffer), { model: 'stt-rt-v4', enable_text_formatting: false, enable_endpoint_detection: true });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    expect(frames.at(-1)?.finished).toBe(true);
    const finals = frames.flatMap((f) => f.tokens).filter((tk) => tk.is_final);
    expect(finals.filter((tk) => !tk.text.startsWith('<')).map((tk) => tk.text.trim())).toEqual(['yes', 'yes', 'yes']);
    expect(finals.filter((tk) => tk.text === '<end>').length).toBeGreaterThanOrEqual(2);
    // Each word at the end of its burst, on the stream's clock.
    finals.filter((tk) => !tk.text.startsWith('<')).forEach((tk, i) => expect(Math.abs(tk.start_ms! - t.bursts[i]!.endMs)).toBeLessThanOrEqual(120));
  }, 60_000);
});

describe('a broken model folder', () => {
  it.each([
    ['a manifest that is not JSON', (dir: string) => writeFileSync(path.join(dir, 'parlance-model.json'), '{"id":'), /not readable JSON/],
    ['a missing file', (dir: string) => rmSync(path.join(dir, 'tokens.txt')), /files\.tokens: tokens\.txt does not exist/],
  ])(
    'stops the start with one line naming the file (exit 2): %s',
    async (_what, breakIt, message) => {
      const dir = tempDir('parlance-models-bad-');
      const folder = modelFolder(path.join(dir, 'models'), 'bad', { id: 'bad-ctc-v1' }, (d) => writeEnergyCtcModel(d));
      breakIt(folder);
      const r = await runCli(['serve', '--port', '0', '--data-dir', dir]);
      rmSync(dir, { recursive: true, force: true });
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(path.join(folder, 'parlance-model.json'));
      expect(lines[0]).toMatch(message);
    },
    30_000,
  );
});
