// TtsService.speak with real parts: espeak-ng and the in-process encoder, the concurrency tracker, and the usage
// meter on a SQLite database. The slot is freed however a synthesis ends, usage is metered once, and the caps (text,
// audio, a temporary key's session) hold at their limits.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitFor } from '../../../test/harness.js';
import { loadSettings } from '../../config/settings.js';
import { espeakTtsEngine } from '../../engines/tts/espeak.js';
import { TtsRegistry } from '../../engines/tts/registry.js';
import { CursorCodec } from '../../lib/cursor.js';
import { openDatabase, type Db } from '../../storage/database.js';
import { ApiError } from '../../wire/api-error.js';
import { KeyRepository } from '../auth/repository.js';
import { AuthService } from '../auth/service.js';
import { BudgetGuard } from '../billing/guard.js';
import { ConcurrencyLimits } from '../limits/concurrency.js';
import { RateLimits } from '../limits/rate-limits.js';
import { LimitsRepository } from '../limits/repository.js';
import { TenancyRepository } from '../tenancy/repository.js';
import { PriceTable } from '../usage/prices.js';
import { UsageRepository } from '../usage/repository.js';
import { UsageService } from '../usage/service.js';
import type { TtsConfig } from './request-config.js';
import { TtsService } from './service.js';
import { type SpeechCaller, type SpeechResult, type SpeechSink, UsageNotRecorded } from './speak.js';
import { type SpeechText, wholeText } from './speech-text.js';

const MAX_TEXT_CHARS = 400;
const MAX_AUDIO_SECONDS = 5;
const SENTENCE = 'The quick brown fox jumps over the lazy dog. ';

const dirs: string[] = [];
const dbs: Db[] = [];
let db: Db;
let rateLimits: RateLimits;
let concurrency: ConcurrencyLimits;
let tts: TtsService;
let cfg: TtsConfig;
const log = pino({ level: 'silent' });
const caller: SpeechCaller = { organizationId: randomUUID(), projectId: randomUUID(), apiKeyId: null, source: 'public_api' };

async function database(): Promise<Db> {
  const dir = tempDir('parlance-speak-');
  dirs.push(dir);
  const opened = await openDatabase({ dataDir: dir });
  dbs.push(opened);
  return opened;
}

/** A TtsService over `db`, metering into `meterDb`; one TTS slot per project. */
function service(registry: TtsRegistry, meterDb: Db): TtsService {
  const usageRepo = new UsageRepository(meterDb.kysely, meterDb.dialect);
  const tenancy = new TenancyRepository(meterDb.kysely);
  const meter = new UsageService(usageRepo, new PriceTable([], usageRepo, 0), tenancy, new CursorCodec(Buffer.alloc(32, 7)));
  return new TtsService(
    registry,
    new AuthService(new KeyRepository(db.kysely), { environment: 'production' }),
    rateLimits,
    new BudgetGuard(new TenancyRepository(db.kysely), new UsageRepository(db.kysely, db.dialect)),
    new CursorCodec(Buffer.alloc(32, 7)),
    concurrency,
    { maxTextChars: MAX_TEXT_CHARS, maxAudioSeconds: MAX_AUDIO_SECONDS, meter },
  );
}

beforeAll(async () => {
  db = await database();
  rateLimits = new RateLimits(loadSettings({ env: { PARLANCE_CONFIG: '' } }));
  concurrency = new ConcurrencyLimits(new LimitsRepository(db.kysely), {
    defaults: { stt: { organization: 0, project: 0 }, tts: { organization: 0, project: 1 } },
  });
  const at = '2026-01-01T00:00:00.000Z';
  await db.kysely.insertInto('organizations').values({ id: caller.organizationId, name: 'o', created_at: at }).execute();
  await db.kysely
    .insertInto('projects')
    .values({ id: caller.projectId, organization_id: caller.organizationId, name: 'p', description: '', region: 'local', created_at: at })
    .execute();
  tts = service(await TtsRegistry.create([espeakTtsEngine]), db);
  cfg = tts.resolveConfig({ model: 'parlance-tts-espeak-v1', language: 'en', voice: 'Adrian', audio_format: 'pcm_s16le', sample_rate: 16000 });
}, 60_000);

afterAll(async () => {
  await concurrency?.close();
  await rateLimits?.close();
  for (const d of dbs) await d.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const request = (text: SpeechText, c: TtsConfig = cfg) => ({ cfg: c, text, requestId: randomUUID(), startedAt: new Date(), log, label: 'test' });

/** A sink that keeps what it was given; `onAudio` runs on each chunk (its promise is the sink's backpressure). */
function recorder(onAudio?: (n: number) => void | Promise<void>) {
  const seen = { started: 0, chunks: 0, bytes: 0, result: undefined as SpeechResult | undefined };
  const sink: SpeechSink = {
    start: () => void seen.started++,
    audio: (chunk) => {
      seen.chunks++;
      seen.bytes += chunk.audio.length;
      return onAudio?.(seen.chunks);
    },
    end: (r) => void (seen.result = r),
  };
  return { seen, sink };
}

const records = (requestId: string) => db.kysely.selectFrom('usage_records').selectAll().where('request_id', '=', requestId).execute();

/** The one usage record of a request metered in the background (after a stop or a failure). */
async function meteredOnce(requestId: string) {
  const rows = await waitFor(
    () => records(requestId),
    (r) => r.length > 0,
    20_000,
  );
  expect(rows).toHaveLength(1);
  return rows;
}

const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => new Error('resolved'),
    (err: unknown) => err,
  );

describe('TtsService.speak', () => {
  it('speaks a whole text: start, audio, end; the slot is held while it runs and freed after; metered once', async () => {
    const text = `${SENTENCE}Then it rests.`;
    const req = request(wholeText(text));
    let refused: unknown;
    const { seen, sink } = recorder(async (n) => {
      if (n !== 1) return;
      expect(tts.activeCount).toBe(1);
      // The project's one TTS slot is taken: a second synthesis is refused before any audio.
      refused = await failure(tts.speak(request(wholeText('Hello.')), caller, recorder().sink));
    });
    await tts.speak(req, caller, sink);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).type).toBe('limit_exceeded');
    expect(seen.started).toBe(1);
    expect(seen.chunks).toBeGreaterThan(0);
    const result = seen.result!;
    expect(result.characters).toBe(text.length);
    expect(result.truncated).toBe(false);
    expect(result.seconds).toBeGreaterThan(1);
    // 16 kHz s16le out: the bytes are the seconds generated.
    expect(Math.abs(seen.bytes / 32_000 - result.seconds)).toBeLessThan(0.05);
    expect(tts.activeCount).toBe(0);
    const rows = await records(req.requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'tts', api_key_id: null, input_text_tokens: text.length, model: cfg.model.id });
    expect(rows[0]!.output_audio_duration_ms).toBe(Math.round(result.seconds * 1000));
  }, 60_000);

  it('an engine that fails before any audio: a refusal (nothing started), the slot freed, nothing metered', async () => {
    const broken: TtsConfig = { ...cfg, language: 'zz', voice: { ...cfg.voice, engineVoice: 'no-such-variant' } };
    const req = request(wholeText('Hello there.'), broken);
    const { seen, sink } = recorder();
    const err = await failure(tts.speak(req, caller, sink));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(UsageNotRecorded);
    expect(seen.started).toBe(0);
    expect(tts.activeCount).toBe(0);
    // The slot is free for the next synthesis of the project, which is metered as usual.
    const next = request(wholeText('Hello there.'));
    await tts.speak(next, caller, recorder().sink);
    expect(await records(next.requestId)).toHaveLength(1);
    expect(await records(req.requestId)).toHaveLength(0);
  }, 60_000);

  it('a client that leaves mid-way, its sink stalled: stopped at once, the slot freed, what was made metered once', async () => {
    const text = tts.liveText();
    text.push(SENTENCE.repeat(3));
    const ac = new AbortController();
    const { seen, sink } = recorder(() => {
      ac.abort(new Error('client left'));
      return new Promise<void>(() => undefined); // a client that stopped reading
    });
    const req = request(text);
    const err = await failure(tts.speak(req, caller, sink, ac.signal));
    expect((err as Error).message).toBe('client left');
    expect(seen.chunks).toBe(1);
    expect(seen.result).toBeUndefined();
    expect(tts.activeCount).toBe(0);
    const rows = await meteredOnce(req.requestId);
    expect(rows[0]!.input_text_tokens).toBe(SENTENCE.length * 3);
    expect(rows[0]!.output_audio_duration_ms).toBeGreaterThan(0);
  }, 60_000);

  it('a client gone before its slot was granted: nothing synthesized, the slot freed', async () => {
    const ac = new AbortController();
    const { seen, sink } = recorder();
    const req = request(wholeText('Hello there.'));
    const speaking = failure(tts.speak(req, caller, sink, ac.signal));
    ac.abort(new Error('client left'));
    expect(((await speaking) as Error).message).toBe('client left');
    expect(seen.started).toBe(0);
    expect(tts.activeCount).toBe(0);
    const next = request(wholeText('Hello there.'));
    await tts.speak(next, caller, recorder().sink);
    expect(await records(req.requestId)).toHaveLength(0);
  }, 60_000);

  it('the text cap: exactly the server maximum is accepted, one character more is refused', () => {
    const at = 'a'.repeat(MAX_TEXT_CHARS);
    expect(tts.checkText(at, cfg).characters()).toBe(MAX_TEXT_CHARS);
    expect(() => tts.checkText(`${at}a`, cfg)).toThrow(/^Invalid request: text: must NOT have more than 400 characters$/);
    const live = tts.liveText();
    live.push(at.slice(1));
    live.push('a');
    expect(live.characters()).toBe(MAX_TEXT_CHARS);
    expect(() => live.push('a')).toThrow(ApiError);
    // Refused text was still sent: it counts.
    expect(live.characters()).toBe(MAX_TEXT_CHARS + 1);
  });

  it('the audio cap: the audio stops at exactly the cap, the result says it was cut, and that is what is metered', async () => {
    const req = request(wholeText(SENTENCE.repeat(8)));
    const { seen, sink } = recorder();
    await tts.speak(req, caller, sink);
    expect(seen.result!.truncated).toBe(true);
    expect(seen.result!.seconds).toBe(MAX_AUDIO_SECONDS);
    expect(seen.bytes).toBe(MAX_AUDIO_SECONDS * 32_000);
    const rows = await records(req.requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.output_audio_duration_ms).toBe(MAX_AUDIO_SECONDS * 1000);
  }, 60_000);

  it("a temporary key's session cap stops a stream waiting for text: temp_api_key_session_expired, slot freed, metered", async () => {
    const temporary = { id: randomUUID(), usageType: 'tts_rt' as const, maxSessionDurationSeconds: 1, clientReferenceId: 'ref-1' };
    const text = tts.liveText();
    text.push('Hello there. ');
    const req = request(text);
    const { seen, sink } = recorder();
    const err = await failure(tts.speak(req, { ...caller, temporary }, sink));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).type).toBe('temp_api_key_session_expired');
    expect(seen.chunks).toBeGreaterThan(0);
    expect(tts.activeCount).toBe(0);
    const rows = await meteredOnce(req.requestId);
    expect(rows[0]!.client_reference_id).toBe('ref-1');
  }, 60_000);

  it('usage that cannot be recorded fails the synthesis before its end, and frees the slot', async () => {
    const gone = await database();
    await gone.close();
    const unbilled = service(tts.registry, gone);
    const { seen, sink } = recorder();
    const err = await failure(unbilled.speak(request(wholeText('Hello there.')), caller, sink));
    expect(err).toBeInstanceOf(UsageNotRecorded);
    expect((err as UsageNotRecorded).cause).toBeInstanceOf(Error);
    expect(seen.started).toBe(1);
    expect(seen.result).toBeUndefined();
    expect(unbilled.activeCount).toBe(0);
  }, 60_000);
});
