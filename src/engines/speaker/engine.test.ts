// The speaker-embedding engine with models built at test time (test/fixtures/sherpa-models.ts): inline from sources,
// and compiled (extractor on a worker thread, the model tried first in a child process).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPECTRUM_EMBEDDING, toneBursts, writeEmbeddingModelWithoutFramework, writeSpectrumEmbeddingModel } from '../../../test/fixtures/sherpa-models.js';
import { cpuWhile, ROOT, tempDir } from '../../../test/harness.js';
import { type InstalledModel, readManifest } from '../model-dir/manifest.js';
import { cosine } from './cluster.js';
import { SpeakerEmbeddingEngine, speakerEngineFor } from './engine.js';

let work: string;
let good: InstalledModel;
let broken: InstalledModel;

function modelDir(name: string, write: (dir: string) => void): InstalledModel {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(
    path.join(dir, 'parlance-model.json'),
    JSON.stringify({ id: `${name}-v1`, family: 'speaker-embedding', type: 'embedding', files: { model: 'model.onnx' }, languages: ['en'] }),
  );
  return readManifest(dir);
}

const tone = (frequency: number, burstMs = 1500) => toneBursts(1, { burstMs, gapMs: 0, frequency }).pcm16;

beforeAll(() => {
  work = tempDir('speaker-engine-');
  good = modelDir('spectrum', (d) => writeSpectrumEmbeddingModel(d));
  broken = modelDir('broken', (d) => writeEmbeddingModelWithoutFramework(d));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('speakerEngineFor takes the first installed speaker-embedding model, and none without one', () => {
  expect(speakerEngineFor([])).toBeUndefined();
  expect(speakerEngineFor([{ ...good, family: 'stt-offline' }])).toBeUndefined();
  expect(speakerEngineFor([good, broken])?.modelId).toBe('spectrum-v1');
});

describe('from sources (inline)', () => {
  let engine: SpeakerEmbeddingEngine;
  beforeAll(() => {
    engine = new SpeakerEmbeddingEngine(good);
  });
  afterAll(() => engine.close());

  it('embeds PCM: one tone alike at any length, two tones apart; clusters them', async () => {
    const [a, a2, b] = await Promise.all([engine.embed(tone(300)), engine.embed(tone(300, 800)), engine.embed(tone(1200))]);
    expect(a).toHaveLength(SPECTRUM_EMBEDDING.dim);
    expect(cosine(a, a2)).toBeGreaterThan(0.999);
    expect(cosine(a, b)).toBeLessThan(0.05);
    expect(await engine.cluster([a, b, a2], [1500, 1500, 800], { threshold: 0.5 })).toEqual([0, 1, 0]);
    // empty audio: a zero vector, not an error
    expect([...(await engine.embed(new Int16Array(0)))].every((x) => x === 0)).toBe(true);
  });
});

describe('compiled (worker thread, model checked in a child process)', () => {
  let compiled: typeof import('./engine.js');
  beforeAll(async () => {
    const dist = path.join(ROOT, 'dist', 'engines', 'speaker', 'engine.js');
    if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    compiled = (await import(pathToFileURL(dist).href)) as typeof import('./engine.js');
  }, 120_000);

  it('gives the embeddings the inline engine gives, with the work off the event loop', async () => {
    const inline = new SpeakerEmbeddingEngine(good);
    const off = new compiled.SpeakerEmbeddingEngine(good, { concurrency: 2 });
    try {
      await off.ready();
      const pcm = tone(440, 180_000);
      let e: Float32Array = new Float32Array();
      let i: Float32Array = new Float32Array();
      const cpu = await cpuWhile(async () => (e = await off.embed(pcm)));
      const inlineCpu = await cpuWhile(async () => (i = await inline.embed(pcm)));
      console.info(
        `embed: main thread CPU ${cpu.mainMs} ms, other threads ${Math.round(cpu.otherMs)} ms; inline: main ${inlineCpu.mainMs} ms, other ${Math.round(inlineCpu.otherMs)} ms`,
      );
      expect(Array.from(e)).toEqual(Array.from(i));
      // Inline, the features and the model run on the event loop's thread; off it, that thread only copies messages.
      // (CPU time, which a busy machine does not inflate as it does a timer's lateness.)
      expect(cpu.mainMs).toBeLessThan(inlineCpu.mainMs / 3);
      const many = await Promise.all([300, 1200, 300, 1200].map((hz) => off.embed(tone(hz))));
      expect(await off.cluster(many, [1, 1, 1, 1], { threshold: 0.5 })).toEqual([0, 1, 0, 1]);
    } finally {
      await Promise.all([inline.close(), off.close()]);
    }
  }, 60_000);

  it('a model sherpa-onnx cannot use is refused with the reason, and this process lives on', async () => {
    const engine = new compiled.SpeakerEmbeddingEngine(broken);
    const err = (await engine.embed(tone(300)).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('EngineUnavailableError');
    expect(err.message).toMatch(/^speaker embedding model broken-v1 \(.*\) could not be loaded by sherpa-onnx \(SIGSEGV\): No model_type in the metadata!/);
    expect(err.message).not.toMatch(/\.cc:|0x[0-9a-f]{6,}/);
    // tried again by the next call (the files may have been fixed meanwhile)
    await expect(engine.ready()).rejects.toThrow('could not be loaded');
    await engine.close();
  }, 60_000);
});
