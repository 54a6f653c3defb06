// Labelling models pulled over HTTP are used at once, without a restart, as speech-to-text models and voices are: a
// language-identification model (a tiny Whisper pair built at test time that hears low-pitched speech as "en" and
// high-pitched as "de") labels the next transcription and the next real-time session, and once removed the next
// ones are labelled with the speech model's language again; a speaker-embedding model is used by the next diarized
// transcription (one sherpa-onnx cannot use fails it with internal_error), and once removed the BIC clusterer is.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEmbeddingModelWithoutFramework, writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { WHISPER_LID, writeWhisperLidModel } from '../fixtures/sherpa-whisper-lid-model.js';
import { makeTwoLanguageSpeech } from '../fixtures/two-languages.js';
import { logLines, type Parlance, startParlance, streamRealtime, tempDir, uploadFile, waitFor } from '../harness.js';

const root = tempDir('parlance-labelling-live-');
const importDir = path.join(root, 'import');
const json = { 'content-type': 'application/json' };

interface Token {
  text: string;
  start_ms?: number;
  language?: string;
  is_final?: boolean;
}

function modelFolder(dir: string, manifest: Record<string, unknown>, write: (dir: string) => void): void {
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
}

let s: Parlance;
let file: string;
let pcm: Buffer;
/** Where the second (raised) sentence starts, ms. */
let splitMs: number;

beforeAll(async () => {
  const dataDir = path.join(root, 'data');
  modelFolder(
    path.join(dataDir, 'models', 'yes'),
    { id: 'energy-yes-v1', family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' }, languages: ['en'] },
    (d) => writeEnergyCtcModel(d),
  );
  modelFolder(
    path.join(importDir, 'lid'),
    {
      id: 'pitch-lid-v1',
      family: 'language-id',
      type: 'whisper',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx' },
      languages: [...WHISPER_LID.languages],
    },
    (d) => writeWhisperLidModel(d, { multilingual: true }),
  );
  modelFolder(
    path.join(importDir, 'broken-embedding'),
    { id: 'broken-embedding-v1', family: 'speaker-embedding', type: 'embedding', files: { model: 'model.onnx' }, languages: ['en'] },
    (d) => writeEmbeddingModelWithoutFramework(d),
  );
  ({ file, pcm, splitMs } = await makeTwoLanguageSpeech(root));
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info', PARLANCE_MODELS_IMPORT_DIR: importDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

async function pull(source: string, id: string): Promise<void> {
  const res = await s.request('/v1/admin/models', { method: 'POST', headers: json, body: JSON.stringify({ source }) });
  expect(res.status).toBe(202);
  const rec = await waitFor(
    async () => (await (await s.request(`/v1/admin/models/${id}`)).json()) as { status: string; error_message: string | null },
    (r) => r.status === 'ready' || r.status === 'failed',
    60_000,
  );
  expect(rec.status, rec.error_message ?? '').toBe('ready');
}

async function transcribe(extra: Record<string, unknown>) {
  const fileId = await uploadFile(s, file);
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ model: 'energy-yes-v1', file_id: fileId, enable_text_formatting: false, ...extra }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const job = await waitFor(
    async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_type: string | null; error_message: string | null },
    (r) => r.status === 'completed' || r.status === 'failed',
    120_000,
    100,
  );
  const tokens = job.status === 'completed' ? ((await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { tokens: Token[] }).tokens : [];
  return { job, tokens };
}

/** The languages of the tokens before and after the raised sentence begins. */
const halves = (tokens: Token[]) => [
  new Set(tokens.filter((t) => t.start_ms! < splitMs).map((t) => t.language)),
  new Set(tokens.filter((t) => t.start_ms! >= splitMs).map((t) => t.language)),
];

const liveFinals = (frames: { tokens: unknown[] }[]) =>
  frames.flatMap((f) => f.tokens as Token[]).filter((t) => t.is_final && t.start_ms !== undefined && !t.text.startsWith('<'));

describe('labelling models pulled over HTTP', () => {
  it('uses a language-id model at once for files and live sessions, and stops once it is removed', async () => {
    // None installed: the speech model's language on every token.
    const before = await transcribe({ enable_language_identification: true });
    expect(before.job.status).toBe('completed');
    expect(halves(before.tokens)).toEqual([new Set(['en']), new Set(['en'])]);

    await pull('lid/', 'pitch-lid-v1');
    expect(logLines(s).find((l) => l.msg === 'spoken language identification of transcripts')).toMatchObject({ model: 'pitch-lid-v1' });
    const after = await transcribe({ enable_language_identification: true });
    expect(after.job.status, after.job.error_message ?? '').toBe('completed');
    expect(halves(after.tokens)).toEqual([new Set(['en']), new Set(['de'])]);
    const live = liveFinals(await streamRealtime(s, pcm, { enable_language_identification: true, enable_endpoint_detection: true }));
    expect(halves(live)).toEqual([new Set(['en']), new Set(['de'])]);

    // Removed: no longer a role taken at start (no 409); the next transcription is labelled as without it.
    expect((await s.request('/v1/admin/models/pitch-lid-v1', { method: 'DELETE' })).status).toBe(204);
    const removed = await transcribe({ enable_language_identification: true });
    expect(removed.job.status).toBe('completed');
    expect(halves(removed.tokens)).toEqual([new Set(['en']), new Set(['en'])]);
  }, 300_000);

  it('uses a speaker-embedding model at once for diarized files, and the BIC clusterer again once it is removed', async () => {
    const before = await transcribe({ enable_speaker_diarization: true });
    expect(before.job.status, before.job.error_message ?? '').toBe('completed');

    // A model sherpa-onnx cannot use (no framework in its metadata): the next diarized job meets it and fails.
    await pull('broken-embedding/', 'broken-embedding-v1');
    expect(logLines(s).find((l) => l.msg === 'speaker diarization of files with speaker embeddings')).toMatchObject({ model: 'broken-embedding-v1' });
    const broken = await transcribe({ enable_speaker_diarization: true });
    expect(broken.job).toMatchObject({ status: 'failed', error_type: 'internal_error' });
    // Jobs that do not diarize go on.
    expect((await transcribe({})).job.status).toBe('completed');

    expect((await s.request('/v1/admin/models/broken-embedding-v1', { method: 'DELETE' })).status).toBe(204);
    const after = await transcribe({ enable_speaker_diarization: true });
    expect(after.job.status, after.job.error_message ?? '').toBe('completed');
    expect(after.tokens.some((t) => (t as { speaker?: string }).speaker !== undefined)).toBe(true);
  }, 300_000);
});
