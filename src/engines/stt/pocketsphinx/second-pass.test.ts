// Two-pass live finals (second-pass.ts) with the real addon, worker threads and model: real human recordings from
// pocketsphinx-testdata streamed through live sessions give final tokens as accurate as file transcription; finals
// go out once and in order while partial results keep showing what is not final yet; and when the second pass is
// late or over budget, the streaming decoder's words become final instead, counted.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinalInfo, Recognizer, StreamingSession, StreamOptions, Token } from '../interface.js';
import { wordErrorRate } from '../wer.js';
import { findAddon } from './addon.js';
import { BatchPool } from './batch-pool.js';
import { PocketsphinxEngine } from './engine.js';
import { BASE_DECODER_ARGS, CUT_AT_PAUSE, defaultModelPaths } from './options.js';
import { SecondPassPool } from '../second-pass.js';
import { batchSecondPass } from './second-pass.js';
import { testdataClips, werOf } from '../../../../test/real-speech.js';

const execFileP = promisify(execFile);
const CHUNK = 640; // 20 ms

interface Clip {
  reference: string;
  pcm: Buffer;
}

let clips: Clip[];
const engines: PocketsphinxEngine[] = [];

/** An engine whose second pass (if on) covers every utterance unless `coveredMs` says otherwise. */
async function load(options: ConstructorParameters<typeof PocketsphinxEngine>[0]): Promise<Recognizer> {
  const secondPass = options?.secondPass === false ? false : { coveredMs: Number.POSITIVE_INFINITY, ...options?.secondPass };
  const engine = new PocketsphinxEngine({ poolSize: 2, warmStreams: 0, ...options, secondPass });
  engines.push(engine);
  return engine.load('en-us');
}

/** A faint noise floor (about -60 dBFS), deterministic. */
function noise(ms: number, seed: number): Buffer {
  const out = Buffer.alloc(ms * 32);
  let x = seed;
  for (let i = 0; i < out.length; i += 2) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.writeInt16LE(Math.round(((x / 0x7fffffff) * 2 - 1) * 40), i);
  }
  return out;
}

async function* chunks(pcm: Buffer): AsyncIterable<Uint8Array> {
  for (let off = 0; off < pcm.length; off += CHUNK) yield pcm.subarray(off, off + CHUNK);
}

interface Streamed {
  finals: Token[][];
  /** Each final's info, in the same order. */
  infos: FinalInfo[];
  /** Every event in order: 'p' partial, 'f' final, with its tokens. */
  events: { kind: 'p' | 'f'; tokens: Token[] }[];
  session: StreamingSession;
}

async function stream(recognizer: Recognizer, pcm: Buffer, options: StreamOptions = {}): Promise<Streamed> {
  const session = await recognizer.stream(options);
  const out: Streamed = { finals: [], infos: [], events: [], session };
  session.on('partial', (t) => out.events.push({ kind: 'p', tokens: t }));
  session.on('final', (t, info) => {
    out.finals.push(t);
    out.infos.push(info);
    out.events.push({ kind: 'f', tokens: t });
  });
  for await (const c of chunks(pcm)) await session.write(c);
  await session.end();
  return out;
}

const words = (tokens: Token[]) => tokens.map((t) => t.text).join(' ');

beforeAll(async () => {
  const list = testdataClips();
  if (list.length < 10) throw new Error('pocketsphinx-testdata is not installed (scripts/debian-packages.txt)');
  clips = await Promise.all(
    list.map(async (c) => {
      const { stdout } = await execFileP('ffmpeg', ['-v', 'error', '-i', c.file, '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], { encoding: 'buffer' });
      return { reference: c.reference, pcm: stdout };
    }),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
});

describe('two-pass live finals', () => {
  it('real recordings streamed live get final tokens as accurate as their file transcription', async () => {
    // A generous wait: this test is about the words, not about a loaded machine's timing.
    const recognizer = await load({ secondPass: { waitMs: 120_000 } });
    const asyncTexts = await Promise.all(clips.map(async (c) => words(await recognizer.transcribe(chunks(c.pcm)))));
    const live: string[] = [];
    let decoded = 0;
    for (const [i, c] of clips.entries()) {
      const r = await stream(recognizer, Buffer.concat([noise(500, i + 1), c.pcm, noise(500, i + 50)]));
      live.push(words(r.finals.flat()));
      expect(r.session.secondPass).toMatchObject({ skipped: 0, late: 0, failed: 0 });
      decoded += r.session.secondPass!.decoded;
    }
    expect(decoded).toBeGreaterThanOrEqual(clips.length);
    const fileScore = werOf(clips.map((c, i) => ({ reference: c.reference, text: asyncTexts[i]! })));
    const liveScore = werOf(clips.map((c, i) => ({ reference: c.reference, text: live[i]! })));
    console.info(`testdata: async ${fileScore.errors}/${fileScore.words} word errors, live two-pass ${liveScore.errors}/${liveScore.words}`);
    // Within 5 points of the file transcription (one-pass finals were 17 points worse on these clips).
    expect(liveScore.errors / liveScore.words).toBeLessThanOrEqual(fileScore.errors / fileScore.words + 0.05);
  }, 300_000);

  it('sends each final token once, in time order, while partials show everything not final yet', async () => {
    const recognizer = await load({ secondPass: { waitMs: 120_000 } });
    // Five real utterances with pauses of 1 s: endpoints close them one by one.
    const audio = Buffer.concat(
      clips
        .slice(0, 5)
        .flatMap((c, i) => [noise(1000, i + 7), c.pcm])
        .concat([noise(1000, 3)]),
    );
    const r = await stream(recognizer, audio);
    expect(r.finals.length).toBeGreaterThanOrEqual(3);
    let lastFinalEnd = 0;
    for (const e of r.events) {
      // Partials and finals never reach back into audio already final, and each is in time order.
      expect(e.tokens[0]?.start_ms ?? lastFinalEnd).toBeGreaterThanOrEqual(lastFinalEnd);
      for (let i = 1; i < e.tokens.length; i++) expect(e.tokens[i]!.start_ms).toBeGreaterThanOrEqual(e.tokens[i - 1]!.end_ms);
      if (e.kind === 'f' && e.tokens.length) lastFinalEnd = e.tokens.at(-1)!.end_ms;
      if (e.kind === 'p') expect(e.tokens.length).toBeGreaterThan(0);
    }
    expect(r.session.secondPass!.decoded).toBe(r.finals.length);
    // Each utterance that ended at a pause was decoded again from the pause on, not from its endpoint.
    expect(r.session.secondPass!.early).toBe(r.finals.length);
    const all = r.finals.flat();
    expect(all.at(-1)!.end_ms).toBeLessThanOrEqual(Math.ceil(audio.length / 32));
    expect(
      wordErrorRate(
        clips
          .slice(0, 5)
          .map((c) => c.reference)
          .join(' '),
        words(all),
      ).wer,
    ).toBeLessThan(0.5);
  }, 120_000);

  it('with a bound on non-final tokens, ends utterances at pauses inside speech; each pause decides its endpoint', async () => {
    // The default profile (every 100 ms pause), here in utterances a second pass decodes too: the read speech of these
    // clips has a few between its phrases, none of an endpoint's length.
    const recognizer = await load({ secondPass: { waitMs: 120_000 }, cutAtPause: { ...CUT_AT_PAUSE, inSecondPass: true } });
    const audio = Buffer.concat(
      clips
        .slice(2, 4)
        .flatMap((c, i) => [noise(1000, i + 31), c.pcm])
        .concat([noise(1000, 39)]),
    );
    const whole = await stream(recognizer, audio);
    // With a bound (the server always gives one), utterances end at their pauses.
    const cut = await stream(recognizer, audio, { maxNonFinalMs: 1000 });
    expect(cut.finals.length).toBeGreaterThan(whole.finals.length);
    // The pauses that were cuts and not endpoints: speech went on after them.
    expect(cut.infos.filter((i) => !i.endpoint).length).toBeGreaterThanOrEqual(1);
    // The same endpoints as whole utterances give (the noise between and after the clips), each once, decided after a
    // cut or sent on its own after one.
    expect(whole.infos.every((i) => i.endpoint)).toBe(true);
    expect(cut.infos.filter((i) => i.endpoint)).toHaveLength(whole.infos.length);
    expect(cut.infos.at(-1)!.endpoint).toBe(true);
    // Finals once and in time order, every one with words through the second pass.
    const all = cut.finals.flat();
    for (let i = 1; i < all.length; i++) expect(all[i]!.start_ms).toBeGreaterThanOrEqual(all[i - 1]!.end_ms);
    expect(cut.session.secondPass).toMatchObject({ decoded: cut.finals.filter((f) => f.length).length, late: 0, skipped: 0, failed: 0 });
  }, 120_000);

  it('by default cuts at pauses only the utterances no second pass decodes: those it decodes stay whole', async () => {
    // A clip with a pause of 100 ms between its phrases, twice: the first time its utterance opens within the first
    // second of decoded audio (a second pass decodes it), the second time after it.
    const audio = Buffer.concat([noise(1000, 41), clips[2]!.pcm, noise(1000, 42), clips[2]!.pcm, noise(1000, 43)]);
    const secondPass = { waitMs: 120_000, coveredMs: 1000 };
    const gap = 1000 + clips[2]!.pcm.length / 32 + 500;
    const finals = (r: Streamed, first: boolean) => r.finals.filter((f) => f.length && f[0]!.start_ms < gap === first);
    const count = (r: Streamed, first: boolean) => finals(r, first).length;
    const whole = await stream(await load({ secondPass, cutAtPause: false }), audio, { maxNonFinalMs: 1000 });
    const cut = await stream(await load({ secondPass }), audio, { maxNonFinalMs: 1000 });
    expect(count(cut, true)).toBe(count(whole, true));
    expect(count(cut, false)).toBeGreaterThan(count(whole, false));
    expect(words(finals(cut, true).flat())).toBe(words(finals(whole, true).flat()));
    expect(cut.session.secondPass!.decoded).toBe(count(whole, true));
  }, 120_000);

  it('a late or over-budget second pass leaves the streaming words final, and says so', async () => {
    const audio = Buffer.concat([noise(500, 11), clips[1]!.pcm, noise(1000, 12), clips[4]!.pcm, noise(500, 13)]);
    const onePass = await stream(await load({ secondPass: false }), audio);
    expect(onePass.session.secondPass).toBeUndefined();
    const late = await stream(await load({ secondPass: { waitMs: 1 } }), audio);
    const overBudget = await stream(await load({ secondPass: { budgetMs: 1 } }), audio);
    expect(onePass.finals.length).toBeGreaterThan(0);
    // The streaming decoder's own words, unchanged (decoding is deterministic).
    expect(words(late.finals.flat())).toBe(words(onePass.finals.flat()));
    expect(words(overBudget.finals.flat())).toBe(words(onePass.finals.flat()));
    expect(late.session.secondPass).toEqual({ decoded: 0, early: 0, skipped: 0, late: onePass.finals.length, failed: 0 });
    expect(overBudget.session.secondPass).toEqual({ decoded: 0, early: 0, skipped: onePass.finals.length, late: 0, failed: 0 });
  }, 120_000);

  it("covers only the utterances that open within the session's first coveredMs of audio; later ones keep their streaming words", async () => {
    const audio = Buffer.concat([noise(500, 31), clips[3]!.pcm, noise(1000, 32), clips[5]!.pcm, noise(1000, 33)]);
    const onePass = await stream(await load({ secondPass: false }), audio);
    expect(onePass.finals.length).toBeGreaterThanOrEqual(2);
    const none = await stream(await load({ secondPass: { waitMs: 120_000, coveredMs: 0 } }), audio);
    expect(none.session.secondPass).toEqual({ decoded: 0, early: 0, skipped: 0, late: 0, failed: 0 });
    expect(none.finals.map(words)).toEqual(onePass.finals.map(words));
    // The first clip's utterance opens within the first second of audio, the second's after more than that.
    const first = await stream(await load({ secondPass: { waitMs: 120_000, coveredMs: 1000 } }), audio);
    const firstEnd = onePass.finals[0]!.at(-1)!.end_ms;
    const later = (r: Streamed) => words(r.finals.flat().filter((t) => t.start_ms > firstEnd + 500));
    expect(first.session.secondPass!.decoded).toBeGreaterThanOrEqual(1);
    expect(first.session.secondPass!.decoded).toBeLessThan(first.finals.length);
    expect(later(first)).toBe(later(onePass));
  }, 120_000);

  it('with settleMs, words far enough behind the audio turn final before their utterance ends where no second pass decodes', async () => {
    // Two real utterances separated by a pause: each ends at an endpoint.
    const audio = Buffer.concat([noise(500, 41), clips[3]!.pcm, noise(1000, 42), clips[5]!.pcm, noise(1000, 43)]);
    const atEnd = await stream(await load({ secondPass: false }), audio);
    expect(atEnd.finals.length).toBe(2);
    const settling = await stream(await load({ secondPass: false, settleMs: 600 }), audio);
    // Finals before each endpoint: words out while their utterance went on, not at its end.
    expect(settling.infos.filter((i) => !i.endpoint).length).toBeGreaterThanOrEqual(2);
    expect(settling.infos.filter((i) => i.endpoint).length).toBe(2);
    // Each word once, in time order. Settled words are the running hypothesis's, not always those the decoder finds
    // when the utterance ends (why settling is off by default: LIVE_SETTLE_MS), but about as many.
    const all = settling.finals.flat();
    for (let i = 1; i < all.length; i++) expect(all[i]!.start_ms).toBeGreaterThanOrEqual(all[i - 1]!.end_ms);
    const atEndWords = atEnd.finals.flat().length;
    expect(all.length).toBeGreaterThanOrEqual(0.7 * atEndWords);
    expect(all.length).toBeLessThanOrEqual(1.3 * atEndWords);
    // Where the second pass decodes (the first utterance, within the first second), words wait for it.
    const covered = await stream(await load({ secondPass: { waitMs: 120_000, coveredMs: 1000 }, settleMs: 600 }), audio);
    expect(covered.session.secondPass).toMatchObject({ decoded: 1, late: 0, skipped: 0 });
    const firstEnd = covered.finals.findIndex((_, i) => covered.infos[i]!.endpoint);
    expect(firstEnd).toBe(0);
    expect(covered.finals.length).toBeGreaterThanOrEqual(3);
  }, 120_000);

  it('a finalization that cannot wait makes the streaming words final at once; one that can gets the second pass', async () => {
    // Speech up to the end of the audio: finalize() closes the last utterance.
    const audio = Buffer.concat([noise(500, 21), clips[2]!.pcm]);
    const finalizeWith = async (recognizer: Recognizer, options?: { waitMs: number }) => {
      const session = await recognizer.stream();
      const finals: Token[][] = [];
      session.on('final', (t) => finals.push(t));
      for await (const c of chunks(audio)) await session.write(c);
      await session.finalize(options);
      const atFinalize = finals.length;
      await session.end();
      return { finals, atFinalize, report: session.secondPass };
    };
    const onePass = await finalizeWith(await load({ secondPass: false }));
    const recognizer = await load({ secondPass: { waitMs: 120_000 } });
    const hurried = await finalizeWith(recognizer, { waitMs: 0 });
    const waited = await finalizeWith(recognizer);
    expect(onePass.atFinalize).toBeGreaterThan(0);
    // Every final was out when finalize() resolved; the one it closed is the streaming decoder's, counted late.
    expect(hurried.atFinalize).toBe(hurried.finals.length);
    expect(hurried.report!.late).toBeGreaterThanOrEqual(1);
    expect(hurried.report!.decoded + hurried.report!.late).toBe(hurried.finals.length);
    expect(words(hurried.finals.at(-1)!)).toBe(words(onePass.finals.at(-1)!));
    expect(waited.report).toMatchObject({ late: 0, skipped: 0, failed: 0 });
    expect(waited.report!.decoded).toBe(waited.finals.length);
  }, 120_000);

  it('an utterance that could not be decoded in time behind the queued audio is skipped at once', async () => {
    const batch = new BatchPool({ addonPath: findAddon(), model: defaultModelPaths(), decoderArgs: { ...BASE_DECODER_ARGS } }, { size: 1 });
    await batch.start();
    try {
      const pcm = (c: Clip) => new Int16Array(c.pcm.buffer.slice(c.pcm.byteOffset, c.pcm.byteOffset + c.pcm.length));
      // A 100 ms wait: nothing queued behind a few seconds of audio can make it (twice that, as a margin).
      const hurried = new SecondPassPool(batchSecondPass(batch), { budgetMs: 1e9, waitMs: 100 });
      // Nothing queued: decoded whatever the pace (and the pace is learnt).
      expect(await hurried.decode(0, pcm(clips[0]!))!.tokens).not.toHaveLength(0);
      const first = hurried.decode(0, pcm(clips[1]!));
      expect(first).toBeDefined();
      expect(hurried.decode(0, pcm(clips[2]!))).toBeUndefined();
      await first!.tokens;
      // Nothing queued again: decoded.
      const again = hurried.decode(0, pcm(clips[2]!));
      expect(again).toBeDefined();
      await again!.tokens;
      // With time to wait, the same queue is accepted.
      const patient = new SecondPassPool(batchSecondPass(batch), { budgetMs: 1e9, waitMs: 60_000 });
      await patient.decode(0, pcm(clips[0]!))!.tokens;
      const jobs = [patient.decode(0, pcm(clips[1]!)), patient.decode(0, pcm(clips[2]!))];
      expect(jobs.every((j) => j !== undefined)).toBe(true);
      await Promise.all(jobs.map((j) => j!.tokens));
    } finally {
      await batch.close();
    }
  }, 120_000);
});
