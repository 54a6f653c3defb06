// Offline recognition with a model brought through sherpa-onnx, on a tiny model built at test time whose output is
// known: it hears "yes" wherever the audio is loud (test/fixtures/sherpa-models.ts). Files are cut at pauses and each
// segment decoded on the model's recognizers, from sources (in-process) and compiled (worker threads, with the model
// tried in a child process first); a model sherpa-onnx cannot use fails to load with a reason, not a dead server.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../../../../test/harness.js';
import { toneBursts, writeCtcModelWithoutMetadata, writeEnergyCtcModel, writeEnergyStreamingModel } from '../../../../test/fixtures/sherpa-models.js';
import { HOTWORD_MODEL, writeHotwordTransducerModel } from '../../../../test/fixtures/sherpa-hotword-model.js';
import { readManifest, MANIFEST_FILE } from '../../model-dir/manifest.js';
import type { Token } from '../interface.js';
import * as source from './engine.js';

let root: string;
let compiled: typeof source;

beforeAll(async () => {
  root = tempDir('sherpa-engine-');
  const dist = path.join(ROOT, 'dist', 'engines', 'stt', 'sherpa', 'engine.js');
  if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  compiled = (await import(pathToFileURL(dist).href)) as typeof source;
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function modelFolder(name: string, write: (dir: string) => void, manifest: Record<string, unknown> = {}): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(
    path.join(dir, MANIFEST_FILE),
    JSON.stringify({
      id: `${name}-v1`,
      family: 'stt-offline',
      type: 'nemo-ctc',
      files: { model: 'model.onnx', tokens: 'tokens.txt' },
      languages: ['en'],
      ...manifest,
    }),
  );
  return dir;
}

const streamingManifest = {
  family: 'stt-streaming',
  type: 'transducer',
  files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' },
};

async function* pieces(pcm: Int16Array, bytes = 3201): AsyncIterable<Uint8Array> {
  const buf = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  for (let off = 0; off < buf.length; off += bytes) yield buf.subarray(off, off + bytes);
}

describe.each([
  ['from sources (in-process)', () => source],
  ['compiled (worker threads, model tried in a child first)', () => compiled],
])('a sherpa-onnx CTC model %s', (_how, impl) => {
  it('transcribes each burst as one word timed at the burst, with progress in time order', async () => {
    const model = readManifest(modelFolder('yes', (d) => writeEnergyCtcModel(d)));
    const engine = new (impl().SherpaEngine)([model], { vad: { backend: 'energy' }, concurrency: 2 });
    try {
      expect(engine.languages).toEqual(['en']);
      const recognizer = await engine.load('yes-v1');
      // Long pauses: the segmenter cuts between bursts, so segments decode on both recognizers at once.
      const t = toneBursts(5, { gapMs: 1500 });
      const progress: Token[][] = [];
      const words = await recognizer.transcribe(pieces(t.pcm16), { onTokens: (w) => progress.push(w) });
      expect(words.map((w) => w.text)).toEqual(['yes', 'yes', 'yes', 'yes', 'yes']);
      words.forEach((w, i) => {
        expect(Math.abs(w.start_ms - t.bursts[i]!.startMs)).toBeLessThanOrEqual(100);
        expect(w.end_ms).toBeGreaterThan(w.start_ms);
        expect(w.end_ms).toBeLessThanOrEqual(t.bursts[i + 1]?.startMs ?? t.durationMs);
      });
      expect(progress.flat()).toEqual(words);
      await expect(recognizer.stream()).rejects.toThrow(/transcribes files only/);
    } finally {
      await engine.close();
    }
  }, 60_000);
});

describe.each([
  ['from sources (in-process)', () => source],
  ['compiled (worker threads)', () => compiled],
])('an offline transducer with a modeling unit %s', (how, impl) => {
  it('takes a request’s context terms as hotwords, for that request only', async () => {
    const dir = modelFolder(`hotword-${how.startsWith('from') ? 'src' : 'dist'}`, (d) => writeHotwordTransducerModel(d), {
      type: 'transducer',
      files: { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' },
      modeling_unit: 'cjkchar',
    });
    const model = readManifest(dir);
    const engine = new (impl().SherpaEngine)([model], { vad: { backend: 'energy' }, concurrency: 1 });
    try {
      const recognizer = await engine.load(model.id);
      const t = toneBursts(3, { gapMs: 1500 });
      const plain = await recognizer.transcribe(pieces(t.pcm16));
      const biased = await recognizer.transcribe(pieces(t.pcm16), { context: { terms: [HOTWORD_MODEL.hotword], text: '' } });
      const again = await recognizer.transcribe(pieces(t.pcm16), { context: { terms: ['unrelated'], text: '' } });
      expect(plain.map((w) => w.text)).toEqual([HOTWORD_MODEL.plain, HOTWORD_MODEL.plain, HOTWORD_MODEL.plain]);
      expect(biased.map((w) => w.text)).toEqual([HOTWORD_MODEL.hotword, HOTWORD_MODEL.hotword, HOTWORD_MODEL.hotword]);
      expect(again.map((w) => w.text)).toEqual(plain.map((w) => w.text));
      biased.forEach((w, i) => expect(Math.abs(w.start_ms - t.bursts[i]!.startMs)).toBeLessThanOrEqual(100));
    } finally {
      await engine.close();
    }
  }, 60_000);
});

describe.each([
  ['from sources (in-process)', () => source],
  ['compiled (worker threads)', () => compiled],
])('a sherpa-onnx streaming model %s', (_how, impl) => {
  it('serves its live sessions up to its cap: one more waits for a session to end, or is refused as busy', async () => {
    const model = readManifest(modelFolder(`cap-${impl() === source ? 'src' : 'dist'}`, (d) => writeEnergyStreamingModel(d), streamingManifest));
    const engine = new (impl().SherpaEngine)([model], { streamingSessions: 2 });
    try {
      const recognizer = await engine.load(model.id);
      const [a, b] = [await recognizer.stream(), await recognizer.stream()];
      await expect(recognizer.stream({ busyWaitMs: 50 })).rejects.toMatchObject({ name: 'EngineBusyError' });
      const third = recognizer.stream({ busyWaitMs: 60_000 });
      a.abort();
      const c = await third;
      await c.end();
      await b.end();
    } finally {
      await engine.close();
    }
  }, 60_000);

  it('gives partial words as audio arrives, final ones at each pause, at finalize and at the end', async () => {
    const files = (d: string) => writeEnergyStreamingModel(d);
    const model = readManifest(modelFolder(`live-${impl() === source ? 'src' : 'dist'}`, files, streamingManifest));
    const engine = new (impl().SherpaEngine)([model], { streamingRecognizers: 2, vad: { backend: 'energy' } });
    try {
      const recognizer = await engine.load(model.id);
      const session = await recognizer.stream({ endpointSilenceMs: 400 });
      const events: { kind: 'p' | 'f'; words: string[]; endpoint?: boolean; ms: number[] }[] = [];
      session.on('partial', (t) => events.push({ kind: 'p', words: t.map((w) => w.text), ms: t.map((w) => w.start_ms) }));
      session.on('final', (t, info) => events.push({ kind: 'f', words: t.map((w) => w.text), endpoint: info.endpoint, ms: t.map((w) => w.start_ms) }));
      // Three bursts 1 s apart (each a pause), then one more and finalize before its pause ends, then the end.
      const t = toneBursts(3, { gapMs: 1000, tailMs: 60 });
      for await (const c of pieces(t.pcm16, 640)) await session.write(c);
      const paused = events.filter((e) => e.kind === 'f');
      expect(paused.map((e) => e.words)).toEqual([['yes'], ['yes']]);
      expect(paused.every((e) => e.endpoint)).toBe(true);
      // Each word is timed at the end of its burst (this model names a burst once it has heard all of it).
      paused.forEach((e, i) => expect(Math.abs(e.ms[0]! - t.bursts[i]!.endMs)).toBeLessThanOrEqual(100));
      expect(events.some((e) => e.kind === 'p')).toBe(true);
      await session.finalize();
      expect(events.filter((e) => e.kind === 'f').map((e) => [e.words, e.endpoint])).toEqual([
        [['yes'], true],
        [['yes'], true],
        [['yes'], false],
      ]);
      expect(session.audioMs).toBe(t.durationMs);
      // After a finalize the session goes on, on the same clock.
      const more = toneBursts(1, { leadMs: 300, tailMs: 300 });
      for await (const c of pieces(more.pcm16, 640)) await session.write(c);
      await session.end();
      const last = events.filter((e) => e.kind === 'f').at(-1)!;
      expect(last.words).toEqual(['yes']);
      expect(Math.abs(last.ms[0]! - (t.durationMs + more.bursts[0]!.endMs))).toBeLessThanOrEqual(100);
      expect(session.closed).toBe(true);
      // A file through the streaming model: its speech segments decoded (energy VAD: these tones are no speech to Silero).
      const words = await recognizer.transcribe(pieces(toneBursts(4, { gapMs: 800 }).pcm16));
      expect(words.map((w) => w.text)).toEqual(['yes', 'yes', 'yes', 'yes']);
    } finally {
      await engine.close();
    }
  }, 60_000);
});

it('a model sherpa-onnx cannot use is refused with its reason, and the process goes on', async () => {
  // Valid ONNX without the metadata a NeMo CTC model needs: loaded in this process, sherpa-onnx would exit(255).
  const dir = modelFolder('broken', (d) => {
    writeCtcModelWithoutMetadata(d);
  });
  const engine = new compiled.SherpaEngine([readManifest(dir)], { vad: { backend: 'energy' } });
  await expect(engine.load('broken-v1')).rejects.toThrow(/broken-v1 .* could not be loaded by sherpa-onnx \(exit 255\).*vocab_size/);
  await engine.close();
}, 60_000);
