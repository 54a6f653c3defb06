// The live transcription core and its three renderers with real parts but a scripted engine (no recognition, words on
// a script against the audio time): the Soniox socket's frames, the OpenAI Realtime events and Wyoming's transcript
// events over the same session,
// admission before configuration errors, and one usage record per session. Fast and deterministic; the real engines
// are the e2e tests' (test/e2e/realtime.test.ts, openai-realtime.test.ts).
import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitFor } from '../../../test/harness.js';
import { loadSettings } from '../../config/settings.js';
import { EngineCatalog } from '../../engines/catalog.js';
import { scriptedSttEngine } from '../../engines/stt/scripted/descriptor.js';
import { CursorCodec } from '../../lib/cursor.js';
import { openDatabase, type Db } from '../../storage/database.js';
import type { SttServerFrame } from '../../wire/stt-frames.js';
import { KeyRepository } from '../auth/repository.js';
import { AuthService } from '../auth/service.js';
import { BudgetGuard } from '../billing/guard.js';
import { ConcurrencyLimits } from '../limits/concurrency.js';
import { RateLimits } from '../limits/rate-limits.js';
import { LimitsRepository } from '../limits/repository.js';
import { ModelCatalog } from '../models/catalog.js';
import { OpenAiRealtimeSession } from '../openai/realtime-session.js';
import { TenancyRepository } from '../tenancy/repository.js';
import { TenancyService } from '../tenancy/service.js';
import { PriceTable } from '../usage/prices.js';
import { UsageRepository } from '../usage/repository.js';
import { UsageService } from '../usage/service.js';
import { realtimeSessionOptions } from './options.js';
import { RealtimeService } from './service.js';
import { SonioxSocket } from './soniox-socket.js';
import { WyomingUtterance } from '../wyoming/transcription.js';

const SCRIPT = {
  words: [
    { text: 'hello', start_ms: 100, end_ms: 400 },
    { text: 'world', start_ms: 450, end_ms: 800 },
    { text: 'again', start_ms: 2000, end_ms: 2300 },
  ],
};

let dir: string;
let db: Db;
let engines: EngineCatalog;
let rateLimits: RateLimits;
let concurrency: ConcurrencyLimits;
let service: RealtimeService;
let apiKey: string;
let projectId: string;

beforeAll(async () => {
  dir = tempDir('parlance-live-core-');
  db = await openDatabase({ dataDir: dir });
  const keys = new KeyRepository(db.kysely);
  const tenancyRepo = new TenancyRepository(db.kysely);
  const boot = await new TenancyService(tenancyRepo, keys, { environment: 'production' }).bootstrap();
  apiKey = boot.api_key;
  projectId = boot.project_id;
  const settings = loadSettings({ env: { PARLANCE_CONFIG: '' } });
  rateLimits = new RateLimits(settings);
  concurrency = new ConcurrencyLimits(new LimitsRepository(db.kysely), {
    defaults: { stt: { organization: 0, project: 0 }, tts: { organization: 0, project: 0 } },
  });
  engines = await EngineCatalog.create({}, [scriptedSttEngine(SCRIPT)]);
  const usageRepo = new UsageRepository(db.kysely, db.dialect);
  service = new RealtimeService(
    {
      auth: new AuthService(keys, { environment: 'production' }),
      models: new ModelCatalog(engines),
      rateLimits,
      billing: new BudgetGuard(tenancyRepo, usageRepo),
      concurrency,
      meter: new UsageService(usageRepo, new PriceTable([], usageRepo, 0), tenancyRepo, new CursorCodec(Buffer.alloc(32, 7))),
      log: pino({ level: 'silent' }),
      errorReferenceUrl: () => 'http://parlance.test/docs',
    },
    realtimeSessionOptions(settings),
  );
}, 60_000);

afterAll(async () => {
  await engines?.close();
  await concurrency?.close();
  await rateLimits?.close();
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `ms` of 16 kHz mono s16le silence (the scripted engine hears its script, whatever the samples). */
const pcm16k = (ms: number) => new Uint8Array(ms * 32);

const CONFIG = {
  model: 'scripted-v1',
  audio_format: 'pcm_s16le',
  sample_rate: 16000,
  num_channels: 1,
  enable_endpoint_detection: true,
  enable_text_formatting: false,
};

/** A Soniox socket whose frames are kept; `closed` resolves when it closes the connection. */
function sonioxClient(handshakeKey?: string) {
  const frames: SttServerFrame[] = [];
  let closes = 0;
  let onClose!: () => void;
  const closed = new Promise<void>((resolve) => (onClose = resolve));
  const socket = new SonioxSocket(
    service,
    {
      send: (frame) => frames.push(frame),
      close: () => {
        closes++;
        onClose();
      },
    },
    'req-test',
    handshakeKey,
  );
  /** The final tokens' text.  */
  const text = () =>
    frames
      .flatMap((f) => f.tokens)
      .filter((t) => t.is_final)
      .map((t) => t.text)
      .join('');
  return { socket, frames, closed, text, closes: () => closes };
}

/** Send `ms` of audio in 100 ms messages. */
function stream(socket: SonioxSocket, ms: number): void {
  for (let t = 0; t < ms; t += 100) socket.binary(pcm16k(100));
}

const usageRows = () => db.kysely.selectFrom('usage_records').selectAll().where('project_id', '=', projectId).execute();
const usageOrg = () => db.kysely.selectFrom('projects').select('organization_id').where('id', '=', projectId).executeTakeFirstOrThrow();

describe('the Soniox socket over the live core', () => {
  it('gives each final word once, <end> at each endpoint, then a finished frame and one close', async () => {
    const before = (await usageRows()).length;
    const c = sonioxClient();
    c.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey }));
    stream(c.socket, 3000);
    c.socket.binary(new Uint8Array(0));
    await c.closed;
    expect(c.text()).toBe('hello world<end> again<end>');
    const last = c.frames.at(-1)!;
    expect(last).toMatchObject({ finished: true, tokens: [] });
    expect('total_audio_proc_ms' in last && last.total_audio_proc_ms).toBe(3000);
    expect(c.closes()).toBe(1);
    // Non-final tokens came before their finals, and every frame's final audio stays within its total.
    expect(c.frames.some((f) => f.tokens.some((t) => !t.is_final && t.text === 'hello'))).toBe(true);
    for (const f of c.frames) if ('final_audio_proc_ms' in f) expect(f.final_audio_proc_ms).toBeLessThanOrEqual(f.total_audio_proc_ms);
    await waitFor(usageRows, (rows) => rows.length === before + 1);
  });

  it('finalize makes the words so far final and <fin> follows them, before later words', async () => {
    const c = sonioxClient();
    c.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey, enable_endpoint_detection: false }));
    stream(c.socket, 1000);
    // A finalize covers at least the audio before it (and what the engine took in meanwhile): sent once the engine
    // has heard 'world'.
    await waitFor(
      async () => c.frames.flatMap((f) => f.tokens),
      (tokens) => tokens.some((t) => t.text === ' world'),
    );
    c.socket.text(JSON.stringify({ type: 'finalize' }));
    await waitFor(
      async () => c.text(),
      (text) => text.endsWith('<fin>'),
    );
    stream(c.socket, 2000);
    c.socket.binary(new Uint8Array(0));
    await c.closed;
    expect(c.text()).toBe('hello world<fin> again');
  });

  it('the handshake key stands in for an absent api_key', async () => {
    const c = sonioxClient(apiKey);
    c.socket.text(JSON.stringify(CONFIG));
    stream(c.socket, 500);
    c.socket.binary(new Uint8Array(0));
    await c.closed;
    expect(c.text()).toBe('hello world'); // the end of the stream cuts the word under way
  });

  it('a bad key is refused before the configuration is looked at; with a good key the configuration error names its field', async () => {
    const bad = sonioxClient();
    bad.socket.text(JSON.stringify({ ...CONFIG, api_key: 'not-a-key', sample_rate: -1 }));
    await bad.closed;
    expect(bad.frames).toEqual([expect.objectContaining({ error_type: 'unauthenticated', error_code: 401, request_id: 'req-test' })]);

    const wrong = sonioxClient();
    wrong.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey, sample_rate: -1 }));
    await wrong.closed;
    expect(wrong.frames).toEqual([expect.objectContaining({ error_type: 'invalid_request', error_message: expect.stringContaining('sample_rate') })]);
  });

  it('audio before the configuration is refused with one error frame', async () => {
    const c = sonioxClient();
    c.socket.binary(pcm16k(100));
    await c.closed;
    expect(c.frames).toEqual([expect.objectContaining({ error_type: 'invalid_request' })]);
    expect(c.closes()).toBe(1);
  });
});

describe('a multichannel session over the live core', () => {
  /** A streamed WAV header (data size unknown) of 16 kHz s16le with `channels` channels. */
  const wavHeader = (channels: number) => {
    const h = Buffer.alloc(44);
    h.write('RIFF', 0, 'latin1');
    h.writeUInt32LE(0xffffffff, 4);
    h.write('WAVEfmt ', 8, 'latin1');
    h.writeUInt32LE(16, 16);
    h.writeUInt16LE(1, 20);
    h.writeUInt16LE(channels, 22);
    h.writeUInt32LE(16000, 24);
    h.writeUInt32LE(16000 * 2 * channels, 28);
    h.writeUInt16LE(2 * channels, 32);
    h.writeUInt16LE(16, 34);
    h.write('data', 36, 'latin1');
    h.writeUInt32LE(0xffffffff, 40);
    return h;
  };
  const channelText = (c: ReturnType<typeof sonioxClient>, channel: number) =>
    c.frames
      .flatMap((f) => f.tokens)
      .filter((t) => t.is_final && t.channel === channel)
      .map((t) => t.text)
      .join('');

  it('recognises each channel of raw audio on its own: every token and <end> carries its channel, usage counts each', async () => {
    const before = (await usageRows()).length;
    const c = sonioxClient();
    c.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey, num_channels: 2, enable_multichannel: true, client_reference_id: 'mc-core' }));
    // 3 s of stereo: 100 ms messages of 2 channels.
    for (let t = 0; t < 3000; t += 100) c.socket.binary(new Uint8Array(100 * 32 * 2));
    c.socket.binary(new Uint8Array(0));
    await c.closed;
    expect(channelText(c, 0)).toBe('hello world<end> again<end>');
    expect(channelText(c, 1)).toBe('hello world<end> again<end>');
    const tokens = c.frames.flatMap((f) => f.tokens);
    expect(tokens.every((t) => t.channel === 0 || t.channel === 1)).toBe(true);
    const last = c.frames.at(-1)!;
    expect(last).toMatchObject({ finished: true, total_audio_proc_ms: 3000 });
    const rows = await waitFor(usageRows, (r) => r.length === before + 1);
    expect(rows.find((r) => r.client_reference_id === 'mc-core')).toMatchObject({ input_audio_duration_ms: 6000 });
  });

  it("opens a container's channels from its header; <fin> comes once, after every channel's words", async () => {
    const c = sonioxClient();
    c.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey, audio_format: 'auto', enable_multichannel: true, enable_endpoint_detection: false }));
    c.socket.binary(wavHeader(3));
    for (let t = 0; t < 1000; t += 100) c.socket.binary(new Uint8Array(100 * 32 * 3));
    await waitFor(
      async () => c.frames.flatMap((f) => f.tokens).filter((t) => t.text === ' world').length,
      (n) => n >= 3,
    );
    c.socket.text(JSON.stringify({ type: 'finalize' }));
    await waitFor(
      async () => c.frames.flatMap((f) => f.tokens).some((t) => t.text === '<fin>'),
      (fin) => fin,
    );
    c.socket.binary(new Uint8Array(0));
    await c.closed;
    const finals = c.frames.flatMap((f) => f.tokens).filter((t) => t.is_final);
    for (const channel of [0, 1, 2]) expect(channelText(c, channel)).toBe('hello world');
    const fin = finals.findIndex((t) => t.text === '<fin>');
    expect(finals.filter((t) => t.text === '<fin>')).toEqual([expect.not.objectContaining({ channel: expect.anything() })]);
    expect(finals.slice(0, fin).filter((t) => t.channel !== undefined)).toHaveLength(6);
  });

  it('refuses one channel: raw mono in the configuration, a mono container once its header is read, naming the field', async () => {
    const raw = sonioxClient();
    raw.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey, enable_multichannel: true }));
    await raw.closed;
    expect(raw.frames).toEqual([
      expect.objectContaining({
        error_type: 'invalid_request',
        error_message: expect.stringContaining('enable_multichannel: needs audio with two or more channels'),
      }),
    ]);
    const wav = sonioxClient();
    wav.socket.text(JSON.stringify({ ...CONFIG, api_key: apiKey, audio_format: 'wav', enable_multichannel: true }));
    wav.socket.binary(Buffer.concat([wavHeader(1), Buffer.alloc(3200)]));
    await wav.closed;
    expect(wav.frames.at(-1)).toMatchObject({
      error_type: 'invalid_request',
      error_message: 'Invalid request: enable_multichannel needs audio with two or more channels; this audio has one channel.',
    });
  });
});

describe('OpenAI Realtime over the live core', () => {
  /** 24 kHz pcm16 (OpenAI's format), `ms` long, base64. */
  const pcm24k = (ms: number) => Buffer.alloc(ms * 48).toString('base64');

  function openAiClient() {
    const events: Record<string, unknown>[] = [];
    let onClose!: () => void;
    const closed = new Promise<void>((resolve) => (onClose = resolve));
    const session = new OpenAiRealtimeSession(
      service,
      { send: (e) => events.push(e), close: () => onClose() },
      { beta: false, defaultModel: 'scripted-v1', requestId: 'req-openai', handshakeKey: apiKey },
    );
    session.start();
    const send = (event: Record<string, unknown>) => session.text(JSON.stringify(event));
    const appendAudio = (ms: number) => {
      for (let t = 0; t < ms; t += 100) send({ type: 'input_audio_buffer.append', audio: pcm24k(100) });
    };
    return { session, events, closed, send, appendAudio, types: () => events.map((e) => e.type) };
  }

  it('an engine endpoint ends the turn: speech_started, speech_stopped, committed, deltas, completed', async () => {
    const c = openAiClient();
    c.appendAudio(1600);
    await waitFor(
      async () => c.types(),
      (types) => types.includes('conversation.item.input_audio_transcription.completed'),
    );
    const turn = c.types().filter((t) => t !== 'session.created');
    expect(turn).toEqual([
      'input_audio_buffer.speech_started',
      'input_audio_buffer.speech_stopped',
      'input_audio_buffer.committed',
      'conversation.item.input_audio_transcription.delta',
      'conversation.item.input_audio_transcription.delta',
      'conversation.item.input_audio_transcription.completed',
    ]);
    expect(c.events.at(-1)).toMatchObject({ transcript: expect.stringMatching(/^Hello world/) }); // formatted: the server's default
    c.session.gone();
  });

  it('a manual commit completes its item once the core has finalized it', async () => {
    const c = openAiClient();
    c.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: null } } } });
    c.appendAudio(600);
    c.send({ type: 'input_audio_buffer.commit' });
    await waitFor(
      async () => c.types(),
      (types) => types.includes('conversation.item.input_audio_transcription.completed'),
    );
    expect(c.events.find((e) => e.type === 'conversation.item.input_audio_transcription.completed')).toMatchObject({
      transcript: expect.stringMatching(/^Hello world/),
    });
    expect(c.types()).not.toContain('error');
    c.session.gone();
  });

  it("the core's errors become OpenAI error events, then the connection closes", async () => {
    const events: Record<string, unknown>[] = [];
    let onClose!: () => void;
    const closed = new Promise<void>((resolve) => (onClose = resolve));
    const session = new OpenAiRealtimeSession(
      service,
      { send: (e) => events.push(e), close: () => onClose() },
      { beta: false, defaultModel: 'scripted-v1', requestId: 'req-openai', handshakeKey: 'not-a-key' },
    );
    session.start();
    session.text(JSON.stringify({ type: 'input_audio_buffer.append', audio: pcm24k(100) }));
    await closed;
    expect(events.at(-1)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
  });
});

describe('a Wyoming utterance over the live core', () => {
  const FORMAT = { rate: 16000, width: 2, channels: 1 };

  it('sends final words as transcript-chunk events while audio streams, the rest after audio-stop, metered with no key', async () => {
    const before = (await usageRows()).length;
    const events: { type: string; data?: Record<string, unknown> }[] = [];
    const caller = { organizationId: (await usageOrg()).organization_id, projectId, apiKeyId: null, source: 'public_api' as const };
    const u = new WyomingUtterance(caller, { model: 'scripted-v1', language: 'en', recognition: { live: service } }, 60, async (type, data) => {
      events.push({ type, data });
    });
    for (let t = 0; t < 1600; t += 100) u.write(FORMAT, Buffer.alloc(3200));
    // The pause after "world" closes the first phrase while the client is still sending.
    await waitFor(
      async () => events.map((e) => e.type),
      (types) => types.includes('transcript-chunk'),
    );
    for (let t = 1600; t < 3000; t += 100) u.write(FORMAT, Buffer.alloc(3200));
    await u.stop();
    expect(events.map((e) => e.type)).toEqual(['transcript-start', 'transcript-chunk', 'transcript-chunk', 'transcript-stop', 'transcript']);
    const chunks = events.filter((e) => e.type === 'transcript-chunk').map((e) => String(e.data!.text));
    expect(chunks.join('')).toBe(events.at(-1)!.data!.text);
    expect(events.at(-1)!.data).toMatchObject({ text: 'Hello world. Again.', language: 'en' });
    const rows = await waitFor(usageRows, (r) => r.length === before + 1);
    expect(rows.at(-1)).toMatchObject({ api_key_id: null, model: 'scripted-v1' });
  });

  it('a refusal of the core is one error event; audio-stop then sends nothing more', async () => {
    const events: { type: string; data?: Record<string, unknown> }[] = [];
    const caller = { organizationId: (await usageOrg()).organization_id, projectId, apiKeyId: null, source: 'public_api' as const };
    const u = new WyomingUtterance(caller, { model: 'no-such-model', language: 'en', recognition: { live: service } }, 60, async (type, data) => {
      events.push({ type, data });
    });
    u.write(FORMAT, Buffer.alloc(3200));
    await waitFor(
      async () => u.failed,
      (failed) => failed,
    );
    await u.stop();
    expect(events).toEqual([{ type: 'error', data: { text: expect.any(String), code: 'model_not_available' } }]);
  });
});
