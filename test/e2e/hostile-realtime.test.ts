// A hostile probe of the OpenAI Realtime WebSocket (/v1/realtime), with the native sockets where they share the
// dispatcher (src/http/websocket.ts): garbage on the text channel, invalid UTF-8, unfinished and oversized messages,
// sockets that never configure or go silent, and another project's key next to a running session. Every problem is
// the surface's own error event (OpenAI's `error`, the native error frames) and then a normal close; a silent session
// is timed out (short timeouts here) with its concurrency slot freed and its audio metered. The table of what was
// tried is docs/guide/security.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Parlance, startParlance, waitFor } from '../harness.js';

const MAX_MESSAGE_BYTES = 65_536;
let s: Parlance;
let keyB: string;

beforeAll(async () => {
  s = await startParlance({
    env: {
      PARLANCE_WS_MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES),
      PARLANCE_WS_FIRST_MESSAGE_TIMEOUT_SECONDS: '1.5',
      PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS: '2',
    },
  });
  const project = await s.admin<{ id: string }>('create-project', '--name', 'Project B');
  keyB = (await s.admin<{ api_key: string }>('create-key', '--project', project.id)).api_key;
}, 60_000);

afterAll(async () => s?.stop());

type Event = Record<string, unknown> & { type: string };
interface Session {
  ws: WebSocket;
  events: Event[];
  /** The first event (received or coming) of `type`. */
  next(type: string): Promise<Event>;
  closed: Promise<number>;
}

/** A socket on `path` (the OpenAI session by default), its JSON messages collected. */
async function open(path = '/v1/realtime?intent=transcription', key = s.apiKey): Promise<Session> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const events: Event[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    events.push(JSON.parse(String(data)) as Event);
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  void closed.then(() => waiters.splice(0).forEach((w) => w()));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const next = async (type: string): Promise<Event> => {
    for (;;) {
      const hit = events.find((e) => e.type === type);
      if (hit) return hit;
      if (ws.readyState === ws.CLOSED) throw new Error(`closed without ${type}; events: ${JSON.stringify(events)}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { ws, events, next, closed };
}

const errors = (c: Session) => c.events.filter((e) => e.type === 'error').map((e) => e.error as Record<string, unknown>);
const append = (c: Session, bytes: Buffer) => c.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: bytes.toString('base64') }));

async function projectStreams(key: string): Promise<number> {
  const report = (await (await s.request('/v1/concurrency-limits', { key })).json()) as { project: { current: { transcribe_concurrent: number } } };
  return report.project.current.transcribe_concurrent;
}

async function usageSeconds(key: string): Promise<number> {
  const res = await s.request('/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z&limit=1000', { key });
  const logs = ((await res.json()) as { usage_logs: { input_audio_duration_ms: number | null }[] }).usage_logs;
  return logs.reduce((n, l) => n + (l.input_audio_duration_ms ?? 0), 0) / 1000;
}

describe('malformed input', () => {
  it('binary frames, non-JSON, non-objects, unknown and conversation events, wrong types: error events, the session goes on', async () => {
    const c = await open();
    await c.next('session.created');
    c.ws.send(Buffer.from([0, 1, 2, 255]), { binary: true });
    for (const text of [
      'not json',
      '[]',
      '42',
      '{"type": 5}',
      '{"type":"bogus.event"}',
      '{"type":"response.create"}',
      '{"type":"session.update","session":"x"}',
    ])
      c.ws.send(text);
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: '!!!not base64' }));
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: 12 }));
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    c.ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { model: 'nope' } } } } }));
    c.ws.send(
      JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { prompt: 'p'.repeat(20_000) } } } } }),
    );
    c.ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription' } }));
    await c.next('session.updated');
    const codes = errors(c).map((e) => e.code);
    expect(codes).toEqual([
      'invalid_event',
      'invalid_json',
      'invalid_event',
      'invalid_event',
      'missing_required_parameter',
      'invalid_value',
      'unsupported_event',
      'invalid_value',
      'invalid_value',
      'invalid_value',
      'input_audio_buffer_commit_empty',
      'model_not_found',
      'invalid_value',
    ]);
    for (const e of errors(c)) expect(e.type).toBe('invalid_request_error');
    c.ws.close(1000);
    expect(await c.closed).toBe(1000);
  });

  // Found by this probe: ws closed such a socket with 1007 at once, and the client never heard why, on all three
  // surfaces.
  it('a text message that is not UTF-8: an error event saying so, then close 1000, on every socket surface', async () => {
    const c = await open();
    await c.next('session.created');
    c.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await c.closed).toBe(1000);
    expect(errors(c)).toEqual([
      expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_request', message: 'A text message is not valid UTF-8.' }),
    ]);
    for (const path of ['/transcribe-websocket', '/tts-websocket']) {
      const n = await open(path);
      n.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
      expect(await n.closed, path).toBe(1000);
      expect(n.events, path).toEqual([
        expect.objectContaining({ error_code: 400, error_type: 'invalid_request', error_message: 'A text message is not valid UTF-8.' }),
      ]);
    }
  });

  it('a message over the size limit: an error event, then close', async () => {
    const c = await open();
    await c.next('session.created');
    append(c, Buffer.alloc(MAX_MESSAGE_BYTES));
    await c.closed;
    expect(errors(c)).toEqual([
      expect.objectContaining({ code: 'invalid_request', message: expect.stringContaining(`larger than ${MAX_MESSAGE_BYTES} bytes`) }),
    ]);
  });
});

describe('slow input', () => {
  it('a socket that never sends anything: request_timeout, then close', async () => {
    const c = await open();
    expect(await c.closed).toBe(1000);
    expect(errors(c)).toEqual([expect.objectContaining({ code: 'request_timeout' })]);
  });

  it('a socket that configures but never sends audio: request_timeout, then close', async () => {
    const c = await open();
    c.ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription' } }));
    await c.next('session.updated');
    expect(await c.closed).toBe(1000);
    expect(errors(c)).toEqual([expect.objectContaining({ code: 'request_timeout' })]);
  });

  it('a message begun and never finished (a first fragment only): request_timeout, then close', async () => {
    const c = await open();
    await c.next('session.created');
    c.ws.send('{"type":"session.update",', { fin: false });
    expect(await c.closed).toBe(1000);
    expect(errors(c)).toEqual([expect.objectContaining({ code: 'request_timeout' })]);
  });

  it('a session whose audio stops: request_timeout, its slot freed, its audio metered', async () => {
    const before = await usageSeconds(s.apiKey);
    const c = await open();
    await c.next('session.created');
    for (let i = 0; i < 10; i++) append(c, Buffer.alloc(4800)); // 1 s of 24 kHz silence
    await waitFor(
      () => projectStreams(s.apiKey),
      (n) => n === 1,
    );
    expect(await c.closed).toBe(1000);
    expect(errors(c)).toEqual([expect.objectContaining({ code: 'request_timeout' })]);
    await waitFor(
      () => projectStreams(s.apiKey),
      (n) => n === 0,
    );
    expect(
      (await waitFor(
        () => usageSeconds(s.apiKey),
        (sec) => sec > before,
      )) - before,
    ).toBeCloseTo(1, 1);
  });
});

describe("another project's key", () => {
  it('sees nothing of a running session of this project: not its slot, not its usage; its own session is its own', async () => {
    const a = await open();
    await a.next('session.created');
    for (let i = 0; i < 10; i++) append(a, Buffer.alloc(4800));
    await waitFor(
      () => projectStreams(s.apiKey),
      (n) => n === 1,
    );
    expect(await projectStreams(keyB)).toBe(0);
    const b = await open('/v1/realtime?intent=transcription', keyB);
    const created = (await b.next('session.created')).session as { id: string };
    expect(created.id).not.toBe((a.events[0]!.session as { id: string }).id);
    b.ws.close();
    a.ws.close();
    await Promise.all([a.closed, b.closed]);
    await waitFor(
      () => projectStreams(s.apiKey),
      (n) => n === 0,
    );
    expect(await usageSeconds(keyB)).toBe(0);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });
});
