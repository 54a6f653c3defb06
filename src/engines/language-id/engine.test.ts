// The language-identification engine with a Whisper pair built at test time (test/fixtures/sherpa-whisper-lid-model.ts:
// low-pitched audio is "en", high-pitched "de"): inline from sources, and compiled (identifier on a worker thread,
// the model tried first in a child process).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneBursts } from '../../../test/fixtures/sherpa-models.js';
import { WHISPER_LID, writeWhisperLidModel } from '../../../test/fixtures/sherpa-whisper-lid-model.js';
import { cpuWhile, ROOT, tempDir } from '../../../test/harness.js';
import { type InstalledModel, readManifest } from '../model-dir/manifest.js';
import { languageIdentifierFor, WhisperLanguageIdentifier } from './engine.js';

let work: string;
let good: InstalledModel;
let englishOnly: InstalledModel;

function modelDir(name: string, multilingual: boolean): InstalledModel {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  writeWhisperLidModel(dir, { multilingual });
  writeFileSync(
    path.join(dir, 'parlance-model.json'),
    JSON.stringify({
      id: `${name}-v1`,
      family: 'language-id',
      type: 'whisper',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx' },
      languages: [...WHISPER_LID.languages],
    }),
  );
  return readManifest(dir);
}

const tone = (frequency: number, burstMs = 1000) => toneBursts(1, { burstMs, gapMs: 200, frequency }).pcm16;

beforeAll(() => {
  work = tempDir('lid-engine-');
  good = modelDir('pitch-lid', true);
  englishOnly = modelDir('english-only', false);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('languageIdentifierFor takes the first installed language-id model, and none without one', () => {
  expect(languageIdentifierFor([])).toBeUndefined();
  expect(languageIdentifierFor([{ ...good, family: 'stt-offline' }])).toBeUndefined();
  expect(languageIdentifierFor([englishOnly, good])?.modelId).toBe('english-only-v1');
});

describe('from sources (inline)', () => {
  let engine: WhisperLanguageIdentifier;
  beforeAll(() => {
    engine = new WhisperLanguageIdentifier(good);
  });
  afterAll(() => engine.close());

  it("answers the model's language for the audio", async () => {
    const [low, high] = WHISPER_LID.languages;
    expect(await engine.identify(tone(WHISPER_LID.lowHz))).toBe(low);
    expect(await engine.identify(tone(WHISPER_LID.highHz))).toBe(high);
    // only the first 29 s count (Whisper's 30 s window less tail padding): a high tone after 31 s of low one is not heard
    const long = new Int16Array(35 * 16_000);
    long.set(tone(WHISPER_LID.lowHz, 31_000));
    long.set(tone(WHISPER_LID.highHz, 3_000), 31 * 16_000);
    expect(await engine.identify(long)).toBe(low);
  });
});

describe('compiled (worker thread, model checked in a child process)', () => {
  let compiled: typeof import('./engine.js');
  beforeAll(async () => {
    const dist = path.join(ROOT, 'dist', 'engines', 'language-id', 'engine.js');
    if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    compiled = (await import(pathToFileURL(dist).href)) as typeof import('./engine.js');
  }, 120_000);

  it('identifies off the event loop, several at once', async () => {
    const inline = new WhisperLanguageIdentifier(good);
    const off = new compiled.WhisperLanguageIdentifier(good, { concurrency: 2 });
    try {
      await off.ready();
      const pcm = tone(WHISPER_LID.highHz, 29_000);
      const cpu = await cpuWhile(async () => expect(await off.identify(pcm)).toBe('de'));
      const inlineCpu = await cpuWhile(async () => expect(await inline.identify(pcm)).toBe('de'));
      console.info(
        `identify: main thread CPU ${cpu.mainMs} ms, other threads ${Math.round(cpu.otherMs)} ms; inline: main ${inlineCpu.mainMs} ms, other ${Math.round(inlineCpu.otherMs)} ms`,
      );
      // Inline, the features and the model run on the event loop's thread; off it, that thread only copies messages.
      // (CPU time, which a busy machine does not inflate as it does a timer's lateness.)
      expect(cpu.mainMs).toBeLessThan(inlineCpu.mainMs / 3);
      const hz = [WHISPER_LID.lowHz, WHISPER_LID.highHz, WHISPER_LID.highHz, WHISPER_LID.lowHz];
      expect(await Promise.all(hz.map((f) => off.identify(tone(f), { live: f === WHISPER_LID.lowHz })))).toEqual(['en', 'de', 'de', 'en']);
    } finally {
      await Promise.all([inline.close(), off.close()]);
    }
  }, 60_000);

  it('a model sherpa-onnx cannot use is refused with the reason, and this process lives on', async () => {
    const engine = new compiled.WhisperLanguageIdentifier(englishOnly);
    const err = (await engine.identify(tone(300)).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('EngineUnavailableError');
    expect(err.message).toMatch(/^model english-only-v1 \(.*\) could not be loaded by sherpa-onnx \(exit 255\): .*multilingual/);
    // tried again by the next call (the files may have been fixed meanwhile)
    await expect(engine.ready()).rejects.toThrow('could not be loaded');
    await engine.close();
  }, 60_000);
});
