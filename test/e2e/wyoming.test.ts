// The Wyoming server (Home Assistant's voice protocol) against a real server, with a client written from the
// protocol's documentation (wyoming-helpers.ts).
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { freePort, WyomingClient } from './wyoming-helpers.js';

const execFileP = promisify(execFile);
const work = tempDir('parlance-wyoming-');
const testStart = new Date(Date.now() - 60_000).toISOString();

let s: Parlance;
let port: number;
let speech22k: Buffer;

beforeAll(async () => {
  port = await freePort();
  // One live stream per project: the Wyoming utterances hold the project's real-time slots like any live session.
  s = await startParlance({ env: { PARLANCE_WYOMING_PORT: String(port), PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '1' } });
  const wav = await makeSpeech(path.join(work, 'lights.wav'), 'turn on the kitchen lights.', { padSeconds: 0.5 });
  const raw = path.join(work, 'lights-22k.raw');
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', wav, '-ar', '22050', '-ac', '1', '-f', 's16le', '-y', raw]);
  speech22k = readFileSync(raw);
}, 120_000);

afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('Wyoming server', () => {
  it('describe → info with the speech-to-text models and text-to-speech voices', async () => {
    const c = await WyomingClient.open(port);
    c.write('describe');
    const info = await c.read();
    c.close();
    expect(info.type).toBe('info');
    const asr = info.data.asr as {
      name: string;
      installed: boolean;
      attribution: { name: string; url: string };
      supports_transcript_streaming: boolean;
      models: { name: string; languages: string[]; installed: boolean }[];
    }[];
    expect(asr).toHaveLength(1);
    expect(asr[0]).toMatchObject({ name: 'parlance', installed: true, supports_transcript_streaming: true, attribution: { name: 'Parlance' } });
    // The async models first (a request without a name gets one), then the real-time ones.
    const models = asr[0]!.models.map((m) => m.name);
    expect(models.indexOf('parlance-async-en-v1')).toBeGreaterThanOrEqual(0);
    expect(models.indexOf('parlance-rt-en-v1')).toBeGreaterThan(models.indexOf('parlance-async-en-v1'));
    expect(asr[0]!.models.find((m) => m.name === 'parlance-rt-en-v1')).toMatchObject({ languages: ['en'], installed: true });
    const tts = info.data.tts as { name: string; voices: { name: string; languages: string[]; description: string; version: string }[] }[];
    expect(tts).toHaveLength(1);
    expect(tts[0]!.voices.length).toBeGreaterThan(0);
    const names = tts[0]!.voices.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const v of tts[0]!.voices) expect(v.languages.length).toBeGreaterThan(0);
    expect(tts[0]!.voices.some((v) => v.languages.includes('en'))).toBe(true);
  });

  it('transcribe + 22050 Hz audio in chunks → transcript (streamed, then whole)', async () => {
    const c = await WyomingClient.open(port);
    c.write('transcribe', { language: 'en' });
    const format = { rate: 22050, width: 2, channels: 1 };
    c.write('audio-start', format);
    // 1024-sample chunks, one split mid-sample, as a satellite streams them.
    for (let off = 0; off < speech22k.length; off += 2047) c.write('audio-chunk', format, speech22k.subarray(off, off + 2047), true);
    c.write('audio-stop');
    const events = await c.readUntil('transcript');
    c.close();
    // The words come as the live session makes them final: one chunk or more, which together are the transcript.
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('transcript-start');
    expect(types.slice(-2)).toEqual(['transcript-stop', 'transcript']);
    const chunks = events.slice(1, -2);
    expect(chunks.length).toBeGreaterThan(0);
    for (const e of chunks) expect(e.type).toBe('transcript-chunk');
    const text = String(events.at(-1)!.data.text).toLowerCase();
    expect(events.at(-1)!.data.language).toBe('en');
    expect(chunks.map((e) => String(e.data.text)).join('')).toBe(events.at(-1)!.data.text);
    for (const word of ['turn', 'kitchen', 'lights']) expect(text).toContain(word);
  });

  it('gives the words of a finished phrase before audio-stop with a real-time model: the utterance is decoded while it streams', async () => {
    const c = await WyomingClient.open(port);
    c.write('transcribe', { name: 'parlance-rt-en-v1', language: 'en' });
    const format = { rate: 22050, width: 2, channels: 1 };
    c.write('audio-start', format);
    // A phrase, then two seconds of silence: the live session closes the phrase at the pause.
    const pause = Buffer.alloc(22050 * 2 * 2);
    for (const part of [speech22k, pause]) for (let off = 0; off < part.length; off += 2048) c.write('audio-chunk', format, part.subarray(off, off + 2048));
    const early = [await c.read(), await c.read()];
    expect(early.map((e) => e.type)).toEqual(['transcript-start', 'transcript-chunk']);
    expect(String(early[1]!.data.text).toLowerCase()).toContain('kitchen');
    // The next phrase, then the end: its words follow, and the transcript is both phrases.
    for (let off = 0; off < speech22k.length; off += 2048) c.write('audio-chunk', format, speech22k.subarray(off, off + 2048));
    c.write('audio-stop');
    const rest = await c.readUntil('transcript');
    c.close();
    const chunks = [early[1]!, ...rest.filter((e) => e.type === 'transcript-chunk')];
    const text = String(rest.at(-1)!.data.text);
    expect(chunks.map((e) => String(e.data.text)).join('')).toBe(text);
    expect(text.toLowerCase().match(/kitchen/g)).toHaveLength(2);
  });

  it('holds one of the project real-time stream slots while a real-time utterance streams: a second one is refused, then served', async () => {
    const format = { rate: 22050, width: 2, channels: 1 };
    const a = await WyomingClient.open(port);
    a.write('transcribe', { name: 'parlance-rt-en-v1' });
    a.write('audio-start', format);
    const pause = Buffer.alloc(22050 * 2 * 2);
    for (const part of [speech22k, pause]) for (let off = 0; off < part.length; off += 2048) a.write('audio-chunk', format, part.subarray(off, off + 2048));
    expect((await a.read()).type).toBe('transcript-start'); // a's session is under way
    const b = await WyomingClient.open(port);
    b.write('transcribe', { name: 'parlance-rt-en-v1' });
    b.write('audio-start', format);
    b.write('audio-chunk', format, speech22k);
    b.write('audio-stop');
    b.write('ping');
    const refused = await b.readUntil('pong');
    expect(refused.map((e) => [e.type, e.data.code])).toEqual([
      ['error', 'limit_exceeded'],
      ['pong', undefined],
    ]);
    a.write('audio-stop');
    expect((await a.readUntil('transcript')).at(-1)!.type).toBe('transcript');
    a.close();
    // a's slot is free again.
    b.write('transcribe', { name: 'parlance-rt-en-v1' });
    b.write('audio-start', format);
    b.write('audio-chunk', format, speech22k);
    b.write('audio-stop');
    const served = await b.readUntil('transcript', 'error');
    b.close();
    expect(served.at(-1)!.type).toBe('transcript');
    expect(String(served.at(-1)!.data.text).toLowerCase()).toContain('kitchen');
  });

  it('synthesize → audio-start, 16-bit chunks at the voice rate, audio-stop', async () => {
    const c = await WyomingClient.open(port);
    c.write('describe');
    const info = await c.read();
    const voice = (info.data.tts as { voices: { name: string; languages: string[] }[] }[])[0]!.voices.find((v) => v.languages.includes('en'))!;
    const text = 'The kitchen lights are on.';
    c.write('synthesize', { text, voice: { name: voice.name } });
    const events = await c.readUntil('audio-stop', 'error');
    expect(events[0]!.type).toBe('audio-start');
    const { rate, width, channels } = events[0]!.data as { rate: number; width: number; channels: number };
    expect(width).toBe(2);
    expect(channels).toBe(1);
    expect(rate).toBeGreaterThanOrEqual(8000);
    const chunks = events.slice(1, -1);
    expect(chunks.length).toBeGreaterThan(0);
    for (const ch of chunks) expect(ch).toMatchObject({ type: 'audio-chunk', data: { rate, width: 2, channels: 1 } });
    expect(events.at(-1)!.type).toBe('audio-stop');
    const bytes = chunks.reduce((n, ch) => n + (ch.payload?.length ?? 0), 0);
    const seconds = bytes / (rate * 2);
    expect(seconds).toBeGreaterThan(0.7);
    expect(seconds).toBeLessThan(8);
    // Language only (wyoming's SynthesizeVoice sends it as the name) and no voice at all also speak.
    c.write('synthesize', { text: 'Hello.', voice: { language: 'en' } });
    expect((await c.readUntil('audio-stop', 'error')).at(-1)!.type).toBe('audio-stop');
    c.write('synthesize', { text: 'Hello.' });
    expect((await c.readUntil('audio-stop', 'error')).at(-1)!.type).toBe('audio-stop');
    // An unknown voice: an error event; the connection stays usable.
    c.write('synthesize', { text: 'Hello.', voice: { name: 'no-such-voice' } });
    expect(await c.read()).toMatchObject({ type: 'error', data: { code: 'voice_not_found' } });
    c.write('ping', { text: 'x' });
    expect(await c.read()).toMatchObject({ type: 'pong', data: { text: 'x' } });
    c.close();
  });

  it('bad input: an unknown event gets an error and the connection stays; a malformed line gets an error and is closed', async () => {
    const c = await WyomingClient.open(port);
    c.write('run-satellite');
    expect(await c.read()).toMatchObject({ type: 'error', data: { code: 'unknown_event' } });
    c.write('audio-start', { rate: 'fast', width: 2, channels: 1 });
    expect(await c.read()).toMatchObject({ type: 'error', data: { code: 'invalid_audio_format' } });
    c.write('describe');
    expect((await c.read()).type).toBe('info');
    c.writeRaw('this is not json\n');
    expect(await c.read()).toMatchObject({ type: 'error', data: { code: 'invalid_header' } });
    await waitFor(
      async () => c.closed,
      (closed) => closed,
      10_000,
    );
    // An oversized payload is refused before it is read.
    const big = await WyomingClient.open(port);
    big.writeRaw(`${JSON.stringify({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload_length: 1 << 30 })}\n`);
    expect(await big.read()).toMatchObject({ type: 'error', data: { code: 'too_large' } });
    await waitFor(
      async () => big.closed,
      (closed) => closed,
      10_000,
    );
    // The server is fine.
    const again = await WyomingClient.open(port);
    again.write('describe');
    expect((await again.read()).type).toBe('info');
    again.close();
  });

  it('meters the work to the project', async () => {
    const logs = await waitFor(
      async () => {
        const res = await s.request(
          `/v1/usage-logs?start_time=${encodeURIComponent(testStart)}&end_time=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`,
        );
        expect(res.status).toBe(200);
        return ((await res.json()) as { usage_logs: { model: string; input_audio_duration_ms: number; output_audio_duration_ms: number }[] }).usage_logs;
      },
      (l) =>
        l.some((x) => x.model === 'parlance-async-en-v1') &&
        l.some((x) => x.model === 'parlance-rt-en-v1') &&
        l.filter((x) => x.output_audio_duration_ms > 0).length >= 3,
      20_000,
    );
    // The first transcription (no model name: decoded whole) is metered as its audio.
    const stt = logs.find((l) => l.model === 'parlance-async-en-v1')!;
    const seconds = speech22k.length / (22050 * 2);
    expect(stt.input_audio_duration_ms).toBeGreaterThan((seconds - 0.2) * 1000);
    expect(stt.input_audio_duration_ms).toBeLessThan((seconds + 0.2) * 1000);
  });

  it('an unknown PARLANCE_WYOMING_PROJECT stops the start with a clear message', async () => {
    const other = tempDir('parlance-wyoming-bad-');
    try {
      const err = await startParlance({ dataDir: other, env: { PARLANCE_WYOMING_PORT: '0', PARLANCE_WYOMING_PROJECT: 'no-such-project' } }).then(
        async (started) => {
          await started.stop();
          return undefined;
        },
        (e: unknown) => e as Error,
      );
      expect(err?.message).toMatch(/exited with 2/);
      expect(err?.message).toMatch(/PARLANCE_WYOMING_PROJECT: project no-such-project does not exist/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 60_000);
});
