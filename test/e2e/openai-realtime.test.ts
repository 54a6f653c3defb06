// OpenAI Realtime transcription sessions (/v1/realtime) end to end: the official `openai` SDK's realtime WebSocket
// clients (GA and beta) against a real server, flite speech at 24 kHz, pocketsphinx; raw `ws` for what the SDK would
// not send (malformed events, binary frames, oversized messages, browser subprotocols).
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import { makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { appendAll, collect, type Conn, errorOf, sdkSession } from './openai-helpers.js';

const execFileP = promisify(execFile);
const FOX = 'the quick brown fox jumps over the lazy dog';
const WELL = 'it is easy to tell the depth of a well';
const work = tempDir('parlance-openai-rt-e2e-');
/** 24 kHz mono s16le, each sentence followed by 1.5 s of silence. */
let fox: Buffer;
let well: Buffer;
/** The fox sentence as G.711 µ-law at 8 kHz. */
let foxUlaw: Buffer;

async function pcm(text: string, name: string, args: string[]): Promise<Buffer> {
  const wav = await makeSpeech(path.join(work, `${name}.wav`), text, { padSeconds: 1.5 });
  const out = path.join(work, `${name}.raw`);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', wav, ...args, '-y', out]);
  return readFileSync(out);
}

beforeAll(async () => {
  fox = await pcm(FOX, 'fox', ['-f', 's16le', '-ar', '24000', '-ac', '1']);
  well = await pcm(WELL, 'well', ['-f', 's16le', '-ar', '24000', '-ac', '1']);
  foxUlaw = await pcm(FOX, 'fox-ulaw', ['-f', 'mulaw', '-ar', '8000', '-ac', '1']);
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A raw `ws` session (Bearer key unless `headers` / `protocols` say otherwise). */
async function rawSession(
  s: Parlance,
  opts: { headers?: Record<string, string>; protocols?: string[]; query?: string } = {},
): Promise<Conn & { ws: WebSocket }> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime?${opts.query ?? 'intent=transcription'}`, opts.protocols ?? [], {
    headers: opts.headers ?? { authorization: `Bearer ${s.apiKey}` },
  });
  const conn = collect(
    ws,
    (e) => ws.send(JSON.stringify(e)),
    () => ws.close(1000),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ...conn, ws };
}

/** The upgrade refused: HTTP status and JSON body. */
async function refusedUpgrade(
  s: Parlance,
  headers: Record<string, string>,
  query = 'intent=transcription',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime?${query}`, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) as Record<string, unknown> }));
    });
  });
}

const completedEvents = (c: Conn) => c.events.filter((e) => e.type === 'conversation.item.input_audio_transcription.completed');
const wer = (ref: string, hyp: string) =>
  wordErrorRate(
    ref,
    hyp
      .toLowerCase()
      .replace(/[^a-z' ]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  ).wer;

describe('OpenAI Realtime transcription sessions', () => {
  let s: Parlance;
  beforeAll(async () => {
    // Words are checked, not a loaded machine's timing: final words always come from the second pass.
    s = await startParlance({ env: { PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000', PARLANCE_WS_MAX_MESSAGE_BYTES: '262144' } });
  }, 60_000);
  afterAll(() => s.stop());

  it("GA session.update with server VAD: one item per sentence, events in OpenAI's order, deltas adding up to the transcript", async () => {
    const c = await sdkSession(s, s.apiKey);
    const created = await c.until((e) => e.type === 'session.created');
    expect(created.session).toMatchObject({
      type: 'transcription',
      audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: { type: 'server_vad' } } },
    });
    c.send({
      type: 'session.update',
      session: {
        type: 'transcription',
        audio: {
          input: {
            format: { type: 'audio/pcm', rate: 24000 },
            transcription: { model: 'gpt-4o-transcribe', language: 'en' },
            turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 },
          },
        },
      },
    });
    const updated = await c.until((e) => e.type === 'session.updated');
    expect(updated.session).toMatchObject({
      type: 'transcription',
      audio: { input: { transcription: { model: 'gpt-4o-transcribe', language: 'en' }, turn_detection: { silence_duration_ms: 500 } } },
    });
    appendAll(c, Buffer.concat([fox, well]));
    await waitFor(
      async () => completedEvents(c).length,
      (n) => n >= 2,
      120_000,
    );
    c.close();
    await c.closed;
    expect(c.errors).toEqual([]);

    const ids = c.events.map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^event_\w+$/);
    const [first, second] = completedEvents(c);
    const transcripts = [first!, second!].map((e) => e.transcript as string);
    expect(wer(FOX, transcripts[0]!), transcripts[0]).toBeLessThan(0.5);
    expect(wer(WELL, transcripts[1]!), transcripts[1]).toBeLessThan(0.5);
    let previous: string | null = null;
    for (const done of [first!, second!]) {
      const item = done.item_id as string;
      expect(item).toMatch(/^item_\w+$/);
      const mine = c.events.filter((e) => e.item_id === item);
      // speech_started → speech_stopped → committed → deltas → completed, all for the same item.
      expect(mine.map((e) => e.type).filter((t, i, a) => a.indexOf(t) === i)).toEqual([
        'input_audio_buffer.speech_started',
        'input_audio_buffer.speech_stopped',
        'input_audio_buffer.committed',
        'conversation.item.input_audio_transcription.delta',
        'conversation.item.input_audio_transcription.completed',
      ]);
      const started = mine[0]!;
      const stopped = mine.find((e) => e.type === 'input_audio_buffer.speech_stopped')!;
      expect(stopped.audio_end_ms as number).toBeGreaterThan(started.audio_start_ms as number);
      const committed = mine.find((e) => e.type === 'input_audio_buffer.committed')!;
      expect(committed.previous_item_id).toBe(previous);
      previous = item;
      const deltas = mine.filter((e) => e.type === 'conversation.item.input_audio_transcription.delta');
      expect(deltas.map((d) => d.delta).join('')).toBe(done.transcript);
      expect(done).toMatchObject({ content_index: 0, usage: { type: 'duration' } });
      expect((done.usage as { seconds: number }).seconds).toBeGreaterThan(1);
    }
    // The second sentence starts after the first one stopped.
    const stops = c.events.filter((e) => e.type === 'input_audio_buffer.speech_stopped');
    const starts = c.events.filter((e) => e.type === 'input_audio_buffer.speech_started');
    expect(starts[1]!.audio_start_ms as number).toBeGreaterThanOrEqual(stops[0]!.audio_end_ms as number);
    expect(stops[0]!.audio_end_ms as number).toBeLessThan(fox.length / 48);
  }, 180_000);

  it('beta transcription_session.update, turn_detection null: commit finalizes what was sent, clear discards it, empty commits are refused', async () => {
    const c = await sdkSession(s, s.apiKey, { beta: true });
    await c.until((e) => e.type === 'transcription_session.created');
    c.send({
      type: 'transcription_session.update',
      session: {
        input_audio_format: 'pcm16',
        input_audio_transcription: { model: 'whisper-1' },
        turn_detection: null,
        include: ['item.input_audio_transcription.logprobs'],
      },
    });
    const updated = await c.until((e) => e.type === 'transcription_session.updated');
    expect(updated.session).toMatchObject({ input_audio_format: 'pcm16', turn_detection: null, input_audio_transcription: { model: 'whisper-1' } });

    c.send({ type: 'input_audio_buffer.commit', event_id: 'evt_empty' });
    const empty = errorOf(await c.until((e) => e.type === 'error'));
    expect(empty).toMatchObject({ type: 'invalid_request_error', code: 'input_audio_buffer_commit_empty', event_id: 'evt_empty' });

    // The well sentence is cleared before the commit: the item has the fox sentence only.
    appendAll(c, well);
    c.send({ type: 'input_audio_buffer.clear' });
    await c.until((e) => e.type === 'input_audio_buffer.cleared');
    appendAll(c, fox);
    c.send({ type: 'input_audio_buffer.commit' });
    const committed = await c.until((e) => e.type === 'input_audio_buffer.committed');
    expect(committed.previous_item_id).toBeNull();
    const done = await c.until((e) => e.type === 'conversation.item.input_audio_transcription.completed');
    expect(done.item_id).toBe(committed.item_id);
    expect(wer(FOX, done.transcript as string), done.transcript as string).toBeLessThan(0.5);
    expect(done.transcript).not.toMatch(/easy|depth/i);
    const logprobs = done.logprobs as { token: string; logprob: number; bytes: number[] }[];
    expect(logprobs.map((l) => l.token).join('')).toBe(done.transcript);
    for (const l of logprobs) expect(l.logprob).toBeLessThanOrEqual(0);
    expect((done.usage as { seconds: number }).seconds).toBeCloseTo(fox.length / 48 / 1000, 1);

    // A second commit: its item follows the first.
    appendAll(c, well);
    c.send({ type: 'input_audio_buffer.commit' });
    const second = await c.until((e) => e.type === 'input_audio_buffer.committed' && e !== committed);
    expect(second.previous_item_id).toBe(committed.item_id);
    const done2 = await c.until((e) => e.type === 'conversation.item.input_audio_transcription.completed' && e !== done);
    expect(wer(WELL, done2.transcript as string), done2.transcript as string).toBeLessThan(0.5);
    // No VAD events with turn detection off; the empty commit's error did not end the session.
    expect(c.events.some((e) => e.type.startsWith('input_audio_buffer.speech_'))).toBe(false);
    c.close();
    expect(await c.closed).toBe(1000);
  }, 180_000);

  it('G.711 µ-law input (audio/pcmu) through a browser-style subprotocol key', async () => {
    const c = await rawSession(s, { headers: {}, protocols: ['realtime', `openai-insecure-api-key.${s.apiKey}`] });
    expect(c.ws.protocol).toBe('realtime');
    await c.until((e) => e.type === 'session.created');
    c.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcmu' }, turn_detection: null } } } });
    await c.until((e) => e.type === 'session.updated');
    appendAll(c, foxUlaw, 8);
    c.send({ type: 'input_audio_buffer.commit' });
    const done = await c.until((e) => e.type === 'conversation.item.input_audio_transcription.completed');
    expect(wer(FOX, done.transcript as string), done.transcript as string).toBeLessThan(0.5);
    c.close();
  }, 120_000);

  it("a temporary key works like OpenAI's ephemeral key, is metered under its client_reference_id, and a single-use one is spent", async () => {
    const res = await s.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'transcribe_websocket', expires_in_seconds: 60, single_use: true, client_reference_id: 'openai-rt-1' }),
    });
    expect(res.status).toBe(201);
    const { api_key: temp } = (await res.json()) as { api_key: string };
    const c = await sdkSession(s, temp);
    await c.until((e) => e.type === 'session.created');
    c.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: null } } } });
    appendAll(c, fox);
    c.send({ type: 'input_audio_buffer.commit' });
    const done = await c.until((e) => e.type === 'conversation.item.input_audio_transcription.completed');
    expect(done.transcript).toMatch(/fox|dog/);
    c.close();
    await c.closed;

    // Metered as a native real-time session: the audio streamed, under the model serving OpenAI's names.
    const logs = await waitFor(
      async () =>
        (
          (await (
            await s.request(
              `/v1/usage-logs?start_time=${encodeURIComponent(new Date(Date.now() - 600_000).toISOString())}&end_time=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
            )
          ).json()) as { usage_logs: { client_reference_id: string | null; model: string; input_audio_duration_ms: number }[] }
        ).usage_logs,
      (l) => l.some((x) => x.client_reference_id === 'openai-rt-1'),
      20_000,
    );
    const log = logs.find((x) => x.client_reference_id === 'openai-rt-1')!;
    expect(log.model).toBe('parlance-rt-en-v1');
    expect(Math.abs(log.input_audio_duration_ms - fox.length / 48)).toBeLessThan(30);

    const spent = await refusedUpgrade(s, { authorization: `Bearer ${temp}` });
    expect(spent.status).toBe(401);
    expect(spent.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
  }, 120_000);

  it("a bad or missing key, or another intent, refuses the handshake with OpenAI's error body; the SDK reports it", async () => {
    const bad = await refusedUpgrade(s, { authorization: 'Bearer sk-not-a-key' });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    expect((await refusedUpgrade(s, {})).status).toBe(401);
    const intent = await refusedUpgrade(s, { authorization: `Bearer ${s.apiKey}` }, 'intent=conversation');
    expect(intent).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', code: 'invalid_request' } } });
    await expect(sdkSession(s, 'sk-not-a-key')).rejects.toThrow(/401/);
  });

  it('bad events get error events naming the problem (and the client event_id); the session goes on', async () => {
    const c = await rawSession(s);
    await c.until((e) => e.type === 'session.created');
    const cases: [string, (e: ReturnType<typeof errorOf>) => void][] = [
      ['{not json', (e) => expect(e).toMatchObject({ code: 'invalid_json', param: null, event_id: null })],
      ['[1,2]', (e) => expect(e).toMatchObject({ code: 'invalid_event' })],
      [JSON.stringify({ event_id: 'e1' }), (e) => expect(e).toMatchObject({ code: 'missing_required_parameter', param: 'type', event_id: 'e1' })],
      [JSON.stringify({ type: 'nope', event_id: 'e2' }), (e) => expect(e).toMatchObject({ code: 'invalid_value', param: 'type', event_id: 'e2' })],
      [JSON.stringify({ type: 'response.create' }), (e) => expect(e).toMatchObject({ code: 'unsupported_event', param: 'type' })],
      [
        JSON.stringify({ type: 'session.update', session: { type: 'realtime' } }),
        (e) => expect(e).toMatchObject({ code: 'invalid_value', param: 'session.type' }),
      ],
      [JSON.stringify({ type: 'session.update', session: {} }), (e) => expect(e).toMatchObject({ code: 'missing_required_parameter', param: 'session.type' })],
      [
        JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } }),
        (e) => expect(e).toMatchObject({ code: 'invalid_value', param: expect.stringMatching(/^session\.audio\.input\.format/) }),
      ],
      [
        JSON.stringify({
          type: 'session.update',
          session: { type: 'transcription', audio: { input: { turn_detection: { type: 'server_vad', silence_duration_ms: -1 } } } },
        }),
        (e) => expect(e).toMatchObject({ code: 'invalid_value', param: expect.stringMatching(/^session\.audio\.input\.turn_detection/) }),
      ],
      [
        JSON.stringify({ type: 'transcription_session.update', session: { input_audio_format: 'mp3' } }),
        (e) => expect(e).toMatchObject({ param: 'session.input_audio_format' }),
      ],
      [
        JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { model: 'no-such-model' } } } } }),
        (e) =>
          expect(e).toMatchObject({
            code: 'model_not_found',
            param: 'session.audio.input.transcription.model',
            message: expect.stringMatching(/parlance-rt-en-v1/),
          }),
      ],
      [
        JSON.stringify({ type: 'transcription_session.update', session: { input_audio_transcription: { prompt: '.'.repeat(8001) } } }),
        (e) => expect(e).toMatchObject({ code: 'invalid_value', param: 'session.input_audio_transcription.prompt' }),
      ],
      [JSON.stringify({ type: 'input_audio_buffer.append' }), (e) => expect(e).toMatchObject({ code: 'missing_required_parameter', param: 'audio' })],
      [
        JSON.stringify({ type: 'input_audio_buffer.append', audio: '@@@', event_id: 'e3' }),
        (e) => expect(e).toMatchObject({ code: 'invalid_value', param: 'audio', event_id: 'e3' }),
      ],
      [JSON.stringify({ type: 'input_audio_buffer.commit' }), (e) => expect(e).toMatchObject({ code: 'input_audio_buffer_commit_empty' })],
    ];
    for (const [text, check] of cases) {
      const before = c.events.length;
      c.ws.send(text);
      const e = await c.until((x) => c.events.indexOf(x) >= before && x.type === 'error');
      const err = errorOf(e);
      expect(err.type, text).toBe('invalid_request_error');
      check(err);
    }
    // The prompt's token cap at its boundary (every '.' is a token).
    const atCap = c.events.length;
    c.send({ type: 'transcription_session.update', session: { input_audio_transcription: { prompt: '.'.repeat(8000) } } });
    expect(await c.until((x) => c.events.indexOf(x) >= atCap)).toMatchObject({ type: 'transcription_session.updated' });
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(
      errorOf(
        await c.until(
          (x) => x.type === 'error' && (x.error as { code: string }).code === 'invalid_event' && (x.error as { message: string }).message.includes('Binary'),
        ),
      ),
    ).toMatchObject({ param: null });

    // Once audio flows the recognizer's format is fixed; turn detection may still change.
    appendAll(c, fox.subarray(0, 48_000));
    c.send({ type: 'session.update', event_id: 'e4', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcmu' } } } } });
    expect(errorOf(await c.until((x) => x.type === 'error' && (x.error as { event_id: string | null }).event_id === 'e4'))).toMatchObject({
      code: 'invalid_value',
      param: 'session.audio.input.format',
    });
    const before = c.events.length;
    c.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: null } } } });
    const ok = await c.until((x) => c.events.indexOf(x) >= before && x.type === 'session.updated');
    expect((ok.session as { audio: { input: { turn_detection: unknown } } }).audio.input.turn_detection).toBeNull();
    c.close();
    expect(await c.closed).toBe(1000);
  }, 60_000);

  it('a message over the size limit gets an error event, then the connection closes', async () => {
    const c = await rawSession(s);
    await c.until((e) => e.type === 'session.created');
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(262_144) }));
    const err = errorOf(await c.until((e) => e.type === 'error'));
    expect(err).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect(err.message).toMatch(/262144 bytes/);
    expect(await c.closed).toBe(1000);
  });
});

describe('OpenAI Realtime limits', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '1', PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS: '2' } });
  }, 60_000);
  afterAll(() => s.stop());

  it("the project's concurrent-stream limit holds across both real-time surfaces: the second session gets rate_limit_exceeded and closes", async () => {
    const a = await rawSession(s);
    appendAll(a, fox.subarray(0, 24_000));
    // The first session holds its slot once its recognizer runs: a completed item shows it.
    a.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: null } } } });
    a.send({ type: 'input_audio_buffer.commit' });
    await a.until((e) => e.type === 'conversation.item.input_audio_transcription.completed');
    const b = await rawSession(s);
    appendAll(b, fox.subarray(0, 4800));
    const err = errorOf(await b.until((e) => e.type === 'error'));
    expect(err).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(await b.closed).toBe(1000);
    // The native socket counts against the same limit.
    const native = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
    await new Promise((r) => native.once('open', r));
    const refused = new Promise<Record<string, unknown>>((r) => native.once('message', (m) => r(JSON.parse(m.toString()) as Record<string, unknown>)));
    native.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
    expect(await refused).toMatchObject({ error_type: 'limit_exceeded' });
    a.close();
    await a.closed;
    // The slot is free again once the first session ended.
    await waitFor(
      async () => {
        const c = await rawSession(s);
        appendAll(c, fox.subarray(0, 24_000));
        c.send({ type: 'input_audio_buffer.commit' });
        const done = await c.until((x) => x.type === 'conversation.item.input_audio_transcription.completed' || x.type === 'error');
        c.close();
        await c.closed;
        return done.type;
      },
      (t) => t === 'conversation.item.input_audio_transcription.completed',
      20_000,
    );
  }, 120_000);

  it('no audio within the real-time audio timeout: a request_timeout error event, then close', async () => {
    const c = await rawSession(s);
    await c.until((e) => e.type === 'session.created');
    const err = errorOf(await c.until((e) => e.type === 'error', 10_000));
    expect(err).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout' });
    expect(await c.closed).toBe(1000);
  });

  it('audio that stops for the timeout ends a running session the same way', async () => {
    const c = await rawSession(s);
    appendAll(c, fox.subarray(0, 24_000));
    const err = errorOf(await c.until((e) => e.type === 'error', 15_000));
    expect(err).toMatchObject({ code: 'request_timeout' });
    expect(await c.closed).toBe(1000);
  });
});

describe('OpenAI Realtime shutdown', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_SHUTDOWN_DRAIN_SECONDS: '30' } });
  }, 60_000);
  afterAll(() => s.stop());

  // SIGTERM itself: the harness's stop() would cut a drain longer than 5 s.
  it('a graceful shutdown completes the turn under way before the connection closes', async () => {
    const c = await rawSession(s);
    // Mid-sentence: no pause has ended the turn yet.
    appendAll(c, fox.subarray(0, 48 * 2000));
    const started = await c.until((e) => e.type === 'input_audio_buffer.speech_started');
    process.kill(s.pid, 'SIGTERM');
    const done = await c.until((e) => e.type === 'conversation.item.input_audio_transcription.completed', 40_000);
    expect(done.item_id).toBe(started.item_id);
    expect(done.transcript).toMatch(/quick|brown|fox/i);
    expect(c.events.find((e) => e.type === 'input_audio_buffer.committed')!.item_id).toBe(started.item_id);
    expect(await c.closed).toBe(1000);
    expect(await s.exited).toBe(0);
  }, 60_000);
});
