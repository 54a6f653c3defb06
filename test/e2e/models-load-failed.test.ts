// A model that passes the start's file checks but that sherpa-onnx cannot load (its check in a child process ends
// with exit 255, or a segmentation fault for an encoder file that holds a joiner) never takes the server down: the
// load fails once, logged with the model and the reason, and every surface answers model_not_available without
// internal details: an async job that met the failure ends with it, later requests are refused at once (within
// PARLANCE_STT_LOAD_RETRY_SECONDS), the OpenAI surface in its own shape, Wyoming with an error event, a real-time
// session with an error frame. GET /metrics and `parlance models list` show the model failed; GET /v1/models still
// lists it (it is tried again after the retry window).
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCtcModelWithoutMetadata } from '../fixtures/sherpa-models.js';
import { errorBody, logLines, makeAudio, type Parlance, runCli, settledTranscription, startParlance, streamRealtime, tempDir, uploadFile } from '../harness.js';
import { hasRealModel, REAL_STREAMING_MODEL } from '../real-model.js';
import { freePort, WyomingClient } from './wyoming-helpers.js';

const root = tempDir('parlance-load-failed-');
const dataDir = path.join(root, 'data');
const FAILED = /^Model "[\w-]+" is not available: it failed to load on this server \(the server log says why\)\.$/;
/** What a client must never see: paths, the engine's words, addresses, stacks. */
const INTERNAL = /\/tmp\/|sherpa|onnx|exit 255|0x[0-9a-f]{6,}|at .*\.js:/i;

function modelFolder(name: string, manifest: Record<string, unknown>, write: (dir: string) => void): void {
  const dir = path.join(dataDir, 'models', name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify({ languages: ['en'], ...manifest }));
}

const brokenCtc = (id: string) =>
  modelFolder(id, { id, family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' } }, (d) =>
    writeCtcModelWithoutMetadata(d),
  );

/** The real streaming transducer with its joiner as the encoder: a whole ONNX file (the start's check passes), but no
 * encoder (sherpa-onnx's load ends its process). */
const brokenLive = (id: string) =>
  modelFolder(
    id,
    {
      id,
      family: 'stt-streaming',
      type: 'transducer',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' },
    },
    (d) => {
      const from = (f: string) => path.join(REAL_STREAMING_MODEL, f);
      copyFileSync(from('joiner-epoch-12-avg-2-chunk-16-left-64.int8.onnx'), path.join(d, 'encoder.onnx'));
      copyFileSync(from('decoder-epoch-12-avg-2-chunk-16-left-64.onnx'), path.join(d, 'decoder.onnx'));
      copyFileSync(from('joiner-epoch-12-avg-2-chunk-16-left-64.int8.onnx'), path.join(d, 'joiner.onnx'));
      copyFileSync(from('tokens.txt'), path.join(d, 'tokens.txt'));
    },
  );

let s: Parlance;
let wyomingPort: number;
let audio: string;

beforeAll(async () => {
  // One model per surface that meets the failure first (each load is one child process), and one refused later.
  for (const id of ['broken-ctc-v1', 'broken-openai-v1']) brokenCtc(id);
  // Streaming ones (real time and Wyoming), from the real streaming transducer when it is there.
  if (hasRealModel) for (const id of ['broken-live-v1', 'broken-wyoming-v1']) brokenLive(id);
  audio = await makeAudio(path.join(root, 'tone.wav'), { seconds: 1 });
  wyomingPort = await freePort();
  // A retry window longer than the file: a refusal here is never a second load attempt.
  s = await startParlance({
    dataDir,
    keepDataDir: true,
    env: { PARLANCE_WYOMING_PORT: String(wyomingPort), PARLANCE_STT_LOAD_RETRY_SECONDS: '3600' },
  });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The server's error lines for a model that could not be loaded. */
const failureLogs = (model: string) =>
  logLines(s).filter((l) => l.msg === 'speech model could not be loaded: requests for it get model_not_available' && l.model === model);

async function createTranscription(model: string, fileId: string): Promise<Response> {
  return s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, file_id: fileId }) });
}

async function openAiTranscription(model: string): Promise<Response> {
  const form = new FormData();
  form.set('file', new Blob([readFileSync(audio)]), 'tone.wav');
  form.set('model', model);
  return s.request('/v1/audio/transcriptions', { method: 'POST', body: form });
}

/** One Wyoming transcription of `model` on `c`: the events up to the transcript or the error. */
async function wyomingTranscription(c: WyomingClient, model: string) {
  c.write('transcribe', { name: model, language: 'en' });
  const format = { rate: 16000, width: 2, channels: 1 };
  c.write('audio-start', format);
  c.write('audio-chunk', format, Buffer.alloc(32_000));
  c.write('audio-stop');
  return c.readUntil('transcript', 'error');
}

describe('a model sherpa-onnx cannot load', () => {
  it('fails the async job that met it with model_not_available, logged once with the reason; later requests are refused at once', async () => {
    const fileId = await uploadFile(s, audio);
    const res = await createTranscription('broken-ctc-v1', fileId);
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const job = await settledTranscription(s, id, 60_000);
    expect(job).toMatchObject({ status: 'failed', error_type: 'model_not_available' });
    expect(job.error_message).toMatch(FAILED);
    expect(job.error_message).not.toMatch(INTERNAL);

    // One error line: the model, the reason in the engine's words, no stack.
    const [line, ...more] = failureLogs('broken-ctc-v1');
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: 50, retry_after_s: 3600 });
    expect(String(line!.reason)).toMatch(/^model broken-ctc-v1 \(.*\) could not be loaded by sherpa-onnx \(exit 255\)/);
    expect(JSON.stringify(line)).not.toMatch(/"stack"|\\n\s+at /);

    // Within the retry window: refused at creation (400), with no second load.
    const again = await createTranscription('broken-ctc-v1', fileId);
    const body = await errorBody(again);
    expect(again.status).toBe(400);
    expect(body.error_type).toBe('model_not_available');
    expect(body.message).toMatch(FAILED);
    expect(failureLogs('broken-ctc-v1')).toHaveLength(1);
    expect((await s.request('/health', { key: null })).status).toBe(200);
  }, 120_000);

  it('answers an OpenAI transcription whose job met the failure in OpenAI’s shape: 400 model_not_found on param model', async () => {
    const files = async () => ((await (await s.request('/v1/files/count')).json()) as { total: number }).total;
    const before = await files();
    for (const attempt of ['first load', 'refused']) {
      const res = await openAiTranscription('broken-openai-v1');
      const { error } = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string } };
      expect(res.status, attempt).toBe(400);
      expect(error, attempt).toMatchObject({ type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
      expect(error.message, attempt).toMatch(FAILED);
      expect(error.message, attempt).not.toMatch(INTERNAL);
    }
    expect(failureLogs('broken-openai-v1')).toHaveLength(1);
    // The uploads went with their requests.
    expect(await files()).toBe(before);
  }, 120_000);

  // Wyoming's utterances are live sessions: a streaming model meets the failure there.
  it.skipIf(!hasRealModel)(
    'answers Wyoming with an error event model_not_available, the connection kept',
    async () => {
      const c = await WyomingClient.open(wyomingPort);
      for (const attempt of ['first load', 'refused']) {
        const events = await wyomingTranscription(c, 'broken-wyoming-v1');
        expect(events.at(-1), attempt).toMatchObject({ type: 'error', data: { code: 'model_not_available' } });
        expect(String(events.at(-1)!.data.text), attempt).toMatch(FAILED);
      }
      // The same connection goes on with the built-in model.
      const built = await wyomingTranscription(c, 'parlance-async-en-v1');
      c.close();
      expect(built.at(-1)?.type).toBe('transcript');
      expect(failureLogs('broken-wyoming-v1')).toHaveLength(1);
    },
    120_000,
  );

  it.skipIf(!hasRealModel)(
    'ends a real-time session with an error frame model_not_available (a streaming model)',
    async () => {
      for (const attempt of ['first load', 'refused']) {
        const frames = await streamRealtime(s, Buffer.alloc(32_000), { model: 'broken-live-v1' });
        expect(frames.at(-1), attempt).toMatchObject({ error_type: 'model_not_available', error_code: 400 });
        expect(frames.at(-1)!.error_message, attempt).toMatch(FAILED);
      }
      const [line, ...more] = failureLogs('broken-live-v1');
      expect(more).toEqual([]);
      expect(String(line!.reason)).toMatch(/^model broken-live-v1 \(.*\) could not be loaded by sherpa-onnx \((SIGSEGV|exit \d+)\)/);
      expect((await s.request('/health', { key: null })).status).toBe(200);
    },
    120_000,
  );

  it('is 1 in parlance_stt_model_load_failed (the built-in model 0), still listed by GET /v1/models, and failed in `parlance models list`', async () => {
    const metrics = await (await s.request('/metrics', { key: null })).text();
    expect(metrics).toMatch(/^parlance_stt_model_load_failed\{model="broken-ctc-v1"\} 1$/m);
    expect(metrics).toMatch(/^parlance_stt_model_load_failed\{model="parlance-en-pocketsphinx-v1"\} 0$/m);
    const { models } = (await (await s.request('/v1/models')).json()) as { models: { id: string }[] };
    expect(models.map((m) => m.id)).toContain('broken-ctc-v1');

    const cli = await runCli(['models', 'list', '--data-dir', dataDir, '--json']);
    expect(cli.code).toBe(0);
    const listed = (JSON.parse(cli.stdout) as { models: { id: string; status?: string; load_error?: string | null }[] }).models;
    expect(listed.find((m) => m.id === 'broken-ctc-v1')).toMatchObject({ status: 'failed' });
    expect(listed.find((m) => m.id === 'broken-ctc-v1')?.load_error).toMatch(/could not be loaded by sherpa-onnx \(exit 255\)/);
    // The built-in models say nothing of it: they are not checked.
    expect(listed.find((m) => m.id === 'parlance-async-en-v1')).not.toHaveProperty('status');
    const text = await runCli(['models', 'list', '--data-dir', dataDir]);
    expect(text.stdout).toMatch(/^broken-ctc-v1 +async +broken-ctc-v1 {2}FAILED to load: model broken-ctc-v1 .*could not be loaded by sherpa-onnx/m);
    expect(text.stdout).toMatch(/^parlance-async-en-v1 +async +Parlance English v1 \(pocketsphinx\), async$/m);
  }, 120_000);
});
