// Graceful shutdown (SIGTERM) of a real server process: live real-time sessions get their remaining final tokens and
// the completion frame, TTS streams already started run to their end while new ones are refused, HTTP responses
// under way complete, new connections are refused, and the process exits 0 once everything is done (not at the end
// of the drain time). Whatever is still live when the drain time runs out gets the spec's error frame, then close.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { logLines, makeSpeech, startParlance, tempDir, type Parlance, waitFor } from '../harness.js';
import type { SttReceivedFrame } from '../../src/wire/stt-frames.js';
import { openTts, startMsg, streamAudio } from './tts-helpers.js';

const work = tempDir('parlance-shutdown-');
/** 16 kHz mono s16le speech (two sentences, about 6 s). */
let speech: Buffer;
const servers: Parlance[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(work, { recursive: true, force: true });
});

beforeAll(async () => {
  const wav = await makeSpeech(path.join(work, 'speech.wav'), 'the birch canoe slid on the smooth planks. glue the sheet to the dark blue background.', {
    format: 's16le',
  });
  speech = readFileSync(wav);
});

async function server(env: Record<string, string>): Promise<Parlance> {
  const s = await startParlance({ env: { PARLANCE_REALTIME_WARM_DECODERS: '0', ...env } });
  servers.push(s);
  return s;
}

type Frame = SttReceivedFrame;

/** A real-time session: its frames, and its close code once the server closed it. */
async function session(s: Parlance, config = true): Promise<{ ws: WebSocket; frames: Frame[]; closed: Promise<number> }> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: Frame[] = [];
  ws.on('message', (m) => frames.push(JSON.parse(m.toString()) as Frame));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  if (config) ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
  return { ws, frames, closed };
}

/** Whether a new WebSocket to `url` is refused (connection refused, or an HTTP answer instead of the upgrade). */
function refused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.once('open', () => {
      ws.close();
      resolve(false);
    });
    ws.once('error', () => resolve(true));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('graceful shutdown', () => {
  it('SIGTERM: a live session gets its remaining final tokens and finished; TTS and HTTP under way complete; exit 0', async () => {
    // Info logs: the drain's own lines say when it ended.
    const s = await server({ PARLANCE_SHUTDOWN_DRAIN_SECONDS: '120', PARLANCE_TTS_WS_REQUEST_TIMEOUT_SECONDS: '60', PARLANCE_LOG_LEVEL: 'info' });
    // A live real-time session, 2.5 s into the speech at real-time pace.
    const stt = await session(s);
    const sent = 32_000 * 2.5;
    for (let off = 0; off < sent; off += 3200) {
      stt.ws.send(speech.subarray(off, off + 3200));
      await sleep(100);
    }
    // A TTS stream with text but no text_end yet, and a TTS WebSocket with nothing started.
    const tts = await openTts(s.url);
    tts.send(startMsg(s.apiKey, 'live'));
    tts.send({ text: 'This stream started before the server was asked to stop. ', text_end: false, stream_id: 'live' });
    await tts.next((f) => f.stream_id === 'live' && typeof f.audio === 'string', 30_000);
    // An HTTP response under way: a long text spoken over POST /tts, its headers already received.
    const http = await s.request('/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tts-rt-v2',
        language: 'en',
        voice: 'Adrian',
        audio_format: 'pcm_s16le',
        sample_rate: 16000,
        text: 'A response that is still being spoken. '.repeat(40),
      }),
    });
    expect(http.status).toBe(200);

    process.kill(s.pid, 'SIGTERM');
    // The session ends as if its client had sent the end frame: final tokens for the audio it got, then finished.
    expect(await stt.closed).toBe(1000);
    const last = stt.frames[stt.frames.length - 1]!;
    expect(last).toMatchObject({ tokens: [], finished: true });
    expect(stt.frames.some((f) => f.error_type)).toBe(false);
    const finalText = stt.frames.flatMap((f) => f.tokens.filter((t) => t.is_final).map((t) => t.text)).join('');
    // 2.5 s of the first sentence ("the birch canoe slid on the smooth planks"): its words came out final.
    expect(finalText.trim().split(/\s+/).length).toBeGreaterThanOrEqual(4);
    // Nothing new is accepted: neither a session nor a TTS stream on the open connection.
    expect(await refused(`${s.url.replace('http', 'ws')}/transcribe-websocket`)).toBe(true);
    tts.send(startMsg(s.apiKey, 'new'));
    const refusal = await tts.next((f) => f.stream_id === 'new' && f.error_type !== undefined);
    expect(refusal).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
    expect(refusal.error_message).toMatch(/shutting down/);
    await tts.next((f) => f.stream_id === 'new' && f.terminated === true);
    // The stream already started still takes text and finishes; then the connection closes normally.
    tts.send({ text: 'And it still ends with all its audio.', text_end: true, stream_id: 'live' });
    await tts.next((f) => f.stream_id === 'live' && f.audio_end === true, 60_000);
    await tts.next((f) => f.stream_id === 'live' && f.terminated === true);
    expect(tts.frames.filter((f) => f.stream_id === 'live' && f.error_type !== undefined)).toEqual([]);
    expect(streamAudio(tts.frames, 'live').length).toBeGreaterThan(32_000);
    expect((await tts.closed).code).toBe(1000);
    // The HTTP response under way completes: all of its audio (a truncated body would fail to read).
    const audio = Buffer.from(await http.arrayBuffer());
    expect(audio.length / 32_000).toBeGreaterThan(20);
    // Done as soon as all of it finished: the drain ended with the work, before its 120 s deadline could.
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toMatch(/received SIGTERM, shutting down/);
    const draining = logLines(s).find((l) => l.msg === 'draining live sessions and requests');
    const over = logLines(s).find((l) => l.msg === 'drain over');
    expect(draining).toMatchObject({ drain_ms: 120_000 });
    expect(over!.ms as number).toBeLessThan(draining!.drain_ms as number);
  }, 180_000);

  it('the drain time runs out: what is still live gets an error frame, then close; a second signal does not wait', async () => {
    const s = await server({ PARLANCE_SHUTDOWN_DRAIN_SECONDS: '1', PARLANCE_TTS_WS_REQUEST_TIMEOUT_SECONDS: '60' });
    // A socket that never sent its configuration: refused at once (no session can start any more).
    const idle = await session(s, false);
    // A TTS stream whose client never sends text_end: still live when the drain time ends.
    const tts = await openTts(s.url);
    tts.send(startMsg(s.apiKey, 'open'));
    tts.send({ text: 'Words without an end. ', text_end: false, stream_id: 'open' });
    await tts.next((f) => f.stream_id === 'open' && typeof f.audio === 'string', 30_000);
    process.kill(s.pid, 'SIGTERM');
    expect(await idle.closed).toBe(1000);
    expect(idle.frames).toHaveLength(1);
    expect(idle.frames[0]).toMatchObject({ tokens: [], error_type: 'limit_exceeded', error_code: 429 });
    const cut = await tts.next((f) => f.stream_id === 'open' && f.error_type !== undefined, 30_000);
    expect(cut).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
    await tts.next((f) => f.stream_id === 'open' && f.terminated === true);
    expect((await tts.closed).code).toBe(1000);
    expect(await s.exited).toBe(0);

    // A second signal cuts a long drain short.
    const t = await server({ PARLANCE_SHUTDOWN_DRAIN_SECONDS: '600', PARLANCE_TTS_WS_REQUEST_TIMEOUT_SECONDS: '600' });
    const waiting = await openTts(t.url);
    waiting.send(startMsg(t.apiKey, 'w'));
    waiting.send({ text: 'Still waiting for the rest. ', text_end: false, stream_id: 'w' });
    await waiting.next((f) => f.stream_id === 'w' && typeof f.audio === 'string', 30_000);
    process.kill(t.pid, 'SIGTERM');
    // The second signal only once the first one has been taken.
    await waitFor(
      async () => t.stderr(),
      (log) => log.includes('received SIGTERM, shutting down'),
      30_000,
      20,
    );
    process.kill(t.pid, 'SIGINT');
    await waiting.next((f) => f.stream_id === 'w' && f.error_type === 'limit_exceeded', 30_000);
    expect(await t.exited).toBe(0);
    expect(t.stderr()).toMatch(/received SIGINT again/);
  }, 180_000);
});
