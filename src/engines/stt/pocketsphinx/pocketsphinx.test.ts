// The pocketsphinx engine end to end: real addon, real worker threads, real model, speech synthesized with flite
// and one human recording from pocketsphinx-testdata.
//
// Long files, segmentation and scheduling: scheduling.test.ts.
//
// WER thresholds. Measured on this machine (batch mode, Debian pocketsphinx-en-us): 30 flite clips of six sentences
// in five voices had an overall WER of 0.076 and a worst clip of 0.45 (the 8 kHz "kal" voice; the 16 kHz voices used
// here stayed ≤ 0.20 per clip). The asserted limits (0.25 overall, 0.5 per clip, 0.5 for the live stream) leave room
// for pocketsphinx's sensitivity to timing jitter without letting a broken pipeline (WER near 1) pass. The librivox
// recording scores about 0.2 against its reference; its limit is deliberately loose (0.6).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuWhile } from '../../../../test/harness.js';
import { decodeToBuffer } from '../../../audio/decode.js';
import { EngineUnavailableError, type Token } from '../interface.js';
import { wordErrorRate } from '../wer.js';
import { PocketsphinxEngine, type PocketsphinxRecognizer } from './engine.js';
import { DEBIAN_MODEL_DIR } from './options.js';

const run = promisify(execFile);
const BYTES_PER_MS = 32;
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

const CLIPS: { voice: string; text: string }[] = [
  { voice: 'slt', text: 'the quick brown fox jumps over the lazy dog' },
  { voice: 'kal16', text: 'please call me back when you get home tonight' },
  { voice: 'awb', text: 'i would like to book a table for two people' },
  { voice: 'rms', text: 'we will meet at the station at nine in the morning' },
];

let dir: string;
let engine: PocketsphinxEngine;
let recognizer: PocketsphinxRecognizer;
const pcm: Buffer[] = [];
/** Three sentences separated by 0.8 s of silence, about 10 s. */
let long: Buffer;
let longText: string;

async function synthesize(voice: string, text: string, name: string): Promise<Buffer> {
  const wav = join(dir, `${name}.wav`);
  await run('flite', ['-voice', voice, '-t', text, '-o', wav]);
  return decodeToBuffer(wav); // resampled to 16 kHz mono s16le by ffmpeg
}

async function* chunked(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let off = 0; off < buf.length; off += size) yield buf.subarray(off, off + size);
}

function text(tokens: Token[]): string {
  return tokens.map((t) => t.text).join(' ');
}

function expectWellFormed(tokens: Token[], audioMs: number): void {
  let previousEnd = 0;
  for (const t of tokens) {
    expect(t.text).toMatch(/^[a-z'.-]+$/);
    expect(Number.isInteger(t.start_ms) && Number.isInteger(t.end_ms)).toBe(true);
    expect(t.start_ms).toBeGreaterThanOrEqual(previousEnd);
    expect(t.end_ms).toBeGreaterThan(t.start_ms);
    expect(t.end_ms).toBeLessThanOrEqual(Math.ceil(audioMs));
    expect(t.confidence).toBeGreaterThanOrEqual(0);
    expect(t.confidence).toBeLessThanOrEqual(1);
    previousEnd = t.end_ms;
  }
}

beforeAll(async () => {
  try {
    execFileSync('flite', ['-lv'], { stdio: 'ignore' });
  } catch {
    throw new Error('flite is not installed (Debian package flite): it synthesizes the test speech');
  }
  dir = await mkdtemp(join(tmpdir(), 'parlance-psphinx-'));
  pcm.push(...(await Promise.all(CLIPS.map((c, i) => synthesize(c.voice, c.text, `clip${i}`)))));
  const gap = Buffer.alloc(800 * BYTES_PER_MS);
  long = Buffer.concat([pcm[0]!, gap, pcm[1]!, gap, pcm[2]!, gap]);
  longText = CLIPS.slice(0, 3)
    .map((c) => c.text)
    .join(' ');
  engine = new PocketsphinxEngine({ poolSize: 2 });
  recognizer = await engine.load('en-us');
}, 120_000);

afterAll(async () => {
  await engine?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('pocketsphinx batch transcription', () => {
  it('recognises synthesized English with well-formed tokens', async () => {
    // Four requests on a pool of two: two wait for a free decoder.
    const results = await Promise.all(pcm.map((clip) => recognizer.transcribe(chunked(clip, 3001))));
    let errors = 0;
    let words = 0;
    results.forEach((tokens, i) => {
      expectWellFormed(tokens, pcm[i]!.length / BYTES_PER_MS);
      const w = wordErrorRate(CLIPS[i]!.text, text(tokens));
      console.info(`flite ${CLIPS[i]!.voice}: WER ${w.wer.toFixed(2)} "${text(tokens)}"`);
      expect(w.wer).toBeLessThanOrEqual(0.5);
      errors += w.wer * w.referenceWords;
      words += w.referenceWords;
    });
    console.info(`flite overall WER ${(errors / words).toFixed(3)}`);
    expect(errors / words).toBeLessThanOrEqual(0.25);
    expect(results.flat().some((t) => t.confidence < 1)).toBe(true); // real posteriors, not a constant
  }, 90_000);

  it('transcribes a human recording from pocketsphinx-testdata', async () => {
    const id = 'sense_and_sensibility_01_austen_64kb-0920';
    const reference = (await readFile(join(LIBRIVOX, 'transcription'), 'utf8'))
      .split('\n')
      .find((l) => l.includes(`(${id})`))!
      .replace(/<\/?s>|\(.*\)/g, '');
    const audio = await decodeToBuffer(join(LIBRIVOX, `${id}.wav`));
    const tokens = await recognizer.transcribe(chunked(audio, 8192));
    expectWellFormed(tokens, audio.length / BYTES_PER_MS);
    const w = wordErrorRate(reference, text(tokens));
    console.info(`librivox ${id}: WER ${w.wer.toFixed(2)} "${text(tokens)}"`);
    expect(w.wer).toBeLessThanOrEqual(0.6);
  }, 60_000);

  it('keeps the decoding off the event loop', async () => {
    let tokens: Token[] = [];
    const cpu = await cpuWhile(async () => (tokens = await recognizer.transcribe(chunked(long, 64 * 1024))));
    const audioMs = long.length / BYTES_PER_MS;
    console.info(`decoded ${(audioMs / 1000).toFixed(1)} s: main thread CPU ${cpu.mainMs} ms, other threads ${Math.round(cpu.otherMs)} ms`);
    expect(wordErrorRate(longText, text(tokens)).wer).toBeLessThanOrEqual(0.5);
    expectWellFormed(tokens, audioMs);
    // The decoders run on worker threads: the event loop's thread only feeds them audio and takes their tokens, a
    // small part of the work. A decode on it would hold the loop for the length of a native call, a whole utterance.
    // (CPU time, which a busy machine does not inflate as it does a timer's lateness.)
    expect(cpu.mainMs).toBeLessThan(cpu.otherMs / 5);
  }, 90_000);

  it('rejects on abort and gives the decoder back to the pool', async () => {
    const controller = new AbortController();
    async function* slow(): AsyncGenerator<Buffer> {
      yield long.subarray(0, 32_000);
      controller.abort(new Error('client went away'));
      yield long.subarray(32_000);
    }
    await expect(recognizer.transcribe(slow(), { signal: controller.signal })).rejects.toThrow('client went away');
    // Both decoders are usable afterwards.
    const again = await Promise.all([recognizer.transcribe(chunked(pcm[0]!, 4096)), recognizer.transcribe(chunked(pcm[3]!, 4096))]);
    expect(again.every((t) => t.length > 3)).toBe(true);
    expect(recognizer.stats()).toMatchObject({ size: 2, busy: 0, waiting: 0 });
  }, 60_000);

  it('returns no tokens for empty input and for silence', async () => {
    expect(await recognizer.transcribe(chunked(Buffer.alloc(0), 1))).toEqual([]);
    expect(await recognizer.transcribe(chunked(Buffer.alloc(1000 * BYTES_PER_MS), 3200))).toEqual([]);
    const empty = await recognizer.stream();
    await empty.end(); // an utterance with no audio at all
    expect(empty.audioMs).toBe(0);
    const quiet = await recognizer.stream();
    let events = 0;
    quiet.on('partial', () => events++).on('final', () => events++);
    for (let i = 0; i < 20; i++) await quiet.write(Buffer.alloc(100 * BYTES_PER_MS));
    await quiet.end();
    expect(events).toBe(0);
  }, 30_000);

  it('fails the transcription when the PCM source fails', async () => {
    async function* broken(): AsyncGenerator<Buffer> {
      yield long.subarray(0, 16_000);
      throw new Error('ffmpeg died');
    }
    await expect(recognizer.transcribe(broken())).rejects.toThrow('ffmpeg died');
  }, 30_000);
});

describe('pocketsphinx streaming', () => {
  it('emits partial results while audio arrives and final tokens at pauses and at the end', async () => {
    const session = await recognizer.stream();
    const partials: Token[][] = [];
    const finals: Token[][] = [];
    const endpoints: boolean[] = [];
    let finalsBeforeEnd = 0;
    let partialsBeforeEnd = 0;
    session.on('partial', (t) => partials.push(t));
    session.on('final', (t, info) => {
      finals.push(t);
      endpoints.push(info.endpoint);
    });
    const errors: Error[] = [];
    session.on('error', (e) => errors.push(e));
    for (let off = 0; off < long.length; off += 100 * BYTES_PER_MS) {
      await session.write(long.subarray(off, off + 100 * BYTES_PER_MS));
    }
    // The pauses already written end utterances by themselves: wait for their finals (the second pass runs at a lower
    // priority, so on a loaded machine they take a while), then look at what arrived before end().
    for (let i = 0; i < 600 && finals.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    partialsBeforeEnd = partials.length;
    finalsBeforeEnd = finals.length;
    expect(session.audioMs).toBe(Math.round(long.length / BYTES_PER_MS));
    await session.end();
    expect(session.closed).toBe(true);
    expect(errors).toEqual([]);

    expect(partialsBeforeEnd).toBeGreaterThan(0);
    for (const p of partials) expect(p.length).toBeGreaterThan(0);
    // The 0.8 s pauses end utterances by themselves (endpointing at 600 ms of silence).
    expect(finalsBeforeEnd).toBeGreaterThan(0);
    // Those are endpoints (finalize() and end() are not: see the next test).
    expect(endpoints.slice(0, finalsBeforeEnd).every(Boolean)).toBe(true);
    const all = finals.flat();
    expectWellFormed(all, long.length / BYTES_PER_MS); // also: every final token once, in time order
    const w = wordErrorRate(longText, text(all));
    console.info(`stream: ${partials.length} partials, ${finals.length} final batches, WER ${w.wer.toFixed(2)} "${text(all)}"`);
    expect(w.wer).toBeLessThanOrEqual(0.5);
    await expect(session.write(Buffer.alloc(2))).rejects.toThrow(/closed/);
  }, 90_000);

  it('finalize() turns everything heard so far into final tokens', async () => {
    const session = await recognizer.stream({ endpointSilenceMs: 0 });
    const finals: Token[][] = [];
    const endpoints: boolean[] = [];
    session.on('final', (t, info) => {
      finals.push(t);
      endpoints.push(info.endpoint);
    });
    for (let off = 0; off < pcm[0]!.length; off += 100 * BYTES_PER_MS) await session.write(pcm[0]!.subarray(off, off + 100 * BYTES_PER_MS));
    expect(finals).toHaveLength(0); // endpointing off: nothing final yet
    await session.finalize();
    expect(finals).toHaveLength(1);
    expect(endpoints).toEqual([false]); // a finalize is not an endpoint
    const firstMs = pcm[0]!.length / BYTES_PER_MS;
    expectWellFormed(finals[0]!, firstMs);
    await session.write(pcm[3]!);
    await session.end();
    expect(finals).toHaveLength(2);
    expect(endpoints).toEqual([false, false]);
    // The second utterance is timed from the start of the session, after the first.
    expect(finals[1]![0]!.start_ms).toBeGreaterThanOrEqual(Math.floor(firstMs));
    expectWellFormed(finals.flat(), firstMs + pcm[3]!.length / BYTES_PER_MS);
  }, 60_000);

  it('decodes only the speech of a live stream, with the same times and words', async () => {
    // 4 s of a microphone's noise floor, a sentence, 4 s of noise again: the decoder should hear about the sentence.
    const noise = (ms: number): Buffer => {
      const out = Buffer.alloc(ms * BYTES_PER_MS);
      for (let i = 0; i < out.length; i += 2) out.writeInt16LE(Math.round((Math.random() * 2 - 1) * 60), i);
      return out;
    };
    const sentence = pcm[1]!;
    const audio = Buffer.concat([noise(4000), sentence, noise(4000)]);
    const session = await recognizer.stream();
    const finals: Token[][] = [];
    session.on('final', (t) => finals.push(t));
    for (let off = 0; off < audio.length; off += 20 * BYTES_PER_MS) await session.write(audio.subarray(off, off + 20 * BYTES_PER_MS));
    await session.end();
    const sentenceMs = sentence.length / BYTES_PER_MS;
    expect(session.audioMs).toBe(Math.round(audio.length / BYTES_PER_MS));
    // The sentence, a pre-roll of at most 300 ms and the first 300 ms of the pause that ends it (+ a VAD frame either
    // side, and the VAD's hangover).
    expect(session.decodedMs).toBeGreaterThanOrEqual(sentenceMs - 200);
    expect(session.decodedMs).toBeLessThanOrEqual(sentenceMs + 300 + 300 + 2 * 32 + 200);
    const tokens = finals.flat();
    expectWellFormed(tokens, audio.length / BYTES_PER_MS);
    expect(tokens[0]!.start_ms).toBeGreaterThanOrEqual(4000 - 300);
    expect(tokens.at(-1)!.end_ms).toBeLessThanOrEqual(4000 + sentenceMs + 100);
    expect(wordErrorRate(CLIPS[1]!.text, text(tokens)).wer).toBeLessThanOrEqual(0.5);
  }, 60_000);

  it('abort() releases the decoder without results', async () => {
    const session = await recognizer.stream();
    let events = 0;
    session.on('final', () => events++);
    await session.write(pcm[1]!);
    session.abort();
    expect(session.closed).toBe(true);
    const tokens = await recognizer.transcribe(chunked(pcm[2]!, 8192));
    expect(tokens.length).toBeGreaterThan(3);
    expect(events).toBe(0);
  }, 60_000);
});

describe('pocketsphinx worker failure', () => {
  it('fails the session on a dead worker and replaces the worker', async () => {
    const session = await recognizer.stream();
    const errors: Error[] = [];
    session.on('error', (e) => errors.push(e));
    await session.write(pcm[0]!.subarray(0, 16_000));
    // Reach into the streaming pool (test only) and kill the thread that serves this session. (Another worker may
    // still be finishing the session aborted in the previous test, so match the channel exactly.)
    const pool = (recognizer as unknown as { streams: { workers: Set<{ worker: { terminate(): Promise<number> }; channel?: unknown }> } }).streams;
    const channel = (session as unknown as { channel: unknown }).channel;
    const serving = [...pool.workers].find((w) => w.channel === channel)!;
    await serving.worker.terminate();
    await expect(session.end()).rejects.toThrow(/pocketsphinx worker failed/);
    expect(errors).toHaveLength(1);
    expect(session.closed).toBe(true);
    // The dead worker's slot is free (the session aborted by the previous test may take a moment to hand its
    // decoder back while warm spares load beside it).
    for (let i = 0; i < 100 && recognizer.stats().streams.active > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(recognizer.stats().streams.active).toBe(0);
    // The next session gets a working decoder.
    const next = await recognizer.stream();
    const finals: Token[] = [];
    next.on('final', (t) => finals.push(...t));
    await next.write(pcm[1]!);
    await next.end();
    expect(finals.length).toBeGreaterThan(3);
    // (A batch decoder that dies fails only its transcription: scheduling.test.ts.)
  }, 60_000);
  it('closing the engine in the middle of a decode rejects the work and leaves the process alive', async () => {
    const other = new PocketsphinxEngine({ poolSize: 1 });
    const rec = await other.load('en-us');
    const pending = rec.transcribe(chunked(Buffer.concat([long, long]), 64 * 1024)).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300)); // the worker is inside a native decode call now
    await other.close();
    expect(await pending).toBeInstanceOf(Error);
    expect(String(await pending)).toMatch(/engine closed/);
    await expect(other.load('en-us')).resolves.toBeDefined(); // a closed engine can load again
    await other.close();
  }, 60_000);
});

describe('pocketsphinx set-up errors', () => {
  it('names missing model files and the package that provides them', async () => {
    const broken = new PocketsphinxEngine({ poolSize: 1, models: { 'en-us': { hmm: join(dir, 'no-such-hmm'), dict: join(dir, 'none.dict') } } });
    const err = await broken.load('en-us').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineUnavailableError);
    expect((err as Error).message).toContain(join(dir, 'no-such-hmm'));
    expect((err as Error).message).toContain(join(dir, 'none.dict'));
    expect((err as Error).message).toContain('pocketsphinx-en-us');
    await broken.close();
  });

  it('passes on what pocketsphinx says about an unreadable model', async () => {
    const badLm = join(dir, 'bad.lm.bin');
    await writeFile(badLm, 'not a language model\n');
    const broken = new PocketsphinxEngine({ poolSize: 1, models: { 'en-us': { lm: badLm } } });
    const err = await broken.load('en-us').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineUnavailableError);
    expect((err as Error).message).toMatch(/could not load model 'en-us'.*bad\.lm\.bin/s);
    // A failed load is not cached: the next call tries again (and fails the same way here).
    await expect(broken.load('en-us')).rejects.toThrow(EngineUnavailableError);
    await broken.close();
  }, 30_000);

  it('rejects unknown models and a missing addon clearly', async () => {
    await expect(engine.load('klingon')).rejects.toThrow(/no model 'klingon'/);
    const noAddon = new PocketsphinxEngine({ poolSize: 1, addonPath: join(dir, 'missing.node') });
    await expect(noAddon.load('en-us')).rejects.toThrow(/npm run build:native/);
    expect(DEBIAN_MODEL_DIR).toBe('/usr/share/pocketsphinx/model/en-us');
  });

  it('loads each model once', async () => {
    expect(await engine.load('en-us')).toBe(recognizer);
  });
});

describe('pocketsphinx from the compiled dist/ tree', () => {
  it('runs its worker as plain JavaScript under plain Node', async () => {
    // test/global-setup.ts compiles dist/ before the tests run.
    const entry = resolve('dist/engines/stt/pocketsphinx/engine.js');
    const clip = join(dir, 'dist-clip.raw');
    await writeFile(clip, pcm[0]!);
    const script = `
      const { PocketsphinxEngine } = await import(${JSON.stringify(new URL(`file://${entry}`).href)});
      const { readFileSync } = await import('node:fs');
      const engine = new PocketsphinxEngine({ poolSize: 1 });
      const rec = await engine.load('en-us');
      const pcm = readFileSync(${JSON.stringify(clip)});
      const tokens = await rec.transcribe((async function* () { yield pcm; })());
      await engine.close();
      console.log(JSON.stringify(tokens));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
    const tokens = JSON.parse(stdout) as Token[];
    expect(wordErrorRate(CLIPS[0]!.text, text(tokens)).wer).toBeLessThanOrEqual(0.5);
  }, 90_000);
});
