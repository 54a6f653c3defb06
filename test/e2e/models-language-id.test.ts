// Spoken language identification with a model users bring, end to end: a tiny Whisper pair built at test time
// (test/fixtures/sherpa-whisper-lid-model.ts) hears low-pitched audio as "en" and high-pitched as "de". A file of
// plain speech, a pause, then speech an octave higher, transcribed by the energy test model with
// enable_language_identification, gets "en" on the first sentence's tokens and "de" on the second's, and
// translation takes each segment's identified language as its source. A language-id model sherpa-onnx cannot use
// fails the jobs that ask for identification with internal_error while the server goes on.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { WHISPER_LID, writeWhisperLidModel } from '../fixtures/sherpa-whisper-lid-model.js';
import { makeTwoLanguageSpeech } from '../fixtures/two-languages.js';
import { type Parlance, type RealtimeFrame, runCli, startParlance, streamRealtime, tempDir, uploadFile, waitFor } from '../harness.js';

const root = tempDir('parlance-lid-');

interface Token {
  text: string;
  start_ms?: number;
  language?: string;
  source_language?: string;
  translation_status?: string;
}

function modelFolder(modelsDir: string, name: string, manifest: Record<string, unknown>, write: (dir: string) => void): void {
  const dir = path.join(modelsDir, name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
}

/** A data directory with the energy STT model and a language-id model (multilingual, or not: sherpa refuses that). */
function dataDirWith(name: string, multilingual: boolean): string {
  const dataDir = path.join(root, name);
  const models = path.join(dataDir, 'models');
  modelFolder(
    models,
    'yes',
    { id: 'energy-yes-v1', family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' }, languages: ['en'] },
    (d) => writeEnergyCtcModel(d),
  );
  modelFolder(
    models,
    'lid',
    {
      id: 'pitch-lid-v1',
      name: 'Pitch language test model',
      family: 'language-id',
      type: 'whisper',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx' },
      languages: [...WHISPER_LID.languages],
    },
    (d) => writeWhisperLidModel(d, { multilingual }),
  );
  return dataDir;
}

async function transcribe(s: Parlance, fileId: string, extra: Record<string, unknown>) {
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'energy-yes-v1', file_id: fileId, enable_text_formatting: false, ...extra }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const job = await waitFor(
    async () =>
      (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { id: string; status: string; error_type: string | null; error_message: string | null },
    (r) => r.status === 'completed' || r.status === 'failed',
    120_000,
    100,
  );
  const tokens = job.status === 'completed' ? ((await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { tokens: Token[] }).tokens : [];
  return { job, tokens };
}

let file: string;
/** The same audio as raw s16le 16 kHz mono, for real-time sessions. */
let pcm: Buffer;
/** Where the second (raised) sentence starts, ms. */
let splitMs: number;

/** English speech translated to Spanish; the raised ("German") speech has no route to it and stays `none`. */
function expectTranslatedFromIdentified(originals: Token[], translations: Token[]): void {
  const labels = (ts: Token[]) => new Set(ts.map((t) => `${t.language}:${t.translation_status}`));
  expect(labels(originals.filter((t) => t.start_ms! < splitMs))).toEqual(new Set(['en:original']));
  expect(labels(originals.filter((t) => t.start_ms! >= splitMs))).toEqual(new Set(['de:none']));
  expect(translations.length).toBeGreaterThan(0);
  expect(translations.every((t) => t.source_language === 'en' && t.language === 'es')).toBe(true);
}

/** Final tokens of a real-time session that finished normally (translations and markers apart). */
function liveFinals(frames: RealtimeFrame[]) {
  expect(frames.at(-1)).toMatchObject({ finished: true });
  const finals = frames.flatMap((f) => f.tokens as Token[]).filter((t) => (t as { is_final?: boolean }).is_final);
  return {
    originals: finals.filter((t) => t.start_ms !== undefined && !t.text.startsWith('<')),
    translations: finals.filter((t) => t.translation_status === 'translation'),
  };
}

beforeAll(async () => {
  ({ file, pcm, splitMs } = await makeTwoLanguageSpeech(root));
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('with a language-id model installed', () => {
  let s: Parlance;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = dataDirWith('good', true);
    s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info' } });
  }, 60_000);
  afterAll(() => s?.stop());

  it('is listed by `parlance models list` among the labelling models, not as a speech-to-text model', async () => {
    const cli = await runCli(['models', 'list', '--data-dir', dataDir, '--json']);
    expect(cli.code).toBe(0);
    const listed = JSON.parse(cli.stdout) as {
      models: { id: string }[];
      labelling_models: { id: string; family: string; type: string; languages: string[] }[];
    };
    expect(listed.labelling_models).toEqual([
      { id: 'pitch-lid-v1', name: 'Pitch language test model', family: 'language-id', type: 'whisper', languages: ['en', 'de'] },
    ]);
    expect(listed.models.map((m) => m.id)).not.toContain('pitch-lid-v1');
    const api = (await (await s.request('/v1/models')).json()) as { models: { id: string }[] };
    expect(api.models.map((m) => m.id)).not.toContain('pitch-lid-v1');
    expect(s.stderr()).toMatch(/spoken language identification of transcripts/);
  }, 60_000);

  it('labels each segment with the language the model hears in it', async () => {
    const fileId = await uploadFile(s, file);
    const { job, tokens } = await transcribe(s, fileId, { enable_language_identification: true });
    expect(job.status).toBe('completed');
    const before = tokens.filter((t) => t.start_ms! < splitMs);
    const after = tokens.filter((t) => t.start_ms! >= splitMs);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(before.map((t) => t.language))).toEqual(new Set(['en']));
    expect(new Set(after.map((t) => t.language))).toEqual(new Set(['de']));
    // without identification: no labels, as without the model
    const plain = await transcribe(s, fileId, {});
    expect(plain.tokens.length).toBe(tokens.length);
    expect(plain.tokens.every((t) => t.language === undefined)).toBe(true);
  }, 240_000);

  it("translates each segment from its identified language: English to Spanish, the 'German' one stays untranslated", async () => {
    const fileId = await uploadFile(s, file);
    const { job, tokens } = await transcribe(s, fileId, { enable_language_identification: true, translation: { type: 'one_way', target_language: 'es' } });
    expect(job.status).toBe('completed');
    const originals = tokens.filter((t) => t.translation_status !== 'translation');
    const translations = tokens.filter((t) => t.translation_status === 'translation');
    expectTranslatedFromIdentified(originals, translations);
  }, 240_000);
});

describe('real-time sessions with a language-id model installed', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ dataDir: dataDirWith('live', true), keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info' } });
  }, 60_000);
  afterAll(() => s?.stop());

  it('labels each final utterance with the language heard in it; without the flag, no labels', async () => {
    const frames = await streamRealtime(s, pcm, { enable_language_identification: true, enable_endpoint_detection: true });
    const { originals } = liveFinals(frames);
    const before = originals.filter((t) => t.start_ms! < splitMs);
    const after = originals.filter((t) => t.start_ms! >= splitMs);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(before.map((t) => t.language))).toEqual(new Set(['en']));
    expect(new Set(after.map((t) => t.language))).toEqual(new Set(['de']));
    // The pause between the sentences is an endpoint: the utterances are apart.
    expect(frames.flatMap((f) => f.tokens).filter((t) => t.text === '<end>').length).toBeGreaterThan(0);
    const plain = liveFinals(await streamRealtime(s, pcm, { enable_endpoint_detection: true }));
    expect(plain.originals.length).toBeGreaterThan(0);
    expect(plain.originals.every((t) => t.language === undefined)).toBe(true);
  }, 240_000);

  it('labels the utterances before and after a finalize, and translates each from its identified language', async () => {
    const { default: WebSocket } = await import('ws');
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
    const frames: RealtimeFrame[] = [];
    let onFrame = () => {};
    ws.on('message', (m) => {
      frames.push(JSON.parse(m.toString()) as RealtimeFrame);
      onFrame();
    });
    const until = (done: () => boolean) =>
      new Promise<void>((resolve) => {
        onFrame = () => done() && resolve();
        onFrame();
      });
    await new Promise((r) => ws.once('open', r));
    ws.send(
      JSON.stringify({
        ...{ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 },
        ...{ enable_language_identification: true, translation: { type: 'one_way', target_language: 'es' } },
      }),
    );
    const split = Math.round((splitMs * 16000) / 1000) * 2;
    for (let off = 0; off < split; off += 3200) ws.send(pcm.subarray(off, Math.min(off + 3200, split)));
    ws.send(JSON.stringify({ type: 'finalize' }));
    await until(() => frames.some((f) => f.tokens.some((t) => t.text === '<fin>') || f.error_type));
    for (let off = split; off < pcm.length; off += 3200) ws.send(pcm.subarray(off, off + 3200));
    ws.send('');
    await until(() => frames.some((f) => f.finished || f.error_type));
    ws.close();
    const { originals, translations } = liveFinals(frames);
    expectTranslatedFromIdentified(originals, translations);
  }, 240_000);
});

describe('real-time sessions that may not wait for the language (PARLANCE_REALTIME_LANGUAGE_ID_WAIT_MS=0)', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ dataDir: dataDirWith('no-wait', true), keepDataDir: true, env: { PARLANCE_REALTIME_LANGUAGE_ID_WAIT_MS: '0' } });
  }, 60_000);
  afterAll(() => s?.stop());

  it("label every final utterance with the speech model's language", async () => {
    const { originals } = liveFinals(await streamRealtime(s, pcm, { enable_language_identification: true, enable_endpoint_detection: true }));
    expect(originals.filter((t) => t.start_ms! >= splitMs).length).toBeGreaterThan(0);
    expect(originals.every((t) => t.language === 'en')).toBe(true);
  }, 240_000);
});

describe('real-time sessions whose language comes too late (PARLANCE_REALTIME_LANGUAGE_ID_WAIT_MS=1)', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({
      dataDir: dataDirWith('too-slow', true),
      keepDataDir: true,
      env: { PARLANCE_REALTIME_LANGUAGE_ID_WAIT_MS: '1', PARLANCE_LOG_LEVEL: 'info' },
    });
  }, 60_000);
  afterAll(() => s?.stop());

  it("give up on the model after the wait: finals go out with the speech model's language, and the wait is logged", async () => {
    // No identification (a worker thread's run of the model) answers within 1 ms.
    const frames = await streamRealtime(s, pcm, { enable_language_identification: true, enable_endpoint_detection: true });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    const { originals } = liveFinals(frames);
    expect(originals.filter((t) => t.start_ms! >= splitMs).length).toBeGreaterThan(0);
    expect(originals.every((t) => t.language === 'en')).toBe(true);
    expect(s.stderr()).toMatch(/"wait_ms":1,.*"msg":"real-time language identification too slow: the utterance keeps the model language"/);
  }, 240_000);
});

describe('with a language-id model sherpa-onnx cannot use', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ dataDir: dataDirWith('english-only', false), keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info' } });
  }, 60_000);
  afterAll(() => s?.stop());

  it('fails the jobs that ask for identification with internal_error; others complete and the server goes on', async () => {
    const fileId = await uploadFile(s, file);
    const { job } = await transcribe(s, fileId, { enable_language_identification: true });
    expect(job).toMatchObject({ status: 'failed', error_type: 'internal_error' });
    expect(job.error_message).not.toMatch(/0x[0-9a-f]{6,}|\/tmp\/|at .*\.js:/);
    expect(s.stderr()).toMatch(/"model":"pitch-lid-v1".*could not be loaded by sherpa-onnx \(exit 255\).*"msg":"language identification failed"/);
    expect((await s.request('/health', { key: null })).status).toBe(200);
    const plain = await transcribe(s, fileId, {});
    expect(plain.job.status).toBe('completed');
    expect(plain.tokens.length).toBeGreaterThan(0);
  }, 240_000);

  it("keeps a real-time session up, its finals labelled with the speech model's language, and logs the failure", async () => {
    const frames = await streamRealtime(s, pcm, { enable_language_identification: true, enable_endpoint_detection: true });
    const { originals } = liveFinals(frames);
    expect(originals.length).toBeGreaterThan(0);
    expect(originals.every((t) => t.language === 'en')).toBe(true);
    expect(s.stderr()).toMatch(/"model":"pitch-lid-v1".*"msg":"real-time language identification failed"/);
  }, 240_000);
});
