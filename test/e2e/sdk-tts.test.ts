// Conformance with the official Node SDK (@soniox/node) for text-to-speech (docs/wire-compat.md, "TTS WebSocket" and
// "TTS over HTTP"), against a real server in the soniox-sdk profile and real engines.
import { SonioxHttpError, SonioxNodeClient } from '@soniox/node';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, type Parlance } from '../harness.js';
import { probeAudio } from './tts-helpers.js';

let s: Parlance;
/** The SDK's realtime streams need model and language (it fills them only from tts_defaults). */
const RT = { model: 'tts-rt-v2', language: 'en' } as const;
let client: SonioxNodeClient;

beforeAll(async () => {
  // Node 20 has no global WebSocket: the SDK's realtime client needs one.
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  s = await startParlance({ env: { PARLANCE_COMPAT: 'soniox-sdk' } });
  client = new SonioxNodeClient({
    api_key: s.apiKey,
    base_url: s.url,
    tts_api_url: s.url,
    realtime: {
      ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket`,
      tts_ws_url: `${s.url.replace('http', 'ws')}/tts-websocket`,
      tts_connection_options: { keepalive_interval_ms: 1000 },
    },
  });
});
afterAll(async () => s?.stop());

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('@soniox/node TTS against Parlance', () => {
  it('tts.listModels() includes the SDK default model and its voices', async () => {
    const models = await client.tts.listModels();
    const m = models.find((x) => x.id === 'tts-rt-v2')!;
    expect(m).toBeDefined();
    expect(m.voices.map((v) => v.id)).toContain('Adrian');
    expect(m.supports_speed_adjustment).toBe(true);
  });

  it('generate() gives a WAV (RIFF header); generateStream() streams chunks; a bad speed throws 400 before audio', async () => {
    const wav = Buffer.from(await client.tts.generate({ text: 'Hello from the SDK.', voice: 'Adrian' }));
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    const a = await probeAudio(wav, 'wav', 0);
    expect(a.seconds).toBeGreaterThan(0.5);

    let chunks = 0;
    const parts: Buffer[] = [];
    for await (const c of client.tts.generateStream({ text: 'First sentence. Second sentence. Third sentence.', voice: 'Maya', audio_format: 'mp3' })) {
      chunks++;
      parts.push(Buffer.from(c));
    }
    expect(chunks).toBeGreaterThan(1);
    const mp3 = await probeAudio(Buffer.concat(parts), 'mp3', 0);
    expect(mp3.codec).toBe('mp3');
    expect(mp3.seconds).toBeGreaterThan(1.5);

    const err = await client.tts.generate({ text: 'x', voice: 'Adrian', speed: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SonioxHttpError);
    expect((err as SonioxHttpError).statusCode).toBe(400);
  });

  it('realtime.tts with return_timestamps: audio, timestamps, audioEnd, terminated', async () => {
    const stream = await client.realtime.tts({ ...RT, voice: 'Adrian', audio_format: 'pcm_s16le', sample_rate: 16000, return_timestamps: true });
    const chars: string[] = [];
    let audioEnd = false;
    let terminated = false;
    stream.on('audio', (_chunk, ts) => {
      if (ts) chars.push(...ts.characters);
    });
    stream.on('audioEnd', () => (audioEnd = true));
    stream.on('terminated', () => (terminated = true));
    const audio = collect(stream);
    stream.sendText('Realtime speech ');
    stream.sendText('with timestamps.', { end: true });
    const pcm = await audio;
    expect(pcm.length / 2 / 16000).toBeGreaterThan(1);
    expect(chars.join('')).toBe('Realtime speech with timestamps.');
    expect(audioEnd).toBe(true);
    expect(terminated).toBe(true);
    stream.close();
  });

  it('multiStream with five concurrent streams and different voices', async () => {
    const conn = await client.realtime.tts.multiStream();
    const voices = ['Adrian', 'Maya', 'Oliver', 'Fiona', 'Noah'];
    const streams = await Promise.all(voices.map((voice) => conn.stream({ ...RT, voice, audio_format: 'pcm_s16le', sample_rate: 16000 })));
    const results = Promise.all(streams.map((st) => collect(st)));
    streams.forEach((st, i) => st.sendText(`This is ${voices[i]} speaking on stream ${i}.`, { end: true }));
    const pcms = await results;
    for (const p of pcms) expect(p.length / 2 / 16000).toBeGreaterThan(1);
    expect(new Set(pcms.map((p) => p.subarray(0, 8000).toString('base64'))).size).toBe(5);
    conn.close();
  });

  it('cancel() stops the stream and the server sends terminated', async () => {
    const stream = await client.realtime.tts({ ...RT, voice: 'Adrian', audio_format: 'pcm_s16le' });
    const terminated = new Promise<void>((r) => stream.on('terminated', () => r()));
    stream.sendText('A long text that will be cancelled before it finishes. '.repeat(10));
    stream.cancel();
    await terminated;
    stream.close();
  });

  it('an unknown voice next to a healthy stream: the error carries that stream id (404), the healthy one completes', async () => {
    const conn = await client.realtime.tts.multiStream();
    let connectionError: unknown;
    conn.on('error', (e) => (connectionError = e));
    const good = await conn.stream({ ...RT, voice: 'Maya', audio_format: 'pcm_s16le' });
    const bad = await conn.stream({ ...RT, voice: 'NoSuchVoice', audio_format: 'pcm_s16le' });
    const badError = new Promise<unknown>((r) => bad.on('error', (e) => r(e)));
    const goodAudio = collect(good);
    good.sendText('The healthy stream completes.', { end: true });
    const e = (await badError) as { code?: string; statusCode?: number; raw?: Record<string, unknown> };
    expect(e).toBeDefined();
    expect(JSON.stringify(e.raw ?? e)).toMatch(/voice_not_found|404/);
    expect((await goodAudio).length).toBeGreaterThan(16000);
    expect(connectionError).toBeUndefined();
    conn.close();
  });

  it('an idle connection with 1 s keepalives is accepted silently', async () => {
    const conn = await client.realtime.tts.multiStream();
    const errors: unknown[] = [];
    conn.on('error', (e) => errors.push(e));
    await new Promise((r) => setTimeout(r, 2500));
    expect(conn.isConnected).toBe(true);
    const st = await conn.stream({ ...RT, voice: 'Adrian', audio_format: 'pcm_s16le' });
    const audio = collect(st);
    st.sendText('Still connected.', { end: true });
    expect((await audio).length).toBeGreaterThan(8000);
    expect(errors).toEqual([]);
    conn.close();
  });

  it('a tts_rt temporary key works for generate and realtime.tts', async () => {
    const { api_key } = await client.auth.createTemporaryKey({ usage_type: 'tts_rt', expires_in_seconds: 60 });
    const temp = new SonioxNodeClient({
      api_key,
      base_url: s.url,
      tts_api_url: s.url,
      realtime: {
        ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket`,
        tts_ws_url: `${s.url.replace('http', 'ws')}/tts-websocket`,
      },
    });
    const wav = Buffer.from(await temp.tts.generate({ text: 'Temporary key.', voice: 'Adrian' }));
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    const st = await temp.realtime.tts({ ...RT, voice: 'Adrian', audio_format: 'pcm_s16le' });
    const audio = collect(st);
    st.sendText('Temporary key over the socket.', { end: true });
    expect((await audio).length).toBeGreaterThan(8000);
    st.close();
  });
});
