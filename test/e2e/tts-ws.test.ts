// /tts-websocket against a real server (docs/wire-compat.md): streams multiplexed by stream_id, base64 audio
// in JSON text frames, timestamps, audio_end then terminated, per-stream errors that keep the connection,
// connection-level errors that close it (spec and soniox-sdk framing), every invalid_stream_state case,
// request_timeout, max_audio_duration_reached and the per-connection stream cap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtsErrorBody, type TtsTimestamps } from '../../src/wire/tts-frames.js';
import { startParlance, type Parlance } from '../harness.js';
import { openTts, probeAudio, startMsg, streamAudio, type WsClient } from './tts-helpers.js';

let s: Parlance;
let sdk: Parlance;
beforeAll(async () => {
  const env = { PARLANCE_TTS_WS_REQUEST_TIMEOUT_SECONDS: '0.8', PARLANCE_TTS_MAX_AUDIO_SECONDS: '3' };
  [s, sdk] = await Promise.all([startParlance({ env }), startParlance({ env: { ...env, PARLANCE_COMPAT: 'soniox-sdk' } })]);
});
afterAll(async () => Promise.all([s?.stop(), sdk?.stop()]));

const ERROR_KEYS = Object.keys(TtsErrorBody.properties);
const isTerminated = (id: string) => (f: Record<string, unknown>) => f.stream_id === id && f.terminated === true;
const isError = (id: string) => (f: Record<string, unknown>) => f.stream_id === id && f.error_type !== undefined;

function expectErrorFrame(f: Record<string, unknown>, type: string, code: number): void {
  expect(f.error_type).toBe(type);
  expect(f.error_code).toBe(code);
  expect(typeof f.error_message).toBe('string');
  expect(f.more_info).toMatch(new RegExp(`/docs/errors#${type.replace(/_/g, '-')}$`));
  expect(typeof f.request_id).toBe('string');
}

async function speak(c: WsClient, id: string, text: string, extra: Record<string, unknown> = {}): Promise<void> {
  c.send(startMsg(s.apiKey, id, extra));
  c.send({ text, text_end: false, stream_id: id });
  c.send({ text: '', text_end: true, stream_id: id });
}

describe('TTS WebSocket: streams', () => {
  it('one stream: base64 audio frames with timestamps, audio_end, terminated; no error keys on normal frames', async () => {
    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 'a', { return_timestamps: true, audio_format: 'wav', sample_rate: 24000 }));
    c.send({ text: 'Hello there. ', text_end: false, stream_id: 'a' });
    c.send({ text: 'How are you today?', text_end: true, stream_id: 'a' });
    await c.next(isTerminated('a'));
    const frames = c.frames.filter((f) => f.stream_id === 'a');
    for (const f of frames) for (const k of ERROR_KEYS) expect(f).not.toHaveProperty(k);
    const endIdx = frames.findIndex((f) => f.audio_end === true);
    expect(endIdx).toBe(frames.length - 2);
    expect(frames[frames.length - 1]).toEqual({ stream_id: 'a', terminated: true });
    const chars: string[] = [];
    let last = -1;
    for (const f of frames) {
      const ts = f.timestamps as TtsTimestamps | undefined;
      if (!ts) continue;
      expect(ts.character_start_times_seconds.length).toBe(ts.characters.length);
      expect(ts.character_end_times_seconds.length).toBe(ts.characters.length);
      for (let i = 0; i < ts.characters.length; i++) {
        expect(ts.character_start_times_seconds[i]!).toBeGreaterThanOrEqual(last);
        expect(ts.character_end_times_seconds[i]!).toBeGreaterThanOrEqual(ts.character_start_times_seconds[i]!);
        last = ts.character_start_times_seconds[i]!;
      }
      chars.push(...ts.characters);
    }
    expect(chars.join('')).toBe('Hello there. How are you today?');
    const audio = streamAudio(c.frames, 'a');
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
    const a = await probeAudio(audio, 'wav', 0);
    expect(a.sampleRate).toBe(24000);
    expect(a.seconds).toBeGreaterThan(1);
    expect(Math.abs(a.seconds - last)).toBeLessThan(1);
    // keep_alive (no stream_id) is accepted silently; the connection stays usable
    const before = c.frames.length;
    c.send({ keep_alive: true });
    await speak(c, 'b', 'Still here.');
    await c.next(isTerminated('b'));
    expect(c.frames.slice(before).every((f) => f.stream_id === 'b')).toBe(true);
    c.close();
  });

  it('five simultaneous streams with different voices, no cross-talk; a sixth gets max_concurrent_streams_reached', async () => {
    const c = await openTts(s.url);
    const voices = ['Adrian', 'Maya', 'Oliver', 'Fiona', 'Noah'];
    voices.forEach((v, i) => c.send(startMsg(s.apiKey, `s${i}`, { voice: v })));
    c.send(startMsg(s.apiKey, 's5'));
    const err = await c.next(isError('s5'));
    expectErrorFrame(err, 'max_concurrent_streams_reached', 400);
    await c.next(isTerminated('s5'));
    voices.forEach((v, i) => c.send({ text: `Stream ${i} speaks with the voice of ${v}.`, text_end: true, stream_id: `s${i}` }));
    for (let i = 0; i < 5; i++) await c.next(isTerminated(`s${i}`));
    const lens = voices.map((_, i) => streamAudio(c.frames, `s${i}`).length);
    for (const l of lens) expect(l).toBeGreaterThan(16000 * 2);
    expect(new Set(voices.map((_, i) => streamAudio(c.frames, `s${i}`).subarray(0, 4000).toString('base64'))).size).toBe(5);
    c.close();
  });

  it('cancel stops a stream and answers terminated; cancel after cancel is invalid_stream_state', async () => {
    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 'c'));
    c.send({ text: 'A long text that will be cancelled. '.repeat(20), text_end: false, stream_id: 'c' });
    c.send({ stream_id: 'c', cancel: true });
    await c.next(isTerminated('c'));
    c.send({ stream_id: 'c', cancel: true });
    expectErrorFrame(await c.next(isError('c')), 'invalid_stream_state', 400);
    c.close();
  });

  it('invalid_stream_state: duplicate active id, text/cancel for unknown stream, text and text_end after text_end', async () => {
    const c = await openTts(s.url);
    c.send({ text: 'hi', text_end: false, stream_id: 'nobody' });
    expectErrorFrame(await c.next(isError('nobody')), 'invalid_stream_state', 400);
    c.send({ stream_id: 'ghost', cancel: true });
    expectErrorFrame(await c.next(isError('ghost')), 'invalid_stream_state', 400);
    c.send(startMsg(s.apiKey, 'd'));
    c.send(startMsg(s.apiKey, 'd'));
    expectErrorFrame(await c.next(isError('d')), 'invalid_stream_state', 400);
    c.send({ text: 'Some words.', text_end: true, stream_id: 'd' });
    c.send({ text: 'more', text_end: false, stream_id: 'd' });
    c.send({ text: '', text_end: true, stream_id: 'd' });
    await c.next(isTerminated('d'));
    const errs = c.frames.filter(isError('d'));
    expect(errs.map((e) => e.error_type)).toEqual(['invalid_stream_state', 'invalid_stream_state', 'invalid_stream_state']);
    // the connection is still open
    await speak(c, 'e', 'Fine.');
    await c.next(isTerminated('e'));
    c.close();
  });

  it('request_timeout: no text after the start; a pause without text_end; keep_alive does not extend it', async () => {
    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 't1'));
    expectErrorFrame(await c.next(isError('t1')), 'request_timeout', 408);
    await c.next(isTerminated('t1'));
    c.send(startMsg(s.apiKey, 't2'));
    c.send({ text: 'Hello. ', text_end: false, stream_id: 't2' });
    const timer = setInterval(() => c.send({ keep_alive: true }), 200);
    expectErrorFrame(await c.next(isError('t2')), 'request_timeout', 408);
    clearInterval(timer);
    await c.next(isTerminated('t2'));
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.close();
  });

  it('max_audio_duration_reached: last chunk without audio_end, error, terminated; the connection stays open', async () => {
    const c = await openTts(s.url);
    await speak(c, 'long', Array.from({ length: 10 }, (_, i) => `This is sentence ${i + 1}, and it is long.`).join(' '));
    const err = await c.next(isError('long'));
    expectErrorFrame(err, 'max_audio_duration_reached', 413);
    await c.next(isTerminated('long'));
    const frames = c.frames.filter((f) => f.stream_id === 'long');
    expect(frames.some((f) => f.audio_end !== undefined)).toBe(false);
    const idx = frames.indexOf(err);
    expect(typeof frames[idx - 1]!.audio).toBe('string');
    const pcm = streamAudio(c.frames, 'long');
    expect(pcm.length / 2 / 16000).toBeCloseTo(3, 1);
    await speak(c, 'after', 'Still open.');
    await c.next(isTerminated('after'));
    c.close();
  });

  it('per-stream start errors carry the stream id: voice_not_found, unauthenticated, model_not_available, invalid_request', async () => {
    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 'ok'));
    c.send(startMsg(s.apiKey, 'v', { voice: 'Nobody' }));
    c.send(startMsg('prl_bad', 'k'));
    c.send(startMsg(s.apiKey, 'm', { model: 'nope-v1' }));
    c.send(startMsg(s.apiKey, 'sp', { speed: 2 }));
    c.send({ text: 'Healthy stream.', text_end: true, stream_id: 'ok' });
    expectErrorFrame(await c.next(isError('v')), 'voice_not_found', 404);
    expectErrorFrame(await c.next(isError('k')), 'unauthenticated', 401);
    expectErrorFrame(await c.next(isError('m')), 'model_not_available', 400);
    expectErrorFrame(await c.next(isError('sp')), 'invalid_request', 400);
    for (const id of ['v', 'k', 'm', 'sp', 'ok']) await c.next(isTerminated(id));
    expect(c.frames.some((f) => f.stream_id === 'ok' && f.audio_end === true)).toBe(true);
    c.close();
  });
});

describe('TTS WebSocket: connection-level errors', () => {
  const cases: [string, unknown][] = [
    ['malformed JSON', '{nope'],
    ['not an object', '[1]'],
    ['start without stream_id', { api_key: 'k', model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav' }],
    ['text without stream_id', { text: 'hi', text_end: false }],
    ['unrecognized message', { hello: 1 }],
    ['a message over the size limit', 'x'.repeat(4_194_305)],
  ];
  for (const [name, msg] of cases) {
    it(`${name}: spec profile sends stream_id "" and closes; soniox-sdk omits stream_id`, async () => {
      for (const [server, expectId] of [
        [s, true],
        [sdk, false],
      ] as const) {
        const c = await openTts(server.url);
        c.send(msg);
        const f = await c.next((x) => x.error_type !== undefined);
        expectErrorFrame(f, 'invalid_request', 400);
        if (expectId) expect(f.stream_id).toBe('');
        else expect(f).not.toHaveProperty('stream_id');
        await c.closed;
      }
    });
  }

  it('a key given at the handshake (Authorization header or soniox-api-key subprotocol) authenticates starts without api_key', async () => {
    const r = await s.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'tts_rt', expires_in_seconds: 60 }),
    });
    const { api_key: tempKey } = (await r.json()) as { api_key: string };
    for (const handshake of [{ headers: { authorization: `Bearer ${s.apiKey}` } }, { protocols: ['soniox-api-key', encodeURIComponent(tempKey)] }]) {
      const c = await openTts(s.url, handshake);
      const { api_key: _unused, ...start } = startMsg(s.apiKey, 'h') as Record<string, unknown>;
      c.send(start);
      c.send({ text: 'Hello.', text_end: true, stream_id: 'h' });
      await c.next(isTerminated('h'));
      expect(c.frames.some((f) => f.stream_id === 'h' && f.audio_end === true)).toBe(true);
      expect(c.frames.some((f) => f.error_type !== undefined)).toBe(false);
      c.close();
    }
    // Without a handshake key, such a message is not a start.
    const anon = await openTts(s.url);
    const { api_key: _k, ...start } = startMsg(s.apiKey, 'x') as Record<string, unknown>;
    anon.send(start);
    expectErrorFrame(await anon.next((x) => x.error_type !== undefined), 'invalid_request', 400);
    await anon.closed;
  });

  it('temporary key session cap: temp_api_key_session_expired, then the connection is dropped', async () => {
    const r = await s.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'tts_rt', expires_in_seconds: 60, max_session_duration_seconds: 1 }),
    });
    const key = ((await r.json()) as { api_key: string }).api_key;
    const c = await openTts(s.url);
    c.send(startMsg(key, 'tk'));
    const timer = setInterval(() => c.send({ text: 'word ', text_end: false, stream_id: 'tk' }), 200);
    expectErrorFrame(await c.next(isError('tk'), 5000), 'temp_api_key_session_expired', 403);
    clearInterval(timer);
    await c.closed;
  });
});

describe('concurrent TTS requests per project', () => {
  it('limit_exceeded (429) on HTTP and per stream while the slot is taken; freed when the stream ends', async () => {
    const one = await startParlance({ env: { PARLANCE_TTS_CONCURRENT_PROJECT: '1', PARLANCE_TTS_WS_REQUEST_TIMEOUT_SECONDS: '30' } });
    try {
      const body = JSON.stringify({ model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav', text: 'Hello.' });
      const post = () => one.request('/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const c = await openTts(one.url);
      c.send(startMsg(one.apiKey, 'hold'));
      c.send({ text: 'Holding the slot. ', text_end: false, stream_id: 'hold' });
      await c.next((f) => f.stream_id === 'hold' && typeof f.audio === 'string');
      const res = await post();
      expect(res.status).toBe(429);
      const b = (await res.json()) as Record<string, unknown>;
      expect(b.error_type).toBe('limit_exceeded');
      expect(b.error_code).toBe(429);
      c.send(startMsg(one.apiKey, 'second'));
      expectErrorFrame(await c.next(isError('second')), 'limit_exceeded', 429);
      await c.next(isTerminated('second'));
      c.send({ stream_id: 'hold', cancel: true });
      await c.next(isTerminated('hold'));
      const ok = await post();
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
      c.close();
    } finally {
      await one.stop();
    }
  });
});
