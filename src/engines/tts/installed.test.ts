// TTS models users bring, in the registry of the engine list: each checked model is offered under its manifest id with its voices, the
// public ids it claims (tts-rt-v2) are taken from the built-in models, a model sherpa-onnx cannot use is left out
// with its reason logged, and claims that cannot hold stop the start. The compiled catalog checks models in a child
// process (from sources a broken model would end this process).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../../../test/harness.js';
import { writeToneVitsModel, writeVitsModelWithoutMetadata } from '../../../test/fixtures/sherpa-models.js';
import { type InstalledModel, MANIFEST_FILE, readManifest } from '../model-dir/manifest.js';
import type * as catalogModule from '../catalog.js';
import type { TtsRegistry, TtsRegistryOptions } from './registry.js';

/** PARLANCE_TTS_MODEL_ALIASES's default. */
const DEFAULT_ALIASES = ['tts-rt-v2=parlance-tts-v1', 'tts-rt-v1=parlance-tts-v1', 'tts-rt-v2=parlance-tts-espeak-v1', 'tts-rt-v1=parlance-tts-espeak-v1'];
const ESPEAK = 'parlance-tts-espeak-v1';

let root: string;
let compiled: typeof catalogModule;
let tone: InstalledModel;
let broken: InstalledModel;

function modelFolder(name: string, manifest: Record<string, unknown>, write: (dir: string) => void): InstalledModel {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(
    path.join(dir, MANIFEST_FILE),
    JSON.stringify({
      id: `${name}-v1`,
      family: 'tts',
      type: 'vits',
      files: { model: 'model.onnx', tokens: 'tokens.txt', data_dir: 'espeak-ng-data' },
      languages: ['en'],
      ...manifest,
    }),
  );
  return readManifest(dir);
}

beforeAll(async () => {
  root = tempDir('tts-installed-');
  const dist = path.join(ROOT, 'dist', 'engines', 'catalog.js');
  if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  compiled = (await import(pathToFileURL(dist).href)) as typeof catalogModule;
  tone = modelFolder('tone', { name: 'Tone voices', voices: { Low: 0, High: 1 }, aliases: ['tts-rt-v2'] }, (d) =>
    writeToneVitsModel(d, { sampleRate: 16000, numSpeakers: 2 }),
  );
  broken = modelFolder('broken', { aliases: ['tts-rt-v1'] }, (d) => writeVitsModelWithoutMetadata(d));
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The TTS models of the compiled engine list, with `installed` brought. */
async function ttsRegistry(installed: InstalledModel[], tts: Omit<TtsRegistryOptions, 'installed'>): Promise<TtsRegistry> {
  return (
    await compiled.EngineCatalog.create(
      { installed, tts },
      compiled.ENGINES.filter((e) => e.family === 'tts'),
    )
  ).tts;
}

describe('models users bring in the TTS registry', () => {
  it('offers a checked model with its voices; its aliases win over the defaults; a broken one is left out, logged', async () => {
    const logged: { level: string; msg: string }[] = [];
    const reg = await ttsRegistry([tone, broken], {
      aliases: DEFAULT_ALIASES,
      enabled: [ESPEAK, 'tone-v1', 'broken-v1'],
      log: (level, msg) => logged.push({ level, msg }),
    });
    try {
      expect(reg.models().map((m) => m.id)).toEqual([ESPEAK, 'tone-v1']);
      const m = reg.resolve('tone-v1')!;
      expect(m.name).toBe('Tone voices');
      expect(m.engine.name).toBe('sherpa-onnx');
      expect(m.engine.languages).toEqual([{ code: 'en', name: 'English' }]);
      expect(m.voices).toEqual([
        {
          id: 'Low',
          engineVoice: '0',
          description: 'Tone voices: speaker 0 (vits model)',
          gender: 'neutral',
          age: 'middle_aged',
          accent: 'english',
          use_case: ['general'],
          style: ['neural'],
          sampleRate: 16000,
        },
        {
          id: 'High',
          engineVoice: '1',
          description: 'Tone voices: speaker 1 (vits model)',
          gender: 'neutral',
          age: 'middle_aged',
          accent: 'english',
          use_case: ['general'],
          style: ['neural'],
          sampleRate: 16000,
        },
      ]);
      // tts-rt-v2 is claimed; tts-rt-v1 (claimed by the broken model only) stays with the built-in model.
      expect(reg.resolve('tts-rt-v2')).toBe(m);
      expect(reg.resolve('tts-rt-v1')?.id).toBe(ESPEAK);
      expect(reg.resolve('broken-v1')).toBeUndefined();
      expect(logged.find((l) => l.level === 'error')?.msg).toMatch(
        /broken-v1 .*could not be loaded by sherpa-onnx \(exit 255\): 'sample_rate' does not exist in the metadata .*the model is not offered/,
      );
      expect(logged.find((l) => l.level === 'info')?.msg).toBe('TTS model ready');

      // Through the alias, the model speaks with the voice's speaker.
      const chunks = [];
      for await (const c of m.engine.synthesize('Hello. Goodbye.', m.voices[1]!.engineVoice, 'en')) chunks.push(c);
      expect(chunks.map((c) => [c.text, c.sampleRate])).toEqual([
        ['Hello.', 16000],
        ['Goodbye.', 16000],
      ]);
    } finally {
      await reg.close();
    }
  }, 60_000);

  it('offers a brought model only when PARLANCE_TTS_MODELS names it (if set); its alias then falls back', async () => {
    const reg = await ttsRegistry([tone], { aliases: DEFAULT_ALIASES, enabled: [ESPEAK] });
    expect(reg.models().map((m) => m.id)).toEqual([ESPEAK]);
    expect(reg.resolve('tts-rt-v2')?.id).toBe(ESPEAK);
    await reg.close();
    await expect(ttsRegistry([tone], { enabled: ['tone-v2'] })).rejects.toThrow(/unknown TTS model "tone-v2" .*known: .*tone-v1/);
  }, 60_000);

  it.each([
    ['the id of a built-in model', { id: ESPEAK }, /has the id of a built-in TTS model: give it another id/],
    ['an alias that is a model id', { aliases: ['parlance-tts-flite-v1'] }, /claims parlance-tts-flite-v1, the id of a TTS model: claim aliases only/],
    ['an id that is a configured alias', { id: 'tts-rt-v2' }, /has the id of a public alias .*claim tts-rt-v2 in "aliases"/],
  ])('refuses a claim that cannot hold, before loading anything: %s', async (_what, change, message) => {
    const claim = { ...tone, ...change };
    const err = await ttsRegistry([claim], { aliases: DEFAULT_ALIASES }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.constructor.name).toBe('ConfigError');
    expect(err?.message).toMatch(message);
    expect(err?.message).toContain(tone.dir);
  });
});
