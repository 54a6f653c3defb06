// Language identification and translation, black-box: a real server with the installed apertium pairs, real
// pocketsphinx on flite speech, over REST, the real-time WebSocket (`ws`) and the official SDK (@soniox/node;
// docs/wire-compat.md, "Transcript tokens"). The soniox-sdk profile lets the SDK's wait() poll.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type RealtimeToken, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocket as WsWebSocket } from 'ws';
import { errorBody, makeSpeech, runCli, startParlance, tempDir, uploadFile, waitFor, type Parlance } from '../harness.js';

const execFileP = promisify(execFile);
const SENTENCE = 'the quick brown fox jumps over the lazy dog';
const work = tempDir('parlance-translate-e2e-');
let s: Parlance;
let client: SonioxNodeClient;
/** The sentence twice with a second of silence between: two segments. */
let twoSentencesWav: string;
/** 16 kHz mono s16le of the sentence and 1.5 s of silence, for real time. */
let speechPcm: Buffer;

interface Tok {
  text: string;
  start_ms?: number;
  end_ms?: number;
  confidence: number;
  is_final?: boolean;
  language?: string;
  source_language?: string;
  translation_status?: string;
}

beforeAll(async () => {
  const one = await makeSpeech(path.join(work, 'one.wav'), SENTENCE, { padSeconds: 1.5 });
  twoSentencesWav = path.join(work, 'two.wav');
  await execFileP('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-i',
    one,
    '-i',
    one,
    '-filter_complex',
    'concat=n=2:v=0:a=1',
    '-ar',
    '16000',
    '-ac',
    '1',
    '-y',
    twoSentencesWav,
  ]);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', one, '-f', 's16le', '-ar', '16000', '-ac', '1', '-y', `${one}.raw`]);
  speechPcm = readFileSync(`${one}.raw`);
  s = await startParlance({ env: { PARLANCE_COMPAT: 'soniox-sdk' } });
  (globalThis as { WebSocket?: unknown }).WebSocket = WsWebSocket;
  client = new SonioxNodeClient({ api_key: s.apiKey, base_url: s.url, realtime: { ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket` } });
});
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

const upload = (file: string) => uploadFile(s, file);

const create = (body: Record<string, unknown>) =>
  s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function transcript(body: Record<string, unknown>): Promise<{ text: string; tokens: Tok[] }> {
  const res = await create(body);
  expect(res.status, await res.clone().text()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const done = await waitFor(
    async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_message?: string },
    (r) => r.status === 'completed' || r.status === 'error',
    90_000,
  );
  expect(done.status, done.error_message).toBe('completed');
  return (await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { text: string; tokens: Tok[] };
}

/** Runs of consecutive tokens with the same translation_status. */
function runs(tokens: Tok[]): { status: string | undefined; tokens: Tok[] }[] {
  const out: { status: string | undefined; tokens: Tok[] }[] = [];
  for (const t of tokens) {
    const last = out[out.length - 1];
    if (last && last.status === t.translation_status) last.tokens.push(t);
    else out.push({ status: t.translation_status, tokens: [t] });
  }
  return out;
}

const textOf = (tokens: Tok[]) => tokens.map((t) => t.text).join('');

function expectTranslationTokens(tokens: Tok[], target: string): void {
  expect(tokens.length).toBeGreaterThan(0);
  for (const t of tokens) {
    expect(t).toMatchObject({ translation_status: 'translation', language: target, source_language: 'en' });
    expect('start_ms' in t || 'end_ms' in t).toBe(false);
    expect(t.confidence).toBeGreaterThanOrEqual(0);
    expect(t.confidence).toBeLessThanOrEqual(1);
  }
}

describe('GET /v1/models', () => {
  it('lists the recognisable language, language identification and the installed translation pairs', async () => {
    const res = await s.request('/v1/models');
    expect(res.status).toBe(200);
    const { models } = (await res.json()) as { models: Record<string, unknown>[] };
    for (const id of ['parlance-async-en-v1', 'parlance-rt-en-v1', 'stt-rt-v4']) {
      const m = models.find((x) => x.id === id)!;
      expect(m.languages).toEqual([{ code: 'en', name: 'English' }]);
      expect(m.supports_language_identification).toBe(true);
      // Said plainly: identification can only ever answer en.
      expect(m.language_identification_languages).toEqual(['en']);
      const targets = m.translation_targets as { target_language: string; source_languages: string[]; exclude_source_languages: string[] }[];
      expect(targets).toContainEqual({ target_language: 'es', source_languages: ['en'], exclude_source_languages: [] });
      expect(targets.map((t) => t.target_language)).toEqual(expect.arrayContaining(['ca', 'eo', 'gl']));
      // Only directions out of a recognisable language: es→pt is installed but nothing recognises Spanish speech.
      expect(targets.every((t) => t.source_languages.every((l) => l === 'en'))).toBe(true);
      expect(m.two_way_translation_pairs).toEqual(expect.arrayContaining(['en:es', 'ca:en', 'en:eo', 'en:gl']));
      expect(m.two_way_translation_pairs).not.toContain('es:pt');
      expect(m.one_way_translation).toBe('all_languages');
      expect(m.two_way_translation).toBe('specific_pairs');
    }
  });
});

describe('parlance models translations', () => {
  it('lists the installed directions; with translation disabled by setting, none and no targets in the catalog', async () => {
    const r = await runCli(['models', 'translations', '--json']);
    expect(r.code).toBe(0);
    const { pairs } = JSON.parse(r.stdout) as { pairs: { source: string; target: string }[] };
    expect(pairs).toEqual(
      expect.arrayContaining([
        { source: 'en', target: 'es' },
        { source: 'es', target: 'en' },
        { source: 'es', target: 'pt' },
      ]),
    );
    const off = await runCli(['models', 'translations', '--json'], { PARLANCE_TRANSLATION_ENABLED: 'false' });
    expect(JSON.parse(off.stdout)).toEqual({ pairs: [] });
    const models = await runCli(['models', 'list', '--json'], { PARLANCE_TRANSLATION_ENABLED: 'false' });
    const m = (JSON.parse(models.stdout) as { models: Record<string, unknown>[] }).models.find((x) => x.id === 'parlance-rt-en-v1')!;
    expect(m).toMatchObject({ translation_targets: [], two_way_translation_pairs: [], one_way_translation: null, two_way_translation: null });
  });
});

describe('async transcription', () => {
  let fileId: string;
  beforeAll(async () => {
    fileId = await upload(twoSentencesWav);
  });

  it("one_way es: each segment's original tokens are followed by its translation, without timings", async () => {
    const t = await transcript({ model: 'parlance-async-en-v1', file_id: fileId, translation: { type: 'one_way', target_language: 'es' } });
    const r = runs(t.tokens);
    expect(r.map((x) => x.status)).toEqual(['original', 'translation', 'original', 'translation']);
    for (const [i, run] of r.entries()) {
      if (run.status === 'original') {
        expect(textOf(run.tokens)).toMatch(/fox/);
        for (const tok of run.tokens) {
          expect(tok.language).toBe('en');
          expect(tok.source_language).toBeUndefined();
          expect(tok.end_ms!).toBeGreaterThan(tok.start_ms!);
        }
      } else {
        expectTranslationTokens(run.tokens, 'es');
        expect(textOf(run.tokens)).toMatch(/zorro/i);
        expect(textOf(run.tokens).startsWith(' ')).toBe(true);
        // The translation carries the confidence of the words it translates.
        const src = r[i - 1]!.tokens;
        const mean = src.reduce((a, b) => a + b.confidence, 0) / src.length;
        expect(run.tokens[0]!.confidence).toBeCloseTo(mean, 2);
      }
    }
    expect(t.text).toBe(textOf(t.tokens));
  });

  it('two_way en<->es: English speech is translated to es; one_way en leaves everything none', async () => {
    const two = await transcript({ model: 'stt-async-v4', file_id: fileId, translation: { type: 'two_way', language_a: 'es', language_b: 'en' } });
    expect(runs(two.tokens).map((x) => x.status)).toEqual(['original', 'translation', 'original', 'translation']);
    expectTranslationTokens(
      two.tokens.filter((t) => t.translation_status === 'translation'),
      'es',
    );
    const none = await transcript({ model: 'parlance-async-en-v1', file_id: fileId, translation: { type: 'one_way', target_language: 'en' } });
    expect(none.tokens.length).toBeGreaterThan(0);
    expect(none.tokens.every((t) => t.translation_status === 'none' && t.language === 'en' && t.start_ms !== undefined)).toBe(true);
  });

  it('language identification labels every token with the recognised language; without it tokens carry none', async () => {
    const id = await transcript({ model: 'parlance-async-en-v1', file_id: fileId, enable_language_identification: true });
    expect(id.tokens.length).toBeGreaterThan(0);
    expect(id.tokens.every((t) => t.language === 'en' && t.translation_status === undefined)).toBe(true);
    const plain = await transcript({ model: 'parlance-async-en-v1', file_id: fileId });
    expect(plain.tokens.every((t) => t.language === undefined && t.translation_status === undefined)).toBe(true);
  });

  it('counts translation tokens against PARLANCE_TRANSCRIPT_MAX_TOKENS, at the boundary', async () => {
    const translation = { type: 'one_way', target_language: 'es' };
    const full = await transcript({ model: 'parlance-async-en-v1', file_id: fileId, translation });
    const words = full.tokens.filter((t) => t.translation_status === 'original').length;
    const total = full.tokens.length;
    expect(total).toBeGreaterThan(words);
    // One token short of the translated transcript: the plain transcript still fits, the translated one fails.
    const tight = await startParlance({ env: { PARLANCE_TRANSCRIPT_MAX_TOKENS: String(total - 1) } });
    try {
      const form = new FormData();
      form.set('file', new Blob([readFileSync(twoSentencesWav)]), 'two.wav');
      const id = ((await (await tight.request('/v1/files', { method: 'POST', body: form })).json()) as { id: string }).id;
      const run = async (body: Record<string, unknown>) => {
        const res = await tight.request('/v1/transcriptions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'parlance-async-en-v1', file_id: id, ...body }),
        });
        const { id: jobId } = (await res.json()) as { id: string };
        return waitFor(
          async () =>
            (await (await tight.request(`/v1/transcriptions/${jobId}`)).json()) as { status: string; error_type: string | null; error_message: string | null },
          (r) => r.status === 'completed' || r.status === 'failed',
          90_000,
        );
      };
      expect((await run({})).status).toBe('completed');
      const over = await run({ translation });
      expect(over).toMatchObject({ status: 'failed', error_type: 'transcription_output_too_long' });
      expect(over.error_message).toContain(`${total} tokens`);
    } finally {
      await tight.stop();
    }
  }, 60_000);

  it('refuses an unsupported pair or target with invalid_request naming it', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ type: 'one_way', target_language: 'de' }, /"de"/],
      [{ type: 'two_way', language_a: 'en', language_b: 'de' }, /"en" and "de"/],
      // Both directions installed, but the model recognises neither language.
      [{ type: 'two_way', language_a: 'fr', language_b: 'es' }, /"fr" and "es".*recognises only en/],
      [{ type: 'two_way', language_a: 'en', language_b: 'en' }, /must differ/],
    ];
    for (const [translation, message] of cases) {
      const res = await create({ model: 'parlance-async-en-v1', file_id: fileId, translation });
      expect(res.status).toBe(400);
      const e = await errorBody(res);
      expect(e.error_type).toBe('invalid_request');
      const v = e.validation_errors.find((x) => x.location === 'translation');
      expect(v?.message, JSON.stringify(e)).toMatch(message);
      expect(e.message).toMatch(message);
    }
  });

  it('language hints are hints; strict hints the model cannot recognise are refused naming the language', async () => {
    expect((await create({ model: 'parlance-async-en-v1', file_id: fileId, language_hints: ['en', 'es'] })).status).toBe(201);
    expect((await create({ model: 'parlance-async-en-v1', file_id: fileId, language_hints: ['zz'] })).status).toBe(201);
    const res = await create({ model: 'parlance-async-en-v1', file_id: fileId, language_hints: ['en', 'es'], language_hints_strict: true });
    expect(res.status).toBe(400);
    const e = await errorBody(res);
    expect(e.error_type).toBe('invalid_request');
    expect(e.validation_errors).toEqual([expect.objectContaining({ location: 'language_hints.1', message: expect.stringMatching(/"es"/) })]);
    // What the SDK's translate({between}) sends: the pair's languages as strict hints, with the two-way config.
    const between = await create({
      model: 'parlance-async-en-v1',
      file_id: fileId,
      language_hints: ['en', 'es'],
      language_hints_strict: true,
      translation: { type: 'two_way', language_a: 'en', language_b: 'es' },
    });
    expect(between.status).toBe(201);
  });
});

/** A raw ws session: config, the audio as fast as possible, end of stream; every frame until close. */
async function wsSession(config: Record<string, unknown>, audio: Buffer | null, paceMs = 0, finalize = false): Promise<Record<string, unknown>[]> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: Record<string, unknown>[] = [];
  ws.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString('utf8')) as Record<string, unknown>));
  const closed = new Promise<void>((r) => ws.on('close', () => r()));
  await new Promise<void>((r, j) => ws.once('open', () => r()).once('error', j));
  ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1, ...config }));
  if (audio) {
    // Paced: 100 ms of audio per `paceMs`, so pauses end utterances as they would live.
    const step = paceMs ? 3200 : 32_000;
    for (let i = 0; i < audio.length; i += step) {
      ws.send(audio.subarray(i, i + step));
      if (paceMs) await new Promise((r) => setTimeout(r, paceMs));
    }
    if (finalize) ws.send(JSON.stringify({ type: 'finalize' }));
    ws.send(Buffer.alloc(0));
  }
  await closed;
  return frames;
}

describe('real-time WebSocket', () => {
  it('one_way es: final originals, then their translation tokens after them, all before finished', async () => {
    const frames = await wsSession({ translation: { type: 'one_way', target_language: 'es' }, enable_endpoint_detection: true }, speechPcm, 50);
    expect(frames.at(-1)).toMatchObject({ finished: true });
    expect(frames.some((f) => 'error_code' in f)).toBe(false);
    const tokens = frames.flatMap((f) => f.tokens as Tok[]);
    const words = tokens.filter((t) => t.text !== '<end>' && t.text !== '<fin>');
    // Every non-final and final original carries the source language and `original`.
    for (const t of words.filter((x) => x.translation_status !== 'translation')) expect(t).toMatchObject({ language: 'en', translation_status: 'original' });
    const finals = words.filter((t) => t.is_final);
    const r = runs(finals);
    expect(r.length).toBeGreaterThanOrEqual(2);
    expect(r[0]!.status).toBe('original');
    expect(r.at(-1)!.status).toBe('translation');
    expect(textOf(finals.filter((t) => t.translation_status === 'original'))).toMatch(/fox/);
    const translated = finals.filter((t) => t.translation_status === 'translation');
    expectTranslationTokens(translated, 'es');
    expect(textOf(translated)).toMatch(/zorro/i);
    // An endpoint closes the utterance after its translation (SDK utterance buffers end at <end>).
    const finalTexts = tokens.filter((t) => t.is_final).map((t) => (t.text === '<end>' ? '<end>' : t.translation_status));
    expect(finalTexts).toContain('<end>');
    for (const [i, x] of finalTexts.entries()) if (x === '<end>') expect(finalTexts[i - 1]).toBe('translation');
    // Translation frames do not move the audio clocks backwards.
    const finalMs = frames.map((f) => f.final_audio_proc_ms as number);
    expect(finalMs).toEqual([...finalMs].sort((a, b) => a - b));
  });

  it('finalize: <fin> comes after the translation of everything before it; one_way en marks tokens none', async () => {
    const frames = await wsSession({ translation: { type: 'one_way', target_language: 'ca' } }, speechPcm, 0, true);
    expect(frames.at(-1)).toMatchObject({ finished: true });
    const finals = frames.flatMap((f) => f.tokens as Tok[]).filter((t) => t.is_final);
    const fin = finals.findIndex((t) => t.text === '<fin>');
    expect(fin).toBeGreaterThan(0);
    expect(finals[fin - 1]!.translation_status).toBe('translation');
    expectTranslationTokens(
      finals.filter((t) => t.translation_status === 'translation'),
      'ca',
    );
    const none = (await wsSession({ translation: { type: 'one_way', target_language: 'en' } }, speechPcm)).flatMap((f) => f.tokens as Tok[]);
    expect(none.length).toBeGreaterThan(0);
    expect(none.every((t) => t.translation_status === 'none' && t.language === 'en' && t.start_ms !== undefined)).toBe(true);
  });

  it('two_way en<->es translates English speech to es; enable_language_identification labels tokens en', async () => {
    const two = (await wsSession({ translation: { type: 'two_way', language_a: 'en', language_b: 'es' } }, speechPcm)).flatMap((f) => f.tokens as Tok[]);
    expectTranslationTokens(
      two.filter((t) => t.translation_status === 'translation'),
      'es',
    );
    const lid = (await wsSession({ enable_language_identification: true }, speechPcm)).flatMap((f) => f.tokens as Tok[]);
    expect(lid.length).toBeGreaterThan(0);
    expect(lid.every((t) => t.language === 'en' && t.translation_status === undefined)).toBe(true);
  });

  it('refuses an unsupported pair and a strict hint the model lacks with one invalid_request frame naming them', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ translation: { type: 'one_way', target_language: 'de' } }, /translation: .*"de"/],
      [{ translation: { type: 'two_way', language_a: 'en', language_b: 'de' } }, /"en" and "de"/],
      [{ language_hints: ['en', 'fr'], language_hints_strict: true }, /language_hints\.1: language "fr"/],
    ];
    for (const [config, message] of cases) {
      const frames = await wsSession(config, null);
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ tokens: [], error_code: 400, error_type: 'invalid_request' });
      expect(frames[0]!.error_message).toMatch(message);
    }
    // Non-strict hints with a language the model lacks are accepted.
    const ok = await wsSession({ language_hints: ['en', 'es'] }, speechPcm);
    expect(ok.at(-1)).toMatchObject({ finished: true });
  });
});

describe('@soniox/node translate scenarios', () => {
  it('stt.translate({file, to: "es", wait}) reshapes original/translation segments', async () => {
    const job = await client.stt.translate({
      model: 'stt-async-v4',
      file: readFileSync(twoSentencesWav),
      filename: 'two.wav',
      to: 'es',
      wait: true,
      wait_options: { interval_ms: 200 },
    });
    expect(job.status).toBe('completed');
    const tr = job.translation;
    if (!tr || tr.mode !== 'one_way') throw new Error(`expected a one-way translation, got ${JSON.stringify(tr)}`);
    expect(tr.to).toBe('es');
    expect(tr.segments).toHaveLength(2);
    for (const seg of tr.segments) {
      expect(seg.from).toBe('en');
      expect(seg.to).toBe('es');
      expect(seg.original_text).toMatch(/fox/);
      expect(seg.translation_text).toMatch(/zorro/i);
      expect(seg.start_ms).toBeLessThan(seg.end_ms!);
    }
    expect(tr.translation_text).toMatch(/zorro.*zorro/is);
  }, 120_000);

  it('stt.translate({between: ["en", "es"]}) (strict hints from the pair) translates English speech', async () => {
    const job = await client.stt.translate({
      model: 'stt-async-v4',
      file: readFileSync(twoSentencesWav),
      filename: 'two.wav',
      between: ['en', 'es'],
      wait: true,
      wait_options: { interval_ms: 200 },
    });
    expect(job.status).toBe('completed');
    const tr = job.translation;
    if (!tr || tr.mode !== 'two_way') throw new Error(`expected a two-way translation, got ${JSON.stringify(tr)}`);
    expect(tr.segments.length).toBe(2);
    expect(tr.segments.every((seg) => seg.from === 'en' && seg.to === 'es' && /zorro/i.test(seg.translation_text ?? ''))).toBe(true);
  });

  it('real time: realtime.stt with translation delivers translation tokens the SDK parses', async () => {
    for (const translation of [{ type: 'one_way', target_language: 'es' } as const, { type: 'two_way', language_a: 'en', language_b: 'es' } as const]) {
      const session = client.realtime.stt({ model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1, translation });
      const tokens: RealtimeToken[] = [];
      const errors: Error[] = [];
      session.on('result', (r) => tokens.push(...r.tokens));
      session.on('error', (e) => errors.push(e));
      await session.connect();
      async function* chunks() {
        for (let i = 0; i < speechPcm.length; i += 16_000) yield speechPcm.subarray(i, i + 16_000);
      }
      await session.sendStream(chunks(), { finish: true });
      expect(errors).toEqual([]);
      const finals = tokens.filter((t) => t.is_final);
      const translated = finals.filter((t) => t.translation_status === 'translation');
      expect(translated.length).toBeGreaterThan(0);
      expect(translated.every((t) => t.language === 'es' && t.source_language === 'en' && t.start_ms === undefined)).toBe(true);
      expect(
        finals
          .filter((t) => t.translation_status === 'original')
          .map((t) => t.text)
          .join(''),
      ).toMatch(/fox/);
      expect(finals.findIndex((t) => t.translation_status === 'original')).toBeLessThan(finals.findIndex((t) => t.translation_status === 'translation'));
    }
  });

  it('real time: an unsupported pair rejects the SDK session with a 400', async () => {
    const session = client.realtime.stt({
      model: 'stt-rt-v4',
      audio_format: 'pcm_s16le',
      sample_rate: 16000,
      num_channels: 1,
      translation: { type: 'one_way', target_language: 'de' },
    });
    const errors: Error[] = [];
    session.on('error', (e) => errors.push(e));
    await session.connect();
    await expect(session.finish()).rejects.toThrow(/"de"/);
    expect((errors[0] as Error & { code?: number; statusCode?: number })?.message ?? '').toMatch(/"de"/);
  });
});

describe('a translation engine that fails', () => {
  // Every apertium call is killed after 0.1 s, and there are no loaded spares: every translation times out.
  let broken: Parlance;
  beforeAll(async () => {
    broken = await startParlance({ env: { PARLANCE_TRANSLATION_TIMEOUT_SECONDS: '0.1', PARLANCE_TRANSLATION_SPARE_IDLE_SECONDS: '0' } });
  });
  afterAll(async () => {
    await broken?.stop();
  });

  it('fails the async job with internal_error, the real-time session with one internal_error frame, and keeps serving', async () => {
    const form = new FormData();
    form.set('file', new Blob([readFileSync(twoSentencesWav)]), 'two.wav');
    const fileId = ((await (await broken.request('/v1/files', { method: 'POST', body: form })).json()) as { id: string }).id;
    const post = (body: Record<string, unknown>) =>
      broken.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'parlance-async-en-v1', file_id: fileId, ...body }),
      });
    const poll = (id: string) =>
      waitFor(
        async () =>
          (await (await broken.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_type: string | null; error_message: string | null },
        (r) => r.status === 'completed' || r.status === 'failed',
        90_000,
      );
    const failed = await poll(((await (await post({ translation: { type: 'one_way', target_language: 'es' } })).json()) as { id: string }).id);
    expect(failed).toMatchObject({ status: 'failed', error_type: 'internal_error' });
    expect(failed.error_message).toMatch(/translation/i);
    expect((await poll(((await (await post({})).json()) as { id: string }).id)).status).toBe('completed');

    const ws = new WebSocket(`${broken.url.replace('http', 'ws')}/transcribe-websocket`);
    const frames: Record<string, unknown>[] = [];
    ws.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString('utf8')) as Record<string, unknown>));
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await new Promise<void>((r, j) => ws.once('open', () => r()).once('error', j));
    ws.send(
      JSON.stringify({
        api_key: broken.apiKey,
        model: 'stt-rt-v4',
        audio_format: 'pcm_s16le',
        sample_rate: 16000,
        num_channels: 1,
        translation: { type: 'one_way', target_language: 'es' },
      }),
    );
    ws.send(speechPcm);
    ws.send(Buffer.alloc(0));
    expect(await closed).toBe(1000);
    const last = frames.at(-1)!;
    expect(last).toMatchObject({ tokens: [], error_code: 500, error_type: 'internal_error' });
    expect(frames.some((f) => f.finished === true)).toBe(false);
    expect(frames.flatMap((f) => f.tokens as Tok[]).some((t) => t.translation_status === 'translation')).toBe(false);
  }, 60_000);
});
