// Async transcriptions, black-box: a real server, real uploads, real ffmpeg and pocketsphinx, real
// loopback fixture servers for audio_url and webhooks.
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import {
  errorBody,
  gatedAudioServer,
  makeAudio,
  makeSpeech,
  startParlance,
  tempDir,
  uploadFile,
  waitFor,
  type GatedAudioServer,
  type Parlance,
} from '../harness.js';

const SENTENCE = 'the quick brown fox jumps over the lazy dog';
const work = tempDir('parlance-stt-e2e-');
let speechWav: string;
let longWav: string;

interface Rec {
  id: string;
  status: string;
  [k: string]: unknown;
}

const upload = uploadFile;

async function create(s: Parlance, body: Record<string, unknown>): Promise<Response> {
  return s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function get(s: Parlance, id: string): Promise<Rec> {
  const res = await s.request(`/v1/transcriptions/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Rec;
}

const terminal = (r: Rec) => ['completed', 'failed', 'error'].includes(r.status);

/** A loopback server for audio_url fixtures and webhook receivers. */
async function fixtureServer(handler: (req: IncomingMessage, body: Buffer) => { status: number; body?: Buffer | string; headers?: Record<string, string> }) {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = handler(req, Buffer.concat(chunks));
      res.writeHead(r.status, r.headers ?? {});
      res.end(r.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

beforeAll(async () => {
  speechWav = await makeSpeech(path.join(work, 'fox.wav'), SENTENCE);
  // ~40 s of speech: long enough to catch the job in `transcribing`.
  longWav = await makeSpeech(path.join(work, 'long.wav'), Array.from({ length: 12 }, () => `${SENTENCE}.`).join(' '), { padSeconds: 1 });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('transcriptions (spec profile)', () => {
  let s: Parlance;
  let fixtures: Awaited<ReturnType<typeof fixtureServer>>;
  const hooks: { headers: IncomingMessage['headers']; body: unknown }[] = [];
  const audioAuth: string[] = [];

  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    const wav = readFileSync(speechWav);
    fixtures = await fixtureServer((req, body) => {
      if (req.url === '/audio/fox.wav') {
        audioAuth.push(req.headers.authorization ?? '');
        return { status: 200, body: wav, headers: { 'content-type': 'audio/wav' } };
      }
      if (req.url === '/garbage.bin') return { status: 200, body: Buffer.alloc(4000, 7) };
      if (req.url?.startsWith('/hook')) {
        hooks.push({ headers: req.headers, body: JSON.parse(body.toString('utf8')) });
        return { status: 200 };
      }
      return { status: 404 };
    });
  });
  afterAll(async () => {
    await s?.stop();
    await fixtures?.close();
  });

  it('creates a queued job from an uploaded file and completes it with a real transcript', async () => {
    const fileId = await upload(s, speechWav, 'fox.wav');
    const res = await create(s, { model: 'parlance-async-en-v1', file_id: fileId, client_reference_id: 'job-1', language_hints: ['en'] });
    expect(res.status).toBe(201);
    const rec = (await res.json()) as Rec;
    expect(rec).toMatchObject({
      status: 'queued',
      model: 'parlance-async-en-v1',
      audio_url: null,
      file_id: fileId,
      filename: 'fox.wav',
      language_hints: ['en'],
      audio_duration_ms: 0,
      error_type: null,
      error_message: null,
      webhook_url: null,
      webhook_auth_header_value: null,
      webhook_status_code: null,
      client_reference_id: 'job-1',
      enable_speaker_diarization: false,
      enable_language_identification: false,
    });
    const done = await waitFor(() => get(s, rec.id), terminal);
    expect(done.status).toBe('completed');
    expect(done.audio_duration_ms).toBeGreaterThan(2000);
    const t = await s.request(`/v1/transcriptions/${rec.id}/transcript`);
    expect(t.status).toBe(200);
    const transcript = (await t.json()) as { id: string; text: string; tokens: { text: string; start_ms: number; end_ms: number; confidence: number }[] };
    expect(transcript.id).toBe(rec.id);
    expect(transcript.text).toBe(transcript.tokens.map((x) => x.text).join(''));
    expect(wordErrorRate(SENTENCE, transcript.text).wer).toBeLessThanOrEqual(0.34);
    let last = -1;
    for (const tok of transcript.tokens) {
      expect(tok.start_ms).toBeGreaterThanOrEqual(last);
      expect(tok.end_ms).toBeGreaterThan(tok.start_ms);
      expect(tok.end_ms).toBeLessThanOrEqual(done.audio_duration_ms as number);
      expect(tok.confidence).toBeGreaterThanOrEqual(0);
      expect(tok.confidence).toBeLessThanOrEqual(1);
      last = tok.end_ms;
    }
  });

  it('fetches audio_url from an allowed host, names it after the URL, and sends the webhook', async () => {
    const withCredentials = (u: string, userinfo: string) => u.replace('http://', `http://${userinfo}@`);
    const res = await create(s, {
      model: 'stt-async-v4',
      // Credentials in URLs are used (Basic auth) and never shown again: masked in every record and list.
      audio_url: withCredentials(`${fixtures.url}/audio/fox.wav`, 'dl:pa55word'),
      webhook_url: withCredentials(`${fixtures.url}/hook?job=1`, 'hooktoken'),
      webhook_auth_header_name: 'X-Auth',
      webhook_auth_header_value: 's3cret',
    });
    expect(res.status).toBe(201);
    const rec = (await res.json()) as Rec;
    // The alias is echoed as the client sent it; the secret never is.
    expect(rec).toMatchObject({ model: 'stt-async-v4', filename: 'fox.wav', webhook_auth_header_name: 'X-Auth' });
    expect(rec.webhook_auth_header_value).toMatch(/^\*+$/);
    const done = await waitFor(
      () => get(s, rec.id),
      (r) => terminal(r) && r.webhook_status_code !== null,
    );
    expect(done.status).toBe('completed');
    expect(done.webhook_status_code).toBe(200);
    const hook = hooks.find((h) => (h.body as { id: string }).id === rec.id)!;
    expect(hook.body).toEqual({ id: rec.id, status: 'completed' });
    expect(hook.headers['x-auth']).toBe('s3cret');
    expect(hook.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.stringify(await get(s, rec.id))).not.toContain('s3cret');
    expect(rec.audio_url).toBe(withCredentials(`${fixtures.url}/audio/fox.wav`, '****:****'));
    expect(rec.webhook_url).toBe(withCredentials(`${fixtures.url}/hook?job=1`, '****'));
    expect(audioAuth).toContain(`Basic ${Buffer.from('dl:pa55word').toString('base64')}`);
    const listed = await (await s.request('/v1/transcriptions?limit=100')).text();
    for (const shown of [JSON.stringify(done), listed]) {
      expect(shown).not.toContain('pa55word');
      expect(shown).not.toContain('hooktoken');
    }
  });

  it('fails jobs whose audio cannot be had, with the record-only error types', async () => {
    const cases: [string, string][] = [
      ['http://169.254.169.254/latest/meta-data', 'file_download_blocked'],
      [`${fixtures.url.replace('127.0.0.1', '[::1]')}/audio/fox.wav`, 'file_download_blocked'],
      [`${fixtures.url}/missing.wav`, 'file_download_failed'],
      [`${fixtures.url}/garbage.bin`, 'invalid_audio_file'],
    ];
    const ids: string[] = [];
    for (const [url] of cases) {
      const res = await create(s, { model: 'parlance-async-en-v1', audio_url: url });
      expect(res.status).toBe(201); // the HTTP layer reports no failure
      ids.push(((await res.json()) as Rec).id);
    }
    for (const [i, [, type]] of cases.entries()) {
      const r = await waitFor(() => get(s, ids[i]!), terminal);
      expect(r.status, cases[i]![0]).toBe('failed');
      expect(r.error_type, cases[i]![0]).toBe(type);
      expect(typeof r.error_message).toBe('string');
      const t = await s.request(`/v1/transcriptions/${ids[i]}/transcript`);
      expect(t.status).toBe(409);
      expect((await errorBody(t)).error_type).toBe('transcription_invalid_state');
    }
  });

  it('validates the request field by field', async () => {
    const fileId = await upload(s, speechWav);
    const bad: [Record<string, unknown>, string, string][] = [
      [{ model: 'parlance-async-en-v1' }, 'audio_url', 'invalid_request'],
      [{ model: 'parlance-async-en-v1', file_id: fileId, audio_url: 'https://example.com/a.wav' }, 'file_id', 'invalid_request'],
      [{ model: 'parlance-async-en-v1', audio_url: 'ftp://example.com/a.wav' }, 'audio_url', 'invalid_request'],
      [
        { model: 'parlance-async-en-v1', file_id: fileId, webhook_url: 'http://127.0.0.1/h', webhook_auth_header_name: 'X-A' },
        'webhook_auth_header_value',
        'invalid_request',
      ],
      [{ model: 'parlance-async-en-v1', file_id: fileId, client_reference_id: 'x'.repeat(257) }, 'client_reference_id', 'invalid_request'],
      [{ model: 'parlance-async-en-v1', file_id: fileId, translation: { type: 'one_way', target_language: 'de' } }, 'translation', 'invalid_request'],
      [{ model: 'parlance-async-en-v1', file_id: fileId, language_hints: ['en', 'xx'], language_hints_strict: true }, 'language_hints.1', 'invalid_request'],
      [{ model: 'parlance-async-en-v1', file_id: fileId, context: 42 }, 'context', 'invalid_request'],
      [{ file_id: fileId }, 'model', 'invalid_request'],
    ];
    for (const [body, location, type] of bad) {
      const res = await create(s, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const e = await errorBody(res);
      expect(e.error_type).toBe(type);
      expect(
        e.validation_errors.map((v) => v.location),
        JSON.stringify(body),
      ).toContain(location);
    }
    // A hinted language no model supports is a hint, not an error, unless strict.
    expect((await create(s, { model: 'parlance-async-en-v1', file_id: fileId, language_hints: ['en', 'es'] })).status).toBe(201);
  });

  it('refuses unknown models and real-time models with model_not_available, and unknown files with file_not_found', async () => {
    const fileId = await upload(s, speechWav);
    for (const model of ['no-such-model-v9', 'parlance-rt-en-v1', 'stt-rt-v4']) {
      const res = await create(s, { model, file_id: fileId });
      expect(res.status).toBe(400);
      expect((await errorBody(res)).error_type).toBe('model_not_available');
    }
    const res = await create(s, { model: 'parlance-async-en-v1', file_id: randomUUID() });
    expect(res.status).toBe(404);
    expect((await errorBody(res)).error_type).toBe('file_not_found');
  });

  it('echoes context as given, string or object', async () => {
    const fileId = await upload(s, speechWav);
    const obj = { general: [{ key: 'domain', value: 'animals' }], terms: ['fox'], text: 'a fox story' };
    for (const context of ['foxes and dogs', obj]) {
      const res = await create(s, { model: 'parlance-async-en-v1', file_id: fileId, context });
      expect(res.status).toBe(201);
      const rec = (await res.json()) as Rec;
      expect(rec.context).toEqual(context);
      expect((await get(s, rec.id)).context).toEqual(context);
    }
  });

  it('lists newest first with cursors, counts by source, and 404s other ids', async () => {
    const page1 = await s.request('/v1/transcriptions?limit=2');
    expect(page1.status).toBe(200);
    const p1 = (await page1.json()) as { transcriptions: Rec[]; next_page_cursor: string | null };
    expect(p1.transcriptions).toHaveLength(2);
    expect(typeof p1.next_page_cursor).toBe('string');
    const all: Rec[] = [...p1.transcriptions];
    let cursor = p1.next_page_cursor;
    while (cursor) {
      const r = (await (await s.request(`/v1/transcriptions?limit=2&cursor=${encodeURIComponent(cursor)}`)).json()) as typeof p1;
      all.push(...r.transcriptions);
      cursor = r.next_page_cursor;
    }
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
    const created = all.map((r) => r.created_at as string);
    expect([...created].sort().reverse()).toEqual(created);
    const count = (await (await s.request('/v1/transcriptions/count')).json()) as { total: number; public_api: number; playground: number };
    expect(count).toEqual({ playground: 0, public_api: all.length, total: all.length });
    const missing = await s.request(`/v1/transcriptions/${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).error_type).toBe('transcription_not_found');
  });

  it('refuses to delete while transcribing, then deletes the finished job (204) for good', async () => {
    const fileId = await upload(s, longWav);
    const rec = (await (await create(s, { model: 'parlance-async-en-v1', file_id: fileId })).json()) as Rec;
    await waitFor(
      () => get(s, rec.id),
      (r) => r.status === 'transcribing' || terminal(r),
      30_000,
      20,
    );
    const during = await get(s, rec.id);
    if (during.status === 'transcribing') {
      const del = await s.request(`/v1/transcriptions/${rec.id}`, { method: 'DELETE' });
      expect(del.status).toBe(409);
      expect((await errorBody(del)).error_type).toBe('transcription_invalid_state');
      const early = await s.request(`/v1/transcriptions/${rec.id}/transcript`);
      expect(early.status).toBe(409);
    }
    expect(during.status, 'the 40 s file should still be transcribing when polled every 20 ms').toBe('transcribing');
    await waitFor(() => get(s, rec.id), terminal, 120_000);
    const del = await s.request(`/v1/transcriptions/${rec.id}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await s.request(`/v1/transcriptions/${rec.id}`)).status).toBe(404);
    expect((await s.request(`/v1/transcriptions/${rec.id}`, { method: 'DELETE' })).status).toBe(404);
  }, 180_000);

  it('needs stt_async permissions: read keys read, cannot create or delete', async () => {
    const key = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--read-only');
    expect((await s.request('/v1/transcriptions', { key: key.api_key })).status).toBe(200);
    const res = await s.request('/v1/transcriptions', {
      key: key.api_key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'parlance-async-en-v1', audio_url: `${fixtures.url}/audio/fox.wav` }),
    });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).error_type).toBe('permission_denied');
  });
});

describe('transcriptions: limits, queueing, retention, billing', () => {
  let s: Parlance;
  // Holds a download open until released, so a job stays in `downloading` and (with one job slot) the
  // jobs behind it stay `queued` for as long as the test needs.
  let gate: GatedAudioServer;
  beforeAll(async () => {
    gate = await gatedAudioServer(readFileSync(speechWav), { held: true });
    s = await startParlance({
      env: {
        PARLANCE_TRANSCRIPTION_CONCURRENCY: '1',
        PARLANCE_ASYNC_MAX_AUDIO_SECONDS: '5',
        PARLANCE_TRANSCRIPT_RETENTION_DAYS: String(8 / 86_400), // 8 seconds
        PARLANCE_HOUSEKEEPING_INTERVAL_SECONDS: '0.5',
        PARLANCE_TRANSCRIBE_ASYNC_PENDING_NUM_FILES: '3',
        PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      },
    });
  });
  afterAll(async () => {
    gate?.release();
    await s?.stop();
    await gate?.close();
  });

  it('fails audio over the model maximum with invalid_audio_file', async () => {
    const six = await makeAudio(path.join(work, 'six.wav'), { seconds: 6 });
    const rec = (await (await create(s, { model: 'parlance-async-en-v1', file_id: await upload(s, six) })).json()) as Rec;
    const done = await waitFor(() => get(s, rec.id), terminal);
    expect(done).toMatchObject({ status: 'failed', error_type: 'invalid_audio_file' });
  });

  it('caps pending jobs at transcribe_async_pending_num_files and fails a still-queued job whose file is deleted', async () => {
    gate.hold();
    const blocker = (await (await create(s, { model: 'parlance-async-en-v1', audio_url: `${gate.url}/held.wav` })).json()) as Rec;
    await waitFor(
      () => get(s, blocker.id),
      (r) => r.status === 'downloading',
    );
    const fileId = await upload(s, speechWav);
    const queued = (await (await create(s, { model: 'parlance-async-en-v1', file_id: fileId })).json()) as Rec;
    const third = (await (await create(s, { model: 'parlance-async-en-v1', file_id: await upload(s, speechWav) })).json()) as Rec;
    expect((await get(s, queued.id)).status).toBe('queued');
    expect((await get(s, third.id)).status).toBe('queued');

    // Three waiting or in progress: the cap (3) refuses a fourth.
    const fourth = await create(s, { model: 'parlance-async-en-v1', file_id: fileId });
    expect(fourth.status).toBe(429);
    const e = await errorBody(fourth);
    expect(e.error_type).toBe('limit_exceeded');
    expect(e.message).toContain('transcribe_async_pending_num_files');

    // Deleting the file of a job that has not started fails that job, and only that job.
    expect((await s.request(`/v1/files/${fileId}`, { method: 'DELETE' })).status).toBe(204);
    expect(await get(s, queued.id)).toMatchObject({ status: 'failed', error_type: 'file_not_found' });
    expect((await get(s, third.id)).status).toBe('queued');

    gate.release();
    for (const id of [blocker.id, third.id]) expect((await waitFor(() => get(s, id), terminal, 120_000)).status).toBe('completed');
  }, 180_000);

  it('purges transcripts after the retention window: reads give 409', async () => {
    const rec = (await (await create(s, { model: 'parlance-async-en-v1', file_id: await upload(s, speechWav) })).json()) as Rec;
    await waitFor(() => get(s, rec.id), terminal);
    const fresh = await s.request(`/v1/transcriptions/${rec.id}/transcript`);
    expect(fresh.status).toBe(200);
    await waitFor(
      async () => (await s.request(`/v1/transcriptions/${rec.id}/transcript`)).status,
      (status) => status === 409,
      30_000,
    );
    expect((await get(s, rec.id)).status).toBe('completed');
  }, 90_000);

  it('fails jobs at the start of download or transcription when the balance runs out meanwhile', async () => {
    gate.hold();
    const held = (await (await create(s, { model: 'parlance-async-en-v1', audio_url: `${gate.url}/held-2.wav` })).json()) as Rec;
    await waitFor(
      () => get(s, held.id),
      (r) => r.status === 'downloading',
    );
    const waiting = (await (await create(s, { model: 'parlance-async-en-v1', file_id: await upload(s, speechWav) })).json()) as Rec;
    expect((await get(s, waiting.id)).status).toBe('queued');
    await s.admin('set-balance', '--available-usd', '0', '--invoice-billing', 'off');
    try {
      gate.release();
      // The downloading job is checked again before transcription; the queued one before its download.
      for (const id of [held.id, waiting.id])
        expect(await waitFor(() => get(s, id), terminal)).toMatchObject({ status: 'failed', error_type: 'organization_balance_exhausted' });
    } finally {
      await s.admin('set-balance', '--invoice-billing', 'on');
    }
  });

  it('refuses creation with 402 when the balance is exhausted', async () => {
    await s.admin('set-balance', '--available-usd', '0', '--invoice-billing', 'off');
    try {
      const res = await create(s, { model: 'parlance-async-en-v1', file_id: await upload(s, speechWav) });
      expect(res.status).toBe(402);
      expect((await errorBody(res)).error_type).toBe('organization_balance_exhausted');
    } finally {
      await s.admin('set-balance', '--invoice-billing', 'on');
    }
  });
});

describe('transcriptions: soniox-sdk profile', () => {
  let s: Parlance;
  let hooks: Awaited<ReturnType<typeof fixtureServer>>;
  const received: unknown[] = [];
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_COMPAT: 'soniox-sdk', PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' } });
    hooks = await fixtureServer((_req, body) => {
      received.push(JSON.parse(body.toString('utf8')));
      return { status: 204 };
    });
  });
  afterAll(async () => {
    await s?.stop();
    await hooks?.close();
  });

  it('speaks the SDK status words: processing while working, error on failure, also in webhooks', async () => {
    const long = (await (await create(s, { model: 'stt-async-v5', file_id: await upload(s, longWav) })).json()) as Rec;
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const r = await get(s, long.id);
        seen.add(r.status);
        return r;
      },
      terminal,
      120_000,
      20,
    );
    expect(
      [...seen].every((st) => ['queued', 'processing', 'completed'].includes(st)),
      [...seen].join(','),
    ).toBe(true);
    expect(seen.has('processing')).toBe(true);

    const bad = (await (await create(s, { model: 'stt-async-v5', audio_url: 'http://169.254.169.254/x.wav', webhook_url: `${hooks.url}/h` })).json()) as Rec;
    const r = await waitFor(
      () => get(s, bad.id),
      (x) => terminal(x) && x.webhook_status_code !== null,
    );
    expect(r).toMatchObject({ status: 'error', error_type: 'file_download_blocked', webhook_status_code: 204 });
    expect(received).toContainEqual({ id: bad.id, status: 'error' });
  }, 180_000);
});

describe('transcriptions: signed webhooks', () => {
  const secret = `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7)).toString('base64')}`;
  let s: Parlance;
  let hooks: Awaited<ReturnType<typeof fixtureServer>>;
  const deliveries: { headers: IncomingMessage['headers']; raw: string }[] = [];
  let failuresLeft = 2;
  beforeAll(async () => {
    s = await startParlance({
      env: { PARLANCE_WEBHOOK_SIGNING_SECRET: secret, PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1', PARLANCE_WEBHOOK_RETRY_BASE_SECONDS: '0.2' },
    });
    hooks = await fixtureServer((req, body) => {
      deliveries.push({ headers: req.headers, raw: body.toString('utf8') });
      // The first two attempts fail with 503: delivery is retried with backoff until it succeeds.
      return { status: failuresLeft-- > 0 ? 503 : 200 };
    });
  });
  afterAll(async () => {
    await s?.stop();
    await hooks?.close();
  });

  it('signs deliveries with Standard Webhooks headers that verify, and retries 5xx', async () => {
    const { Webhook } = await import('standardwebhooks');
    const rec = (await (
      await create(s, { model: 'parlance-async-en-v1', file_id: await upload(s, speechWav), webhook_url: `${hooks.url}/signed` })
    ).json()) as Rec;
    const done = await waitFor(
      () => get(s, rec.id),
      (r) => r.webhook_status_code === 200,
      45_000,
      250,
    );
    expect(done.status).toBe('completed');
    expect(deliveries.length).toBe(3);
    const ids = new Set(deliveries.map((d) => d.headers['webhook-id']));
    expect(ids.size).toBe(1); // one message, three attempts
    for (const d of deliveries) {
      const verified = new Webhook(secret).verify(d.raw, {
        'webhook-id': String(d.headers['webhook-id']),
        'webhook-timestamp': String(d.headers['webhook-timestamp']),
        'webhook-signature': String(d.headers['webhook-signature']),
      });
      expect(verified).toEqual({ id: rec.id, status: 'completed' });
    }
    expect(() => new Webhook(secret).verify(deliveries[0]!.raw.replace('completed', 'failed'), deliveries[0]!.headers as Record<string, string>)).toThrow();
  }, 60_000);
});
