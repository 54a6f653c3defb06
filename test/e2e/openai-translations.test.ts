// POST /v1/audio/translations with the official `openai` SDK: speech is transcribed as a native async transcription
// with one-way translation into English, so it works where the model's language has an installed pair into English
// (or already is English) and is refused with a clear 400 otherwise. Models of other languages come from the models
// directory: the tiny energy model (test/fixtures/sherpa-models.ts) that hears "yes" wherever the audio is loud,
// once labelled Spanish (apertium's spa-eng pair, which setup installs, translates it) and once French (no pair into English).
import { createReadStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI, { BadRequestError, RateLimitError } from 'openai';
import type { TranslationVerbose } from 'openai/resources/audio/translations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { makeSpeech, startParlance, tempDir, type Parlance } from '../harness.js';

const root = tempDir('parlance-openai-translate-');
const dataDir = path.join(root, 'data');
let s: Parlance;
let client: OpenAI;
let speech: string;

function energyModel(id: string, language: string): void {
  const dir = path.join(dataDir, 'models', id);
  mkdirSync(dir, { recursive: true });
  writeEnergyCtcModel(dir);
  writeFileSync(
    path.join(dir, 'parlance-model.json'),
    JSON.stringify({ id, family: 'stt-offline', type: 'nemo-ctc', files: { model: 'model.onnx', tokens: 'tokens.txt' }, languages: [language] }),
  );
}

beforeAll(async () => {
  energyModel('energy-es-v1', 'es');
  energyModel('energy-fr-v1', 'fr');
  speech = await makeSpeech(path.join(root, 'speech.wav'), 'Glue the sheet to the dark blue background.', { padSeconds: 1 });
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_RATE_MODELS_PROJECT_PER_MIN: '4' } });
  client = new OpenAI({ apiKey: s.apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 120_000 });
}, 60_000);
afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

const file = () => createReadStream(speech);
/** The SDK's translation overloads do not narrow on response_format: the text formats return strings. */
const asText = (v: unknown) => v as string;
const asVerbose = (v: unknown) => v as TranslationVerbose;

/** Whether the catalog offers one-way translation into English from the model's speech (an installed pair). */
async function translatesToEnglish(model: string): Promise<boolean> {
  const { models } = (await (await s.request('/v1/models')).json()) as { models: { id: string; translation_targets: { target_language: string }[] }[] };
  return models.find((m) => m.id === model)!.translation_targets.some((t) => t.target_language === 'en');
}

describe('POST /v1/audio/translations', () => {
  it('English speech with the English model is English already: every format', async () => {
    const json = await client.audio.translations.create({ file: file(), model: 'whisper-1' });
    expect(json.text).toMatch(/dark blue background/i);
    const text = asText(await client.audio.translations.create({ file: file(), model: 'whisper-1', response_format: 'text' }));
    expect(text.trim()).toBe(json.text);
    const verbose = asVerbose(await client.audio.translations.create({ file: file(), model: 'whisper-1', response_format: 'verbose_json' }));
    expect(verbose).toMatchObject({ language: 'english', text: json.text });
    expect(verbose.segments!.length).toBeGreaterThan(0);
    expect(asText(await client.audio.translations.create({ file: file(), model: 'whisper-1', response_format: 'srt' })).startsWith('1\n00:00:')).toBe(true);
    expect(asText(await client.audio.translations.create({ file: file(), model: 'whisper-1', response_format: 'vtt' })).startsWith('WEBVTT')).toBe(true);
    // The native record asked for one-way translation into English.
    const { transcriptions } = (await (await s.request('/v1/transcriptions')).json()) as { transcriptions: { translation: unknown }[] };
    expect(transcriptions[0]!.translation).toEqual({ type: 'one_way', target_language: 'en' });
  }, 180_000);

  it('a model whose language has no pair into English: a clear 400 naming model, and nothing kept', async () => {
    const err = await client.audio.translations.create({ file: file(), model: 'energy-fr-v1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    const e = err as BadRequestError;
    expect(e.param).toBe('model');
    expect(e.message).toMatch(/translation into English is not available with model energy-fr-v1: it recognises fr/);
    expect(((await (await s.request('/v1/files/count')).json()) as { total: number }).total).toBe(0);
  });

  it('a model whose language has an installed pair into English: the English translation, timed by the speech', async () => {
    // apertium-eng-spa is a required package (scripts/debian-packages.txt): a missing pair is a failure, not a skip.
    expect(await translatesToEnglish('energy-es-v1'), 'the server offers no translation of energy-es-v1 (es) into English').toBe(true);
    const verbose = asVerbose(await client.audio.translations.create({ file: file(), model: 'energy-es-v1', response_format: 'verbose_json' }));
    expect(verbose.language).toBe('english');
    expect(verbose.text).toMatch(/yes/i);
    expect(verbose.segments!.length).toBeGreaterThan(0);
    for (const seg of verbose.segments!) expect(seg.end).toBeGreaterThan(seg.start);
    const { transcriptions } = (await (await s.request('/v1/transcriptions')).json()) as { transcriptions: { id: string }[] };
    const native = (await (await s.request(`/v1/transcriptions/${transcriptions[0]!.id}/transcript`)).json()) as {
      tokens: { translation_status?: string; language?: string }[];
    };
    expect(native.tokens.some((t) => t.translation_status === 'translation' && t.language === 'en')).toBe(true);
  }, 120_000);
});

describe('limits', () => {
  it('the native rate limits apply to the OpenAI paths: RateLimitError with Retry-After', async () => {
    let err: unknown;
    for (let i = 0; i < 6 && !err; i++) await client.get('/audio/models').catch((e: unknown) => (err = e));
    expect(err).toBeInstanceOf(RateLimitError);
    const e = err as RateLimitError;
    expect(e).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(Number(e.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
