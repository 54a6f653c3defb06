// A hostile probe of the Wyoming server (TCP): garbage and broken framing, lengths far over the caps, requests the
// server cannot serve, audio chunks that keep changing format, and slow clients (silent, a header without its
// payload, a header trickled a byte at a time, a client that stops reading). A broken stream gets an `error` event and
// is closed; a request it cannot serve gets an `error` event and the connection goes on; a slow client is timed out
// (PARLANCE_WYOMING_IDLE_TIMEOUT_SECONDS, short here) with what its request held freed and metered. The table of what
// was tried is docs/guide/security.md.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Parlance, startParlance, waitFor } from '../harness.js';
import { type Event, freePort, ttsActive, WyomingClient } from './wyoming-helpers.js';

let s: Parlance;
let port: number;
const testStart = new Date(Date.now() - 60_000).toISOString();

beforeAll(async () => {
  port = await freePort();
  s = await startParlance({ env: { PARLANCE_WYOMING_PORT: String(port), PARLANCE_WYOMING_IDLE_TIMEOUT_SECONDS: '1.5' } });
}, 60_000);

afterAll(async () => s?.stop());

const header = (h: Record<string, unknown>) => `${JSON.stringify({ version: '1.7.0', ...h })}\n`;

/** Write `bytes` on a fresh connection: the one event it gets back, and whether the server then closed it. */
async function answerTo(bytes: string | Buffer): Promise<{ event: Event; closed: boolean }> {
  const c = await WyomingClient.open(port);
  c.writeRaw(bytes);
  const event = await c.read(10_000);
  c.write('ping');
  const next = await c.read(10_000).catch(() => undefined);
  c.close();
  return { event, closed: next === undefined };
}

const closedWith = async (bytes: string | Buffer, code: string) => {
  const r = await answerTo(bytes);
  expect(r.event).toMatchObject({ type: 'error', data: { code } });
  expect(r.closed).toBe(true);
};
const keptWith = async (bytes: string | Buffer, code: string) => {
  const r = await answerTo(bytes);
  expect(r.event).toMatchObject({ type: 'error', data: { code } });
  expect(r.closed).toBe(false);
};

describe('broken framing', () => {
  it('binary garbage, a line that is no JSON object, no type, data that is no object: an error event, then close', async () => {
    await closedWith(Buffer.from([0xff, 0xfe, 0, 1, 2, 0x0a]), 'invalid_header');
    await closedWith('[1,2]\n', 'invalid_header');
    await closedWith(header({ data: {} }), 'invalid_header');
    await closedWith(header({ type: 'ping', data: [1] }), 'invalid_header');
    await closedWith(header({ type: 'ping', data_length: 5 }) + 'abcde', 'invalid_data');
    await closedWith(header({ type: 'ping', data_length: 2 }) + '[]', 'invalid_data');
  });

  it('lengths that are no integer, or far over the caps (payload 10^15, data 2^53, a 70 KiB header line): an error event, then close', async () => {
    for (const bad of [-1, 1.5, '100', { n: 1 }] as unknown[]) await closedWith(header({ type: 'audio-chunk', payload_length: bad }), 'invalid_header');
    await closedWith(header({ type: 'audio-chunk', payload_length: 1e15 }), 'too_large');
    await closedWith(header({ type: 'ping', data_length: 2 ** 53 }), 'too_large');
    await closedWith(Buffer.alloc(70 * 1024, 0x61), 'too_large');
  });

  it('invalid UTF-8 inside a header is read as U+FFFD, not refused and not a crash', async () => {
    const c = await WyomingClient.open(port);
    c.writeRaw(Buffer.concat([Buffer.from('{"type":"ping","data":{"text":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}}\n')]));
    expect(await c.read(10_000)).toMatchObject({ type: 'pong', data: { text: '\ufffd\ufffd' } });
    c.close();
  });
});

describe('requests the server cannot serve: an error event, and the connection goes on', () => {
  it('unknown events, synthesize with a bad or too long text or an unknown voice, bad audio formats', async () => {
    await keptWith(header({ type: 'run-satellite' }), 'unknown_event');
    await keptWith(header({ type: 'synthesize', data: { text: 12 } }), 'invalid_request');
    await keptWith(header({ type: 'synthesize', data: { text: 'x'.repeat(60_000) } }), 'invalid_request');
    await keptWith(header({ type: 'synthesize', data: { text: 'hi', voice: { name: 'nope/none' } } }), 'voice_not_found');
    await keptWith(header({ type: 'audio-start', data: { rate: 0, width: 9, channels: -1 } }), 'invalid_audio_format');
    await keptWith(header({ type: 'audio-chunk', payload_length: 4 }) + '\0\0\0\0', 'invalid_audio_format');
    await keptWith(header({ type: 'transcribe', data: { name: 'm'.repeat(5000) } }) + header({ type: 'audio-stop' }), 'model_not_available');
  });

  // Found by this probe: every change of format started a converter of its own, and chunks without audio cost the
  // client nothing: 100,000 of them alternating two rates held 150 MB of the server's memory.
  it('audio chunks that keep changing format are refused after a few changes; the utterance is dropped', async () => {
    const c = await WyomingClient.open(port);
    c.write('audio-start', { rate: 16000, width: 2, channels: 1 });
    for (let i = 0; i < 1000; i++) c.write('audio-chunk', { rate: 8000 + (i % 2), width: 2, channels: 1 }, Buffer.alloc(2));
    c.write('audio-stop');
    c.write('ping');
    const events = await c.readUntil('pong');
    expect(events.map((e) => [e.type, e.data.code])).toEqual([
      ['error', 'invalid_audio_format'],
      ['pong', undefined],
    ]);
    expect(String(events[0]!.data.text)).toMatch(/changed more than 3 times in one utterance/);
    c.close();
  });
});

describe('slow clients', () => {
  const metered = async () => {
    const q = `start_time=${encodeURIComponent(testStart)}&end_time=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}&limit=1000`;
    const logs = ((await (await s.request(`/v1/usage-logs?${q}`)).json()) as { usage_logs: { output_audio_duration_ms: number }[] }).usage_logs;
    return logs.filter((l) => l.output_audio_duration_ms > 0).length;
  };
  const timedOut = async (c: WyomingClient) => {
    expect(await c.read(10_000)).toMatchObject({ type: 'error', data: { code: 'request_timeout' } });
    await waitFor(
      async () => c.closed,
      (closed) => closed,
      10_000,
    );
  };

  // Found by this probe: the only bound was a fixed 5-minute socket timeout, silent, which any byte reset.
  it('a client that sends nothing: request_timeout, then close', async () => {
    await timedOut(await WyomingClient.open(port));
  });

  it('a header whose payload never comes: request_timeout, then close', async () => {
    const c = await WyomingClient.open(port);
    c.writeRaw(header({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload_length: 1000 }));
    await timedOut(c);
  });

  it('a header trickled a byte at a time: request_timeout, then close', async () => {
    const c = await WyomingClient.open(port);
    const line = header({ type: 'describe', data: { pad: 'x'.repeat(200) } });
    let i = 0;
    const drip = setInterval(() => i < line.length - 1 && !c.closed && c.writeRaw(line[i++]!), 100);
    try {
      await timedOut(c);
    } finally {
      clearInterval(drip);
    }
  });

  it('a client that stops reading a synthesis is cut: the synthesis slot is freed and what was made is metered', async () => {
    const before = await metered();
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.on('error', () => undefined);
    socket.pause(); // reads nothing: the answer fills the buffers and the server's writes stop
    socket.write(header({ type: 'synthesize', data: { text: 'The quick brown fox jumps over the lazy dog. '.repeat(300) } }));
    await waitFor(
      () => ttsActive(s),
      (n) => n === 1,
      30_000,
    );
    await waitFor(
      () => ttsActive(s),
      (n) => n === 0,
      60_000,
    );
    expect(await waitFor(metered, (n) => n > before)).toBe(before + 1);
    socket.destroy();
  });

  it('a streamed synthesis left open (no more text, no synthesize-stop): request_timeout, close, the slot freed', async () => {
    const c = await WyomingClient.open(port);
    c.write('synthesize-start');
    c.write('synthesize-chunk', { text: 'Hello there. ' });
    expect((await c.readUntil('audio-stop', 'error')).at(-1)!.type).toBe('audio-stop');
    await timedOut(c);
    await waitFor(
      () => ttsActive(s),
      (n) => n === 0,
      20_000,
    );
  });

  it('a client that stops reading a streamed synthesis is cut: the slot is freed and what was made is metered once', async () => {
    const before = await metered();
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(header({ type: 'synthesize-start' }));
    for (let i = 0; i < 300; i++) socket.write(header({ type: 'synthesize-chunk', data: { text: 'The quick brown fox jumps over the lazy dog. ' } }));
    socket.write(header({ type: 'synthesize-stop' }));
    await waitFor(
      () => ttsActive(s),
      (n) => n === 1,
      30_000,
    );
    await waitFor(
      () => ttsActive(s),
      (n) => n === 0,
      60_000,
    );
    expect(await waitFor(metered, (n) => n > before)).toBe(before + 1);
    socket.destroy();
  });

  it('the server still serves: /health, and a new Wyoming client', async () => {
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    const c = await WyomingClient.open(port);
    c.write('describe');
    expect((await c.read(10_000)).type).toBe('info');
    c.close();
  });
});
