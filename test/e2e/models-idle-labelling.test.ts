// PARLANCE_MODEL_IDLE_UNLOAD_SECONDS for the labelling models you bring: a language-identification model (a tiny
// Whisper pair built at test time that hears low-pitched speech as "en" and high-pitched as "de") and a
// speaker-embedding model (the average spectrum) label a transcription, then nobody uses them: both are unloaded (the
// log says so, `loaded` is false, the gauge of loaded models drops to 0), and the next transcription loads them again
// and is labelled as the first one was.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel, writeSpectrumEmbeddingModel } from '../fixtures/sherpa-models.js';
import { WHISPER_LID, writeWhisperLidModel } from '../fixtures/sherpa-whisper-lid-model.js';
import { makeTwoLanguageSpeech } from '../fixtures/two-languages.js';
import { logLines, type Parlance, startParlance, tempDir, uploadFile, waitFor } from '../harness.js';

const LID = 'pitch-lid-idle-v1';
const EMBEDDING = 'spectrum-idle-v1';
const root = tempDir('parlance-idle-labelling-');
const json = { 'content-type': 'application/json' };

interface Token {
  text: string;
  start_ms: number;
  language?: string;
  speaker?: string;
}

function modelFolder(dir: string, manifest: Record<string, unknown>, write: (dir: string) => void): void {
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
}

let s: Parlance;
let file: string;
let splitMs: number;

beforeAll(async () => {
  const dataDir = path.join(root, 'data');
  const models = path.join(dataDir, 'models');
  modelFolder(
    path.join(models, 'yes'),
    { id: 'energy-yes-v1', family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' }, languages: ['en'] },
    (d) => writeEnergyCtcModel(d),
  );
  modelFolder(
    path.join(models, 'lid'),
    { id: LID, family: 'language-id', type: 'whisper', files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx' }, languages: [...WHISPER_LID.languages] },
    (d) => writeWhisperLidModel(d, { multilingual: true }),
  );
  modelFolder(
    path.join(models, 'spectrum'),
    { id: EMBEDDING, family: 'speaker-embedding', type: 'embedding', files: { model: 'model.onnx' }, languages: ['en'] },
    (d) => writeSpectrumEmbeddingModel(d),
  );
  ({ file, splitMs } = await makeTwoLanguageSpeech(root));
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info', PARLANCE_MODEL_IDLE_UNLOAD_SECONDS: '1' } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

const unloads = (model: string) => logLines(s).filter((l) => l.msg === 'idle model unloaded' && l.model === model).length;
const loaded = async (id: string) => ((await (await s.request(`/v1/admin/models/${id}`)).json()) as { loaded: boolean }).loaded;
const gauge = async () => Number(/^parlance_models_loaded (\d+)$/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1]);

/** A transcription with language identification and diarization: the languages of each half, and the speakers. */
async function labelled() {
  const fileId = await uploadFile(s, file);
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({
      model: 'energy-yes-v1',
      file_id: fileId,
      enable_text_formatting: false,
      enable_language_identification: true,
      enable_speaker_diarization: true,
    }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const job = await waitFor(
    async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_message: string | null },
    (r) => r.status === 'completed' || r.status === 'failed',
    120_000,
    100,
  );
  expect(job.status, job.error_message ?? '').toBe('completed');
  const { tokens } = (await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { tokens: Token[] };
  return {
    languages: [
      new Set(tokens.filter((t) => t.start_ms < splitMs).map((t) => t.language)),
      new Set(tokens.filter((t) => t.start_ms >= splitMs).map((t) => t.language)),
    ],
    speakers: new Set(tokens.map((t) => t.speaker)),
  };
}

describe('idle unloading of the labelling models you brought', () => {
  it('unloads the language-id and speaker-embedding models nobody uses, and loads them again on the next request', async () => {
    const first = await labelled();
    expect(first.languages).toEqual([new Set(['en']), new Set(['de'])]);
    expect(first.speakers.has(undefined)).toBe(false);

    // Nobody uses them now: both unloaded (so both had been loaded by it), and nothing you brought is in memory.
    await waitFor(
      async () => [unloads(LID), unloads(EMBEDDING), await gauge()],
      ([lid, embedding, inMemory]) => lid === 1 && embedding === 1 && inMemory === 0,
      30_000,
    );
    expect(await loaded(LID)).toBe(false);
    expect(await loaded(EMBEDDING)).toBe(false);

    // The next transcription loads them again and is labelled the same; idle again, they are unloaded again.
    const second = await labelled();
    expect(second).toEqual(first);
    await waitFor(
      async () => [unloads(LID), unloads(EMBEDDING), await gauge()],
      ([lid, embedding, inMemory]) => lid === 2 && embedding === 2 && inMemory === 0,
      30_000,
    );
  }, 300_000);
});
