// Text-to-speech over HTTP against a real server and real engines: GET /v1/tts-models, the shared-voices
// listing, POST /tts in every format (decoded back with ffprobe/ffmpeg), validation before audio, the TTS
// error body, temporary keys and the generated-audio cap.
import { SonioxNodeClient } from '@soniox/node';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import { errorBody, startParlance, transcribeFile, type Parlance } from '../harness.js';
import { probeAudio } from './tts-helpers.js';

let s: Parlance;
let capped: Parlance;
beforeAll(async () => {
  [s, capped] = await Promise.all([startParlance(), startParlance({ env: { PARLANCE_TTS_MAX_AUDIO_SECONDS: '1.5' } })]);
});
afterAll(async () => Promise.all([s?.stop(), capped?.stop()]));

const SENTENCE = 'Hello world. This is Parlance speaking.';

function tts(body: unknown, opts: { key?: string | null; server?: Parlance } = {}): Promise<Response> {
  return (opts.server ?? s).request('/tts', {
    method: 'POST',
    key: opts.key,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const base = { model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav', text: SENTENCE };

async function ttsError(res: Response, status: number, type: string): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error_code', 'error_message', 'error_type', 'more_info', 'request_id']);
  expect(body.error_code).toBe(status);
  expect(body.error_type).toBe(type);
  expect(body.more_info).toBe(`${s.url.replace(/:\d+$/, '')}:${new URL(res.url).port}/docs/errors#${type.replace(/_/g, '-')}`);
  expect(typeof body.request_id).toBe('string');
  return body;
}

describe('GET /v1/tts-models', () => {
  it('lists version-suffixed models with languages, voices and capability fields, plus the SDK aliases', async () => {
    const res = await s.request('/v1/tts-models');
    expect(res.status).toBe(200);
    const { models } = (await res.json()) as { models: Record<string, unknown>[] };
    const ids = models.map((m) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining(['parlance-tts-v1', 'parlance-tts-espeak-v1', 'parlance-tts-flite-v1', 'parlance-tts-festival-v1', 'tts-rt-v2', 'tts-rt-v1']),
    );
    for (const m of models) {
      expect(Object.keys(m).sort()).toEqual(
        [
          'aliased_model_id',
          'id',
          'languages',
          'name',
          'speed_max',
          'speed_min',
          'supports_silence_reduction',
          'supports_speed_adjustment',
          'supports_timestamps',
          'voices',
        ].sort(),
      );
      expect(m.id).toMatch(/-v\d+$/);
      expect(m.speed_min).toBe(0.7);
      expect(m.speed_max).toBe(1.3);
      for (const l of m.languages as { code: string; name: string }[]) expect(l.code).toMatch(/^[a-z]{2}$/);
      for (const v of m.voices as Record<string, unknown>[]) {
        expect(Object.keys(v).sort()).toEqual(['description', 'gender', 'id']);
        expect(['male', 'female', 'neutral']).toContain(v.gender);
      }
    }
    // The public aliases name the routed model: English by flite, other languages by espeak-ng; same voice list.
    const alias = models.find((m) => m.id === 'tts-rt-v2')!;
    expect(alias.aliased_model_id).toBe('parlance-tts-v1');
    const routed = models.find((m) => m.id === 'parlance-tts-v1')!;
    expect(routed.languages).toEqual(models.find((m) => m.id === 'parlance-tts-espeak-v1')!.languages);
    expect(routed.voices).toEqual(models.find((m) => m.id === 'parlance-tts-espeak-v1')!.voices);
    const espeak = models.find((m) => m.id === 'parlance-tts-espeak-v1')!;
    expect(espeak.aliased_model_id).toBeNull();
    expect((espeak.languages as { code: string }[]).map((l) => l.code)).toEqual(expect.arrayContaining(['en', 'de', 'fr', 'es']));
    expect((espeak.voices as { id: string }[]).map((v) => v.id)).toEqual(expect.arrayContaining(['Adrian', 'Maya']));
    expect(models.find((m) => m.id === 'parlance-tts-festival-v1')!.supports_silence_reduction).toBe(false);
  });

  it('needs a valid key', async () => {
    const res = await s.request('/v1/tts-models', { key: 'prl_nope' });
    expect(res.status).toBe(401);
    expect((await errorBody(res)).error_type).toBe('unauthenticated');
  });
});

describe('shared voices listing: GET /v1/tts-voices', () => {
  const list = (q: string) => s.request(`/v1/tts-voices?${q}`);

  it('gives full voice records, filters, and pages with a cursor', async () => {
    const res = await list('model=tts-rt-v2&limit=200');
    expect(res.status).toBe(200);
    const all = (await res.json()) as { voices: Record<string, unknown>[]; next_page_cursor: string | null };
    expect(all.next_page_cursor).toBeNull();
    const adrian = all.voices.find((v) => v.id === 'Adrian')!;
    expect(adrian).toEqual({
      id: 'Adrian',
      description: expect.any(String),
      gender: 'male',
      age: 'middle_aged',
      accent: 'american',
      use_case: expect.any(Array),
      style: expect.any(Array),
    });

    const f = (await (await list('model=tts-rt-v2&gender=female&limit=200')).json()) as { voices: { gender: string }[] };
    expect(f.voices.length).toBeGreaterThan(2);
    expect(f.voices.every((v) => v.gender === 'female')).toBe(true);

    const uc = (await (await list('model=tts-rt-v2&use_case=narration&use_case=audiobook')).json()) as { voices: { id: string }[] };
    expect(uc.voices.map((v) => v.id)).toEqual(['Adrian']);
    const uc2 = (await (await list('model=tts-rt-v2&use_case=narration,audiobook&accent=american')).json()) as { voices: { id: string }[] };
    expect(uc2.voices.map((v) => v.id)).toEqual(['Adrian']);
    const st = (await (await list('model=tts-rt-v2&style=calm&age=old')).json()) as { voices: { id: string }[] };
    expect(st.voices.map((v) => v.id)).toEqual(['Oliver']);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await list(`model=tts-rt-v2&limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      const page = (await r.json()) as { voices: { id: string }[]; next_page_cursor: string | null };
      seen.push(...page.voices.map((v) => v.id));
      cursor = page.next_page_cursor;
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(all.voices.map((v) => v.id));
  });

  it('rejects bad queries with invalid_request, a bad cursor with invalid_cursor, an unknown model with 404', async () => {
    for (const q of [
      '',
      'model=' + 'x'.repeat(65),
      'model=tts-rt-v2&gender=robot',
      'model=tts-rt-v2&age=ancient',
      `model=tts-rt-v2&accent=${'a'.repeat(41)}`,
      `model=tts-rt-v2&use_case=${Array.from({ length: 11 }, (_, i) => `u${i}`).join(',')}`,
      `model=tts-rt-v2&style=${'s'.repeat(41)}`,
      'model=tts-rt-v2&limit=0',
      'model=tts-rt-v2&limit=201',
      'model=tts-rt-v2&limit=abc',
    ]) {
      const res = await list(q);
      expect(res.status, q).toBe(400);
      expect((await errorBody(res)).error_type, q).toBe('invalid_request');
    }
    const bad = await list('model=tts-rt-v2&cursor=garbage');
    expect(bad.status).toBe(400);
    expect((await errorBody(bad)).error_type).toBe('invalid_cursor');
    const unknown = await list('model=no-such-model-v9');
    expect(unknown.status).toBe(404);
    expect((await errorBody(unknown)).error_type).toBe('invalid_request');
  });

  it('is described in /openapi.json (POST /tts is on the TTS interface, not the /v1 description)', async () => {
    const doc = (await (await s.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/tts-models', '/v1/tts-voices']));
    const q = (doc.paths['/v1/tts-voices'] as { get: { parameters: { name: string }[] } }).get.parameters.map((x) => x.name);
    expect(q).toEqual(expect.arrayContaining(['model', 'gender', 'age', 'accent', 'use_case', 'style', 'limit', 'cursor']));
  });
});

describe('POST /tts: audio', () => {
  const FORMATS: [string, string][] = [
    ['pcm_f32le', 'audio/pcm'],
    ['pcm_s16le', 'audio/pcm'],
    ['pcm_s16be', 'audio/pcm'],
    ['pcm_mulaw', 'audio/pcm'],
    ['pcm_alaw', 'audio/pcm'],
    ['wav', 'audio/wav'],
    ['aac', 'audio/aac'],
    ['mp3', 'audio/mpeg'],
    ['opus', 'audio/opus'],
    ['flac', 'audio/flac'],
  ];
  for (const [format, type] of FORMATS) {
    it(`${format}: ${type}, decodable at the requested rate, plausible duration`, async () => {
      const rate = format === 'opus' ? 48000 : 16000;
      const res = await tts({ ...base, audio_format: format, sample_rate: rate, voice: 'Maya' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      const bytes = Buffer.from(await res.arrayBuffer());
      const a = await probeAudio(bytes, format, rate);
      expect(a.sampleRate).toBe(rate);
      expect(a.seconds).toBeGreaterThan(1.2);
      expect(a.seconds).toBeLessThan(6);
    });
  }

  it('wav has a RIFF header; default sample rate 24000; bitrates apply to mp3', async () => {
    const wav = Buffer.from(await (await tts(base)).arrayBuffer());
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect((await probeAudio(wav, 'wav', 0)).sampleRate).toBe(24000);
    const lo = Buffer.from(await (await tts({ ...base, audio_format: 'mp3', sample_rate: 44100, bitrate: 32000 })).arrayBuffer());
    const hi = Buffer.from(await (await tts({ ...base, audio_format: 'mp3', sample_rate: 44100, bitrate: 320000 })).arrayBuffer());
    expect(hi.length).toBeGreaterThan(lo.length * 4);
  });

  it('speed changes duration (pitch kept by the engine rate), on every engine', async () => {
    for (const model of ['parlance-tts-v1', 'parlance-tts-espeak-v1', 'parlance-tts-flite-v1', 'parlance-tts-festival-v1']) {
      const dur = async (speed: number) => (await probeAudio(Buffer.from(await (await tts({ ...base, model, speed })).arrayBuffer()), 'wav', 0)).seconds;
      const slow = await dur(0.7);
      const fast = await dur(1.3);
      expect(slow / fast, model).toBeGreaterThan(1.3);
    }
  });

  it('serves flite voices, festival, other languages and reduce_silence', async () => {
    for (const body of [
      { ...base, model: 'parlance-tts-flite-v1', voice: 'Sarah' },
      { ...base, model: 'parlance-tts-flite-v1', voice: 'Kenneth' },
      { ...base, model: 'parlance-tts-festival-v1', voice: 'Kal' },
      { ...base, language: 'de', voice: 'Clara', text: 'Guten Tag. Wie geht es Ihnen?' },
      { ...base, language: 'fr', voice: 'Alicia', text: 'Bonjour tout le monde.' },
    ]) {
      const res = await tts(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      const a = await probeAudio(Buffer.from(await res.arrayBuffer()), 'wav', 0);
      expect(a.seconds, JSON.stringify(body)).toBeGreaterThan(0.5);
    }
    const text = 'One. Two. Three. Four. Five.';
    const plain = await probeAudio(Buffer.from(await (await tts({ ...base, text })).arrayBuffer()), 'wav', 0);
    const reduced = await probeAudio(Buffer.from(await (await tts({ ...base, text, reduce_silence: true })).arrayBuffer()), 'wav', 0);
    expect(reduced.seconds).toBeLessThan(plain.seconds * 0.9);
  });

  // How soon the first bytes come is measured by `npm run bench -- tts` (first-byte latency over HTTP), not here.
  it('streams a long text: every sentence of it arrives', async () => {
    const text = Array.from({ length: 60 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');
    const res = await tts({ ...base, text, audio_format: 'pcm_s16le' });
    expect(res.status).toBe(200);
    const audio = Buffer.from(await res.arrayBuffer());
    expect(audio.length / 2 / 24000).toBeGreaterThan(60);
  });

  it('caps generated audio: the response ends cleanly with truncated audio', async () => {
    const text = Array.from({ length: 10 }, (_, i) => `Sentence ${i + 1} goes on for a while.`).join(' ');
    const res = await tts({ ...base, text, audio_format: 'wav' }, { server: capped, key: capped.apiKey });
    expect(res.status).toBe(200);
    const a = await probeAudio(Buffer.from(await res.arrayBuffer()), 'wav', 0);
    expect(a.seconds).toBeGreaterThan(1.3);
    expect(a.seconds).toBeLessThanOrEqual(1.6);
  });
});

describe('POST /tts: errors before audio, in the TTS error body', () => {
  it('validates every field', async () => {
    const cases: Record<string, unknown>[] = [
      { ...base, speed: 1.5 },
      { ...base, speed: 0.5 },
      { ...base, speed: 'fast' },
      { ...base, audio_format: 'ogg' },
      { ...base, sample_rate: 22050 },
      { ...base, audio_format: 'opus', sample_rate: 44100 },
      { ...base, bitrate: 128000 },
      { ...base, audio_format: 'mp3', bitrate: 100000 },
      { ...base, audio_format: 'mp3', sample_rate: 8000, bitrate: 128000 },
      { ...base, model: 'parlance-tts-festival-v1', reduce_silence: true },
      { ...base, reduce_silence: 'yes' },
      { ...base, language: 'xx' },
      { ...base, text: '' },
      { ...base, text: 'x'.repeat(20_001) },
      { ...base, text: 42 },
      { ...base, client_reference_id: 'c'.repeat(257) },
      { model: 'tts-rt-v2', language: 'en', voice: 'Adrian', text: 'hi' },
      { model: 'tts-rt-v2', language: 'en', audio_format: 'wav', text: 'hi' },
    ];
    for (const body of cases) await ttsError(await tts(body), 400, 'invalid_request');
    await ttsError(await tts('{not json'), 400, 'invalid_request');
    await ttsError(await tts('[1,2]'), 400, 'invalid_request');
  });

  it('unknown model → 400 model_not_available; unknown voice → 404 voice_not_found', async () => {
    await ttsError(await tts({ ...base, model: 'tts-rt-v9' }), 400, 'model_not_available');
    await ttsError(await tts({ ...base, voice: 'Nobody' }), 404, 'voice_not_found');
    await ttsError(await tts({ ...base, voice: '6f1c2c1e-1111-4aaa-8bbb-123456789abc' }), 404, 'voice_not_found');
  });

  it('authentication: missing, bad and read-only keys; tts_rt temporary keys work, others do not', async () => {
    await ttsError(await tts(base, { key: null }), 401, 'unauthenticated');
    await ttsError(await tts(base, { key: 'prl_bogus' }), 401, 'unauthenticated');
    const ro = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--read-only');
    await ttsError(await tts(base, { key: ro.api_key }), 403, 'permission_denied');
    const mk = async (usage_type: string, extra: Record<string, unknown> = {}) => {
      const r = await s.request('/v1/auth/temporary-api-key', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ usage_type, expires_in_seconds: 60, ...extra }),
      });
      expect(r.status).toBe(201);
      return ((await r.json()) as { api_key: string }).api_key;
    };
    const temp = await mk('tts_rt');
    const ok = await tts(base, { key: temp });
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).toString('ascii', 0, 4)).toBe('RIFF');
    await ttsError(await tts(base, { key: await mk('transcribe_websocket') }), 401, 'unauthenticated');
    const single = await mk('tts_rt', { single_use: true });
    expect((await tts(base, { key: single })).status).toBe(200);
    await ttsError(await tts(base, { key: single }), 401, 'unauthenticated');
  });

  it('a temporary key session cap drops the connection mid-stream', async () => {
    const r = await s.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'tts_rt', expires_in_seconds: 60, max_session_duration_seconds: 1 }),
    });
    const key = ((await r.json()) as { api_key: string }).api_key;
    const text = Array.from({ length: 200 }, (_, i) => `This is sentence number ${i + 1} of a long text.`).join(' ');
    const res = await tts({ ...base, text, audio_format: 'pcm_f32le', sample_rate: 48000 }, { key });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await new Promise((r2) => setTimeout(r2, 1500)); // a slow reader: the server blocks on backpressure past the cap
    await expect(
      (async () => {
        for (let x = await reader.read(); !x.done; x = await reader.read());
      })(),
    ).rejects.toThrow();
  });

  it('billing: an exhausted balance refuses before audio', async () => {
    const other = await startParlance();
    try {
      await other.admin('set-balance', '--available-usd', '0', '--invoice-billing', 'off');
      await ttsError(
        await other.request('/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(base) }),
        402,
        'organization_balance_exhausted',
      );
    } finally {
      await other.stop();
    }
  });
});

describe('a client that leaves', () => {
  it('before the first audio is not a server error: nothing is logged at error level, the server serves on', async () => {
    // One sentence of some 300 words: its synthesis takes far longer than the client waits.
    const text = Array.from({ length: 60 }, (_, i) => `word number ${i + 1} of a sentence without an end`).join(' and ');
    const logged = s.stderr().length;
    const ac = new AbortController();
    const res = s.request('/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, text }),
      signal: ac.signal,
    });
    setTimeout(() => ac.abort(), 50);
    await expect(res).rejects.toThrow();
    // The next request is served, after the abandoned one has been cleaned up.
    const after = await tts({ ...base, text });
    expect(after.status).toBe(200);
    await after.arrayBuffer();
    expect(s.stderr().slice(logged)).not.toMatch(/"level":50/);
  });
});

describe('a separate TTS port (PARLANCE_TTS_PORT)', () => {
  let t: Parlance;
  beforeAll(async () => {
    (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
    t = await startParlance({ env: { PARLANCE_TTS_PORT: '0' } });
  });
  afterAll(async () => t?.stop());

  it('serves POST /tts, /v1/tts-models, /health and /tts-websocket there, and nothing else', async () => {
    expect(t.ttsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.ttsUrl).not.toBe(t.url);
    const auth = { authorization: `Bearer ${t.apiKey}` };
    expect((await fetch(`${t.ttsUrl}/health`)).status).toBe(200);
    expect((await fetch(`${t.ttsUrl}/v1/tts-models`, { headers: auth })).status).toBe(200);
    const files = await fetch(`${t.ttsUrl}/v1/files`, { headers: auth });
    expect(files.status).toBe(404);
    expect(await errorBody(files)).toMatchObject({ status_code: 404, error_type: 'invalid_request' });
    // Auth and validation are the main port's.
    const anon = await fetch(`${t.ttsUrl}/tts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anon.status).toBe(401);
    // The official SDK pointed at the TTS port for HTTP and WebSocket, the main port for the rest.
    const client = new SonioxNodeClient({
      api_key: t.apiKey,
      base_url: t.url,
      tts_api_url: t.ttsUrl,
      realtime: { tts_ws_url: `${t.ttsUrl!.replace('http', 'ws')}/tts-websocket` },
    });
    const wav = Buffer.from(await client.tts.generate({ text: 'Hello from the TTS port.', voice: 'Adrian' }));
    expect((await probeAudio(wav, 'wav', 0)).seconds).toBeGreaterThan(0.5);
    const stream = await client.realtime.tts({ model: 'tts-rt-v2', language: 'en', voice: 'Maya', audio_format: 'pcm_s16le', sample_rate: 16000 });
    const parts: Buffer[] = [];
    const done = (async () => {
      for await (const c of stream) parts.push(Buffer.from(c));
    })();
    stream.sendText('Over the socket.', { end: true });
    await done;
    stream.close();
    expect(Buffer.concat(parts).length / 2 / 16000).toBeGreaterThan(0.3);
  });
});

describe('intelligible default voices (issue 14)', () => {
  // Harvard sentences; each voice's audio goes through our own recogniser (the round trip docs/benchmarks.md uses).
  const TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well.';

  async function roundTripWer(model: string, voice: string): Promise<number> {
    const res = await tts({ model, voice, language: 'en', audio_format: 'wav', sample_rate: 16000, text: TEXT });
    expect(res.status).toBe(200);
    const file = path.join(tmpdir(), `parlance-roundtrip-${model}-${voice}-${process.pid}.wav`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    try {
      const { text } = await transcribeFile(s, file, {}, 90_000);
      return wordErrorRate(TEXT, text).wer;
    } finally {
      rmSync(file, { force: true });
    }
  }

  it('tts-rt-v2 speaks English with a voice our recogniser understands; other languages as before', async () => {
    const [routed, espeak] = await Promise.all([roundTripWer('tts-rt-v2', 'Adrian'), roundTripWer('parlance-tts-espeak-v1', 'Adrian')]);
    expect(routed).toBeLessThan(0.5);
    expect(espeak - routed).toBeGreaterThan(0.25);
    // French still comes from espeak-ng, and voices flite has no counterpart for keep espeak-ng's English.
    const fr = await tts({ ...base, language: 'fr', text: 'Bonjour tout le monde.' });
    expect(fr.status).toBe(200);
    expect((await probeAudio(Buffer.from(await fr.arrayBuffer()), 'wav', 0)).seconds).toBeGreaterThan(0.5);
    expect((await tts({ ...base, voice: 'Fiona' })).status).toBe(200);
  }, 180_000);
});
