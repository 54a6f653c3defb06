// The public catalog over the real engine catalog: open() gives an STT model's loaded recognizer (in a mode, in a
// language) or a TTS model's synthesizer, with the coded errors the surfaces have always returned; the aliases that
// models users brought claim, and the claims that cannot hold.
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/settings.js';
import { EngineCatalog, ENGINES, type EngineOptions } from '../../engines/catalog.js';
import type { InstalledModel } from '../../engines/model-dir/manifest.js';
import type { SttEngineDescriptor } from '../../engines/stt/descriptor.js';
import { scriptedSttEngine } from '../../engines/stt/scripted/descriptor.js';
import { SCRIPTED_FEATURES } from '../../engines/stt/scripted/engine.js';
import type { Token } from '../../engines/stt/interface.js';
import { ApiError } from '../../wire/api-error.js';
import { failedToLoad, ModelCatalog } from './catalog.js';
import { aliasesOf } from './installed.js';
import { ModelUse } from './use.js';

const opened: EngineCatalog[] = [];
async function engines(options: EngineOptions, list = ENGINES): Promise<EngineCatalog> {
  const c = await EngineCatalog.create(options, list);
  opened.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

const ms = (n: number) => new Uint8Array(n * 32); // n ms of 16 kHz s16le
async function* audio(n: number) {
  yield ms(n);
}
const texts = (tokens: Token[]) => tokens.map((t) => t.text);
/** Only the built-in TTS model espeak-ng speaks: the other engines' programs are not started. */
const ESPEAK_ONLY = { enabled: ['parlance-tts-espeak-v1'], aliases: ['tts-rt-v2=parlance-tts-espeak-v1'] };
const SCRIPT = { words: [{ text: 'hello', start_ms: 100, end_ms: 400 }] };

/** An engine whose recognizer answers each file with the language the call was given. */
const languageEcho: SttEngineDescriptor = {
  family: 'stt',
  id: 'echo',
  build: () => ({
    engine: {
      id: 'echo',
      languages: ['de', 'en'],
      features: SCRIPTED_FEATURES,
      load: async () => ({
        engineId: 'echo',
        engineModel: 'echo',
        transcribe: async (_pcm, options) => [{ text: options?.language ?? '(none)', start_ms: 0, end_ms: 1, confidence: 1 }],
        stream: () => Promise.reject(new Error('files only')),
      }),
      close: async () => {},
    },
    models: [
      {
        id: 'echo-v1',
        engineId: 'echo',
        engineModel: 'echo',
        languages: ['de', 'en'],
        features: SCRIPTED_FEATURES,
        offers: [{ id: 'echo-v1', name: 'Echo', mode: 'async' }],
      },
    ],
  }),
};

describe('ModelCatalog.open', () => {
  it('opens an STT model of an engine added to the list, in each mode and through an alias', async () => {
    const c = new ModelCatalog(await engines({ tts: ESPEAK_ONLY }, [...ENGINES, scriptedSttEngine(SCRIPT)]), ['stt-async-v4=scripted-v1']);
    expect(texts(await (await c.open('scripted-v1', 'async', { language: 'en' })).transcribe(audio(500)))).toEqual(['hello']);
    expect(texts(await (await c.open('stt-async-v4', 'async')).transcribe(audio(500)))).toEqual(['hello']);
    const stream = await (await c.open('scripted-v1', 'real_time', { language: 'en' })).stream({ endpointSilenceMs: 300 });
    const finals: string[] = [];
    stream.on('final', (t) => finals.push(...texts(t)));
    for (let t = 0; t < 1000; t += 20) await stream.write(ms(20));
    await stream.end();
    expect(finals).toEqual(['hello']);
    expect(c.resolve('stt-async-v4', 'real_time').model.id).toBe('scripted-v1'); // an operator alias has every mode
  });

  it("gives every call of the recognizer the language it was opened in, by default the model's first", async () => {
    const c = new ModelCatalog(await engines({ tts: ESPEAK_ONLY }, [...ENGINES, languageEcho]));
    expect(c.resolve('echo-v1', 'async').languages).toEqual(['de', 'en']);
    expect(texts(await (await c.open('echo-v1', 'async', { language: 'en' })).transcribe(audio(10)))).toEqual(['en']);
    expect(texts(await (await c.open('echo-v1', 'async')).transcribe(audio(10)))).toEqual(['de']);
  });

  it('refuses an unknown STT id, or one of the other mode, with model_not_available naming what exists', async () => {
    const c = new ModelCatalog(await engines({ tts: ESPEAK_ONLY }, [...ENGINES, scriptedSttEngine(SCRIPT)]));
    await expect(c.open('nope', 'async')).rejects.toMatchObject({
      type: 'model_not_available',
      message: 'Model "nope" is not available for async transcription. Available: parlance-async-en-v1, scripted-v1.',
    });
    await expect(c.open('parlance-async-en-v1', 'real_time')).rejects.toMatchObject({
      type: 'model_not_available',
      message: 'Model "parlance-async-en-v1" is not available for real-time transcription. Available: parlance-rt-en-v1, scripted-v1.',
    });
  });

  it('refuses a model whose load fails with model_not_available, then at once while its failure is recent', async () => {
    const missing = { hmm: '/nonexistent/en-us', lm: '/nonexistent/en-us.lm.bin', dict: '/nonexistent/cmudict-en-us.dict' };
    const c = new ModelCatalog(await engines({ stt: { pocketsphinx: { models: { 'en-us': missing } } }, tts: ESPEAK_ONLY }));
    const err = await c.open('parlance-rt-en-v1', 'real_time').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      type: 'model_not_available',
      message: 'Model "parlance-rt-en-v1" is not available: it failed to load on this server (the server log says why).',
    });
    expect(failedToLoad(err)).toBe(true);
    // The other mode's id names the same model: refused without another attempt.
    expect(() => c.resolve('parlance-async-en-v1', 'async')).toThrow('Model "parlance-async-en-v1" is not available: it failed to load');
  });

  it('opens a TTS model (or its alias) as a synthesizer; refuses an unknown id and a language it does not speak', async () => {
    const c = new ModelCatalog(await engines({ tts: ESPEAK_ONLY }));
    const model = await c.open('tts-rt-v2', 'tts', { language: 'en' });
    expect(model.id).toBe('parlance-tts-espeak-v1');
    const voice = model.voices.find((v) => v.id === 'Adrian')!;
    const chunks = [];
    for await (const chunk of model.engine.synthesize('Hello.', voice.engineVoice, 'en')) chunks.push(chunk);
    expect(chunks.map((ch) => ch.text)).toEqual(['Hello.']);
    expect(chunks[0]!.pcm.length).toBeGreaterThan(1000);
    await expect(c.open('nope', 'tts')).rejects.toMatchObject({
      type: 'model_not_available',
      message: 'TTS model "nope" is not available. Available: parlance-tts-espeak-v1, tts-rt-v2.',
    });
    await expect(c.open('parlance-tts-espeak-v1', 'tts', { language: 'xx' })).rejects.toMatchObject({ type: 'invalid_request' });
  }, 30_000);
});

describe('ModelCatalog.refresh and the uses of its models', () => {
  it('swaps the alias table in one step, refusing one that points at no model (the old one stays)', async () => {
    const c = new ModelCatalog(await engines({ tts: ESPEAK_ONLY }, [...ENGINES, scriptedSttEngine(SCRIPT)]), ['stt-async-v4=scripted-v1']);
    c.refresh(['stt-async-v4=parlance-async-en-v1', 'mine=scripted-v1']);
    expect(c.resolve('stt-async-v4', 'async').model.id).toBe('parlance-async-en-v1');
    expect(c.resolve('mine', 'real_time').model.id).toBe('scripted-v1');
    expect(() => c.refresh(['gone=nope-v1'])).toThrow(/unknown model nope-v1/);
    expect(c.resolve('mine', 'async').model.id).toBe('scripted-v1');
  });

  it('counts a transcription and a live session as uses of the model from start to end', async () => {
    const use = new ModelUse();
    const c = new ModelCatalog(await engines({ tts: ESPEAK_ONLY }, [...ENGINES, scriptedSttEngine(SCRIPT)]), [], use);
    const recognizer = await c.open('scripted-v1', 'real_time', { language: 'en' });
    expect(use.inUse('scripted-v1')).toBe(false);
    const stream = await recognizer.stream({ endpointSilenceMs: 300 });
    expect(use.inUse('scripted-v1')).toBe(true);
    let idle = false;
    const whenIdle = use.whenIdle('scripted-v1').then(() => (idle = true));
    await stream.write(ms(20));
    expect(idle).toBe(false);
    await stream.end();
    await whenIdle;
    expect(use.inUse('scripted-v1')).toBe(false);
    const transcribing = recognizer.transcribe(audio(100));
    expect(use.inUse('scripted-v1')).toBe(true);
    await transcribing;
    expect(use.inUse('scripted-v1')).toBe(false);
    expect(use.lastUsed('scripted-v1')).toBeGreaterThan(0);
  });
});

describe('aliases models users brought claim', () => {
  const brought = (id: string, family: 'stt-offline' | 'stt-streaming', aliases: string[]): InstalledModel => ({
    id,
    family,
    type: 'whisper',
    files: {},
    languages: ['en'],
    aliases,
    dir: `/models/${id}`,
    paths: {},
  });
  const settings = { sttModelAliases: ['stt-async-v4=parlance-async-en-v1', 'stt-rt-v4=parlance-rt-en-v1'] };

  async function claims(installed: InstalledModel[]) {
    const e = await engines(
      { installed },
      ENGINES.filter((d) => d.family === 'stt'),
    );
    return aliasesOf(installed, e.stt.offers(), settings);
  }

  it('takes the public ids over, each in the mode it had', async () => {
    expect(await claims([brought('fast-v1', 'stt-streaming', ['stt-async-v4', 'stt-rt-v4', 'fast'])])).toEqual([
      { alias: 'stt-async-v4', target: 'fast-v1', mode: 'async' },
      { alias: 'stt-rt-v4', target: 'fast-v1', mode: 'real_time' },
      { alias: 'fast', target: 'fast-v1' },
    ]);
  });

  it.each([
    ['the id of a built-in model', brought('parlance-async-en-v1', 'stt-offline', []), /has the id of a built-in model: give it another id/],
    [
      'a real-time id for a files-only model',
      brought('files-v1', 'stt-offline', ['stt-rt-v4']),
      /transcribes files only and cannot take over the real-time model id stt-rt-v4/,
    ],
    ['the id of a model', brought('files-v1', 'stt-offline', ['parlance-rt-en-v1']), /claims parlance-rt-en-v1, the id of a model: claim aliases only/],
  ])('refuses a claim that cannot hold as a configuration error: %s', async (_what, model, message) => {
    const err = await claims([model]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
  });
});
