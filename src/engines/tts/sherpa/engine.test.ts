// Speech synthesis with a model brought through sherpa-onnx, on a tiny Piper VITS model built at test time whose
// output is known (test/fixtures/sherpa-models.ts): every phoneme id is 40 ms of tone, pitched higher for speaker 1.
// Sentences are synthesized one by one, from sources (in-process) and compiled (worker threads, the model checked in
// a child process first); a model sherpa-onnx cannot use is refused with a reason, not a dead process.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../../../../test/harness.js';
import { TONE_VITS, writeToneVitsModel, writeVitsModelWithoutMetadata } from '../../../../test/fixtures/sherpa-models.js';
import { WorkGate } from '../../../lib/work-gate.js';
import { MANIFEST_FILE, readManifest } from '../../model-dir/manifest.js';
import type { SynthesisChunk } from '../interface.js';
import * as source from './engine.js';

let root: string;
let compiled: typeof source;

beforeAll(async () => {
  root = tempDir('sherpa-tts-');
  const dist = path.join(ROOT, 'dist', 'engines', 'tts', 'sherpa', 'engine.js');
  if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  compiled = (await import(pathToFileURL(dist).href)) as typeof source;
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A model folder with a manifest; `write` puts the model files in. */
function modelFolder(name: string, manifest: Record<string, unknown>, write: (dir: string) => void): string {
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
  return dir;
}

async function collect(chunks: AsyncIterable<SynthesisChunk>): Promise<SynthesisChunk[]> {
  const out: SynthesisChunk[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

const samplesOf = (c: SynthesisChunk): number => c.pcm.length / 2;
function zeroCrossings(pcm: Buffer): number {
  let n = 0;
  for (let i = 2; i < pcm.length; i += 2) if (pcm.readInt16LE(i - 2) < 0 !== pcm.readInt16LE(i) < 0) n++;
  return n;
}
function peak(pcm: Buffer): number {
  let m = 0;
  for (let i = 0; i < pcm.length; i += 2) m = Math.max(m, Math.abs(pcm.readInt16LE(i)));
  return m;
}

async function* pieces(...parts: string[]): AsyncGenerator<string> {
  for (const p of parts) {
    await new Promise((r) => setTimeout(r, 5));
    yield p;
  }
}

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const LONG = 'Hello world, this is a longer sentence.';

describe('a sherpa-onnx VITS model', () => {
  let one: string;
  let two: string;
  beforeAll(() => {
    one = modelFolder('tone', { name: 'Tone test voice' }, (d) => writeToneVitsModel(d));
    two = modelFolder('tone-two', { voices: { Low: 0, High: 1 } }, (d) => writeToneVitsModel(d, { sampleRate: 16000, numSpeakers: 2 }));
  });

  describe.each([
    ['from sources (in-process)', () => source],
    ['compiled (worker threads, model checked in a child first)', () => compiled],
  ])('%s', (_how, impl) => {
    it('reads the rate and speakers; the default voice is named after the model', async () => {
      const engine = await new (impl().SherpaTtsEngine)(readManifest(one)).init();
      try {
        expect(engine.sampleRate).toBe(22050);
        expect(engine.numSpeakers).toBe(1);
        expect(engine.speakers).toEqual([{ name: 'tone', sid: 0 }]);
        expect(engine.voices).toEqual([{ id: '0', gender: 'neutral', sampleRate: 22050 }]);
        expect(engine.languages).toEqual([{ code: 'en', name: 'English' }]);
        expect(await engine.available()).toBe(true);
      } finally {
        await engine.close();
      }
    }, 60_000);

    it('speaks sentence by sentence, in order, s16le at the model rate; longer text is longer audio; speed 2 is half as long', async () => {
      const engine = await new (impl().SherpaTtsEngine)(readManifest(one), { concurrency: 2 }).init();
      try {
        const slot = (22050 * TONE_VITS.idMs) / 1000;
        const chunks = await collect(engine.synthesize(`Hi. ${LONG} Bye now.`, '0', 'en'));
        expect(chunks.map((c) => c.text)).toEqual(['Hi.', LONG, 'Bye now.']);
        for (const c of chunks) {
          expect(c.sampleRate).toBe(22050);
          expect(samplesOf(c) % slot).toBe(0);
          expect(peak(c.pcm) / 32767).toBeCloseTo(TONE_VITS.amplitude, 2);
        }
        expect(samplesOf(chunks[1]!)).toBeGreaterThan(3 * samplesOf(chunks[0]!));
        // Each sentence's audio is what that sentence alone gives.
        const [hi] = await collect(engine.synthesize('Hi.', '0', 'en'));
        expect(hi!.pcm.equals(chunks[0]!.pcm)).toBe(true);
        // Streamed text (as over the WebSocket) is cut at the same sentence ends.
        const streamed = await collect(engine.synthesize(pieces('Hi', '. Hello world, this', ' is a longer sentence.', ' Bye now.'), '0', 'en'));
        expect(streamed.map((c) => c.text)).toEqual(chunks.map((c) => c.text));
        expect(streamed.map(samplesOf)).toEqual(chunks.map(samplesOf));

        const [normal] = await collect(engine.synthesize(LONG, '0', 'en'));
        const [fast] = await collect(engine.synthesize(LONG, '0', 'en', { speed: 2 }));
        const [slow] = await collect(engine.synthesize(LONG, '0', 'en', { speed: 0.5 }));
        expect(samplesOf(fast!)).toBe(samplesOf(normal!) / 2);
        expect(samplesOf(slow!)).toBe(samplesOf(normal!) * 2);

        // Two requests at once, each on its own thread, each getting its own sentences.
        const [a, b] = await Promise.all([collect(engine.synthesize('Hi. Bye now.', '0', 'en')), collect(engine.synthesize(LONG, '0', 'en'))]);
        expect(a.map((c) => c.text)).toEqual(['Hi.', 'Bye now.']);
        expect(b[0]!.pcm.equals(normal!.pcm)).toBe(true);
      } finally {
        await engine.close();
      }
    }, 60_000);

    it('speaks each voice of the manifest with its speaker id: the same length, speaker 1 pitched higher', async () => {
      const engine = await new (impl().SherpaTtsEngine)(readManifest(two)).init();
      try {
        expect(engine.speakers).toEqual([
          { name: 'Low', sid: 0 },
          { name: 'High', sid: 1 },
        ]);
        expect(engine.voices.map((v) => v.id)).toEqual(['0', '1']);
        const [low] = await collect(engine.synthesize('Hello world.', '0', 'en'));
        const [high] = await collect(engine.synthesize('Hello world.', '1', 'en'));
        expect(low!.sampleRate).toBe(16000);
        expect(samplesOf(high!)).toBe(samplesOf(low!));
        expect(zeroCrossings(high!.pcm)).toBeGreaterThan(zeroCrossings(low!.pcm) * 1.1);
        await expect(collect(engine.synthesize('Hello.', '2', 'en'))).rejects.toThrow(/no speaker "2"/);
      } finally {
        await engine.close();
      }
    }, 60_000);

    it('stops on abort: before the start, between sentences, and while a sentence waits for the synthesis gate', async () => {
      const gate = new WorkGate(1);
      const engine = await new (impl().SherpaTtsEngine)(readManifest(one), { gate }).init();
      try {
        const before = new AbortController();
        before.abort(new Error('gone already'));
        await expect(collect(engine.synthesize('Hi.', '0', 'en', { signal: before.signal }))).rejects.toThrow('gone already');

        const ac = new AbortController();
        const it = engine.synthesize('One. Two. Three. Four.', '0', 'en', { signal: ac.signal })[Symbol.asyncIterator]();
        expect((await it.next()).value?.text).toBe('One.');
        ac.abort(new Error('client left'));
        await expect(it.next()).rejects.toThrow('client left');
        expect(gate.running + gate.waiting).toBe(0);

        // The node's gate is busy: the sentence waits (no audio), then an abort ends the wait at once.
        const held = deferred();
        const holder = gate.run(() => held.promise);
        const waiting = new AbortController();
        const pending = collect(engine.synthesize('Hi.', '0', 'en', { signal: waiting.signal }));
        pending.catch(() => undefined);
        await new Promise((r) => setTimeout(r, 300));
        expect(gate.waiting).toBe(1);
        waiting.abort(new Error('stopped while waiting'));
        await expect(pending).rejects.toThrow('stopped while waiting');
        expect(gate.waiting).toBe(0);
        // Once the gate frees, sentences run again.
        const next = collect(engine.synthesize('Hi.', '0', 'en'));
        held.resolve();
        await holder;
        expect((await next).map((c) => c.text)).toEqual(['Hi.']);
      } finally {
        await engine.close();
      }
    }, 60_000);
  });

  it('refuses a manifest voice whose speaker id the model does not have', async () => {
    const dir = modelFolder('tone-three', { voices: { A: 0, B: 1, C: 3 } }, (d) => writeToneVitsModel(d, { numSpeakers: 2 }));
    const engine = new compiled.SherpaTtsEngine(readManifest(dir));
    await expect(engine.init()).rejects.toThrow(
      /tone-three-v1 .* names speaker 3 for voice "C", but the model has 2 speakers \(0 to 1\) \(correct "voices" in parlance-model\.json\)/,
    );
    expect(await engine.available()).toBe(false);
    await expect(collect(engine.synthesize('Hi.', '0', 'en'))).rejects.toThrow(/has not been checked/);
  }, 60_000);

  it('a model sherpa-onnx cannot use is refused with its reason, and the process goes on', async () => {
    // Valid ONNX shaped like a Piper VITS model, but without the metadata sherpa reads: in-process, sherpa-onnx would exit(255).
    const dir = modelFolder('broken', {}, (d) => writeVitsModelWithoutMetadata(d));
    const engine = new compiled.SherpaTtsEngine(readManifest(dir));
    await expect(engine.init()).rejects.toThrow(
      /^TTS model broken-v1 \(.*broken\) could not be loaded by sherpa-onnx \(exit 255\): 'sample_rate' does not exist in the metadata \(check that its files are a vits model as parlance-model\.json says\)$/,
    );
    expect(await engine.available()).toBe(false);
    await engine.close();
  }, 60_000);
});
