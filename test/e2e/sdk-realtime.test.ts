// Conformance with the official Node SDK (@soniox/node) for real-time transcription (docs/wire-compat.md, "Real-time
// STT WebSocket" and "Authentication on the sockets"), and temporary keys of usage type transcribe_websocket. Node 20
// has no global WebSocket: the `ws` class stands in, wrapped to record every raw server frame (the frame-shape test
// checks them).
import { rmSync } from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { AuthError, BadRequestError, type RealtimeToken, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket } from 'ws';
import { makeSpeech, startParlance, tempDir, type Parlance } from '../harness.js';

const execFileP = promisify(execFile);
const rawFrames: string[] = [];

class RecordingWebSocket extends WsWebSocket {
  constructor(...args: ConstructorParameters<typeof WsWebSocket>) {
    super(...args);
    this.addEventListener('message', (e) => {
      if (typeof e.data === 'string') rawFrames.push(e.data);
    });
  }
}

let s: Parlance;
let work: string;
let speech: Buffer;
let wav: Buffer;
let client: SonioxNodeClient;

const sdk = (api_key: string) =>
  new SonioxNodeClient({ api_key, base_url: s.url, realtime: { ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket` } });
const RAW = { model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function* chunks(audio: Buffer, size = 3200): AsyncGenerator<Buffer> {
  for (let i = 0; i < audio.length; i += size) yield audio.subarray(i, i + size);
}

function collect(session: ReturnType<SonioxNodeClient['realtime']['stt']>) {
  const tokens: RealtimeToken[] = [];
  const events: string[] = [];
  const finals: number[] = [];
  const errors: Error[] = [];
  session.on('result', (r) => {
    tokens.push(...r.tokens);
    finals.push(r.final_audio_proc_ms);
  });
  for (const e of ['endpoint', 'finalized', 'finished'] as const) session.on(e, () => events.push(e));
  session.on('error', (err) => errors.push(err));
  const text = () =>
    tokens
      .filter((t) => t.is_final)
      .map((t) => t.text)
      .join('');
  return { tokens, events, finals, errors, text };
}

beforeAll(async () => {
  (globalThis as { WebSocket?: unknown }).WebSocket = RecordingWebSocket;
  work = tempDir('parlance-sdk-rt-');
  const file = await makeSpeech(path.join(work, 'fox.wav'), 'the quick brown fox jumps over the lazy dog', { padSeconds: 1.5 });
  wav = readFileSync(file);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', file, '-f', 's16le', '-ar', '16000', '-ac', '1', '-y', `${file}.raw`]);
  speech = readFileSync(`${file}.raw`);
  s = await startParlance({ env: { PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS: '2' } });
  client = sdk(s.apiKey);
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('@soniox/node real-time STT against Parlance', () => {
  it('sendStream at real-time pace with finish → final tokens, monotonic final_audio_proc_ms, finished', async () => {
    const session = client.realtime.stt({ ...RAW });
    const got = collect(session);
    await session.connect();
    await session.sendStream(chunks(speech), { pace_ms: 100, finish: true });
    expect(got.errors).toEqual([]);
    expect(got.events).toContain('finished');
    expect(got.text()).toMatch(/fox/);
    expect(got.tokens.some((t) => !t.is_final)).toBe(true);
    expect(got.finals).toEqual([...got.finals].sort((a, b) => a - b));
  }, 30_000);

  it('audio_format auto with a WAV file', async () => {
    const session = client.realtime.stt({ model: 'stt-rt-v4', audio_format: 'auto' });
    const got = collect(session);
    await session.connect();
    await session.sendStream(chunks(wav, 8192), { finish: true });
    expect(got.errors).toEqual([]);
    expect(got.text()).toMatch(/fox/);
  });

  it('finalize({trailing_silence_ms}) mid-stream gives the finalized event and final tokens', async () => {
    const session = client.realtime.stt({ ...RAW });
    const got = collect(session);
    await session.connect();
    await session.sendStream(chunks(speech.subarray(0, 32_000 * 2)), { pace_ms: 5 });
    const finalized = new Promise<void>((r) => session.once('finalized', () => r()));
    session.finalize({ trailing_silence_ms: 300 });
    await finalized;
    expect(got.text().length).toBeGreaterThan(0);
    await session.sendStream(chunks(speech.subarray(32_000 * 2)), { pace_ms: 5, finish: true });
    expect(got.errors).toEqual([]);
    expect(got.events.filter((e) => e === 'finalized')).toHaveLength(1);
    // The markers never reach the user's tokens.
    expect(got.tokens.every((t) => !t.text.startsWith('<'))).toBe(true);
  });

  it('enable_endpoint_detection with speech then silence fires the endpoint event', async () => {
    const session = client.realtime.stt({ ...RAW, enable_endpoint_detection: true });
    const got = collect(session);
    await session.connect();
    const endpoint = new Promise<void>((r) => session.once('endpoint', () => r()));
    await session.sendStream(chunks(speech), { pace_ms: 20 });
    await endpoint;
    await session.finish();
    expect(got.errors).toEqual([]);
    expect(got.events[0]).toBe('endpoint');
  });

  it('pause() longer than the request-timeout window, then resume() — keepalives keep the session alive', async () => {
    const session = client.realtime.stt({ ...RAW }, { keepalive_interval_ms: 1000 });
    const got = collect(session);
    await session.connect();
    await session.sendStream(chunks(speech.subarray(0, 32_000)), { pace_ms: 5 });
    session.pause();
    await sleep(3500); // the server's window is 2 s
    session.resume();
    await session.sendStream(chunks(speech.subarray(32_000)), { pace_ms: 5, finish: true });
    expect(got.errors).toEqual([]);
    expect(got.events).toContain('finished');
    // pause() finalizes first.
    expect(got.events).toContain('finalized');
  }, 20_000);

  it('a bad key is an AuthError (401), an unknown model a BadRequestError (400), an object context is accepted', async () => {
    const bad = sdk('prl_not_a_key').realtime.stt({ ...RAW });
    const badErr = new Promise<Error>((r) => bad.once('error', r));
    await bad.connect();
    const e1 = await badErr;
    expect(e1).toBeInstanceOf(AuthError);
    expect((e1 as AuthError).statusCode).toBe(401);

    const unknown = client.realtime.stt({ ...RAW, model: 'stt-rt-v99' });
    const unknownErr = new Promise<Error>((r) => unknown.once('error', r));
    await unknown.connect();
    const e2 = await unknownErr;
    expect(e2).toBeInstanceOf(BadRequestError);
    expect((e2 as BadRequestError).statusCode).toBe(400);

    const ctx = client.realtime.stt({
      ...RAW,
      context: {
        general: [{ key: 'domain', value: 'animals' }],
        text: 'A story about a fox.',
        terms: ['fox'],
        translation_terms: [{ source: 'fox', target: 'zorro' }],
      },
      language_hints: ['en'],
      language_hints_strict: true,
      enable_speaker_diarization: true,
      enable_language_identification: true,
      client_reference_id: 'sdk-ctx',
      max_endpoint_delay_ms: 1500,
    });
    const got = collect(ctx);
    await ctx.connect();
    await ctx.sendStream(chunks(speech), { finish: true });
    expect(got.errors).toEqual([]);
    expect(got.text()).toMatch(/fox/);
  });

  it('a transcribe_websocket temporary key opens a session', async () => {
    const { api_key } = await client.auth.createTemporaryKey({ usage_type: 'transcribe_websocket', expires_in_seconds: 60 });
    const session = sdk(api_key).realtime.stt({ ...RAW });
    const got = collect(session);
    await session.connect();
    await session.sendStream(chunks(speech), { finish: true });
    expect(got.errors).toEqual([]);
    expect(got.text()).toMatch(/fox/);
  });

  it('no normal frame carries error_code or error_message; error frames do', () => {
    expect(rawFrames.length).toBeGreaterThan(20);
    let errorFrames = 0;
    for (const raw of rawFrames) {
      const f = JSON.parse(raw) as Record<string, unknown>;
      if ('error_type' in f) {
        errorFrames++;
        expect(typeof f.error_code).toBe('number');
        expect(typeof f.error_message).toBe('string');
      } else {
        expect(f).not.toHaveProperty('error_code');
        expect(f).not.toHaveProperty('error_message');
      }
    }
    expect(errorFrames).toBe(2);
  });
});
