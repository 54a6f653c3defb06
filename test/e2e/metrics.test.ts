// GET /metrics: Prometheus text from prom-client, with the process's event-loop delay, HTTP requests by route
// pattern and status, and the node's live-work gauges; closed to all but a bearer token when one is configured.
// Job durations, queue depth, webhook outcomes, usage, live sessions and engine slots are read after doing the
// real thing on a server of their own.
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, gatedAudioServer, makeSpeech, startParlance, streamRealtime, tempDir, uploadFile, waitFor, type Parlance } from '../harness.js';
import { openTts, startMsg, streamAudio } from './tts-helpers.js';

let open: Parlance;
let closed: Parlance;
beforeAll(async () => {
  [open, closed] = await Promise.all([startParlance(), startParlance({ env: { PARLANCE_METRICS_TOKEN: 'scrape-secret' } })]);
});
afterAll(async () => Promise.all([open?.stop(), closed?.stop()]));

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('reports event-loop delay, requests by route pattern and status, and live work', async () => {
    for (let i = 0; i < 3; i++) expect((await open.request('/v1/files?limit=5')).status).toBe(200);
    expect((await open.request('/v1/files/does-not-exist')).status).toBe(404);
    const res = await open.request('/metrics', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sample(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'parlance_http_request_duration_seconds_count{method="GET",route="/v1/files",status="200"}')).toBe(3);
    // The route pattern, not the path: ids do not make new series.
    expect(sample(text, 'parlance_http_request_duration_seconds_count{method="GET",route="/v1/files/:file_id",status="404"}')).toBe(1);
    expect(text).not.toMatch(/does-not-exist/);
    expect(sample(text, 'parlance_tts_active')).toBe(0);
    expect(sample(text, 'parlance_realtime_sessions')).toBe(0);
    expect(sample(text, 'parlance_tts_synthesis_waiting')).toBe(0);
  });

  it('reports how live final tokens were made and how long after their audio they went out', async () => {
    const wav = await makeSpeech(
      path.join(tempDir('metrics-'), 'two.wav'),
      'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.',
      { padSeconds: 1 },
    );
    const frames = await streamRealtime(open, readFileSync(wav).subarray(44));
    const finals = frames.flatMap((f) => f.tokens).filter((t) => t.is_final && !t.text.startsWith('<'));
    expect(finals.length).toBeGreaterThan(3);
    const text = await (await open.request('/metrics', { key: null })).text();
    // Every final token of the session is one observation; the audio went in faster than real time, so lags are 0+.
    expect(sample(text, 'parlance_realtime_final_token_lag_seconds_count')).toBe(finals.length);
    const outcomes = ['decoded', 'skipped', 'late', 'failed'].map((o) => sample(text, `parlance_realtime_second_pass_total{outcome="${o}"}`) ?? 0);
    expect(outcomes.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('with PARLANCE_METRICS_TOKEN, answers only its bearer token (an API key is not enough)', async () => {
    const none = await closed.request('/metrics', { key: null });
    expect(none.status).toBe(401);
    expect((await errorBody(none)).error_type).toBe('unauthenticated');
    expect((await closed.request('/metrics')).status).toBe(401);
    const ok = await closed.request('/metrics', { key: null, headers: { authorization: 'Bearer scrape-secret' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/process_cpu_seconds_total/);
  });
});

/** The value of the series `name` whose labels are exactly `labels`, or undefined. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.keys(have).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('GET /metrics: jobs, webhooks, usage, live work and engines, after the real thing', () => {
  let s: Parlance;
  let work: string;
  let speechWav: string;
  let hooks: { url: string; hits: Map<string, number>; close(): Promise<void> };
  beforeAll(async () => {
    work = tempDir('metrics-jobs-');
    const hits = new Map<string, number>();
    const server = createServer((req, res) => {
      req.resume();
      const route = (req.url ?? '').split('?')[0]!;
      const n = (hits.get(route) ?? 0) + 1;
      hits.set(route, n);
      if (route === '/garbage.bin') return res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.alloc(4000, 7));
      const status = { '/ok': 200, '/flaky': n === 1 ? 500 : 204, '/bad': 400, '/down': 503 }[route] ?? 404;
      res.writeHead(status).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hooks = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, close: () => new Promise<void>((r) => server.close(() => r())) };
    [s, speechWav] = await Promise.all([
      startParlance({
        env: {
          PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
          PARLANCE_WEBHOOK_MAX_ATTEMPTS: '2',
          PARLANCE_WEBHOOK_RETRY_BASE_SECONDS: '0.1',
          PARLANCE_TRANSCRIPTION_CONCURRENCY: '1',
          PARLANCE_TTS_MODELS: 'parlance-tts-espeak-v1',
          PARLANCE_TTS_PROCESSES: '2',
          PARLANCE_VOICE_PROFILE_CACHE_DIR: path.join(tmpdir(), 'parlance-test-voice-profiles'),
        },
      }),
      makeSpeech(path.join(work, 'fox.wav'), 'The quick brown fox jumps over the lazy dog.'),
    ]);
  });
  afterAll(async () => {
    await s?.stop();
    await hooks?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const scrape = async () => (await s.request('/metrics', { key: null })).text();
  const create = async (body: Record<string, unknown>) => {
    const res = await s.request('/v1/transcriptions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stt-async-v4', ...body }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const record = async (id: string) => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; audio_duration_ms: number };
  /** Scrape until every series has grown by its expected amount since `before`; returns the last text. */
  const grown = async (before: string, expected: [name: string, labels: Record<string, string>, delta: number][], timeoutMs = 60_000) => {
    const delta = (text: string, name: string, labels: Record<string, string>) => (metric(text, name, labels) ?? 0) - (metric(before, name, labels) ?? 0);
    const text = await waitFor(scrape, (t) => expected.every(([n, l, d]) => delta(t, n, l) === d), timeoutMs, 100).catch(() => scrape());
    for (const [n, l, d] of expected) expect(delta(text, n, l), `${n}${JSON.stringify(l)}`).toBe(d);
    return text;
  };

  it('times transcription and webhook jobs by outcome, counts webhook outcomes and the audio seconds metered', async () => {
    const before = await scrape();
    const fileId = await uploadFile(s, speechWav);
    const ok = await create({ file_id: fileId, webhook_url: `${hooks.url}/ok` });
    const flaky = await create({ file_id: fileId, webhook_url: `${hooks.url}/flaky` });
    const down = await create({ file_id: fileId, webhook_url: `${hooks.url}/down` });
    // Undecodable audio: the job ends by recording the failure, and its webhook gets a final 400.
    const bad = await create({ audio_url: `${hooks.url}/garbage.bin`, webhook_url: `${hooks.url}/bad` });
    const job = (kind: string, outcome: string) => ['parlance_job_duration_seconds_count', { kind, outcome }] as const;
    const webhook = (outcome: string) => ['parlance_webhook_deliveries_total', { outcome }] as const;
    const text = await grown(before, [
      [...job('transcription', 'completed'), 3],
      [...job('transcription', 'failed'), 1],
      // ok and flaky's second attempt; flaky's and down's first; bad's 400 and down's last attempt.
      [...job('webhook', 'completed'), 2],
      [...job('webhook', 'retried'), 2],
      [...job('webhook', 'failed'), 2],
      [...webhook('delivered'), 2],
      [...webhook('retried'), 2],
      [...webhook('failed'), 2],
      [...webhook('refused'), 0],
    ]);
    expect((await record(bad)).status).toBe('failed');
    expect([hooks.hits.get('/ok'), hooks.hits.get('/flaky'), hooks.hits.get('/down'), hooks.hits.get('/bad')]).toEqual([1, 2, 2, 1]);
    const seconds = (await Promise.all([ok, flaky, down].map(record))).reduce((sum, r) => sum + r.audio_duration_ms / 1000, 0);
    expect(seconds).toBeGreaterThan(4);
    const metered =
      (metric(text, 'parlance_usage_audio_seconds_total', { kind: 'stt_async' }) ?? 0) -
      (metric(before, 'parlance_usage_audio_seconds_total', { kind: 'stt_async' }) ?? 0);
    expect(metered).toBeCloseTo(seconds, 2);
    // The batch decoders of the model that ran, all idle again.
    const batch = { pool: 'stt_batch', model: 'parlance-en-pocketsphinx-v1' };
    expect(metric(text, 'parlance_engine_slots', batch)).toBeGreaterThanOrEqual(1);
    expect(metric(text, 'parlance_engine_slots_busy', batch)).toBe(0);
    // The queue count serves scrapes for up to 5 s: it falls to 0 within that.
    const queued = (t: string) => metric(t, 'parlance_jobs_queued', { kind: 'transcription' });
    expect(queued(await waitFor(scrape, (t) => queued(t) === 0, 10_000, 100))).toBe(0);
  }, 120_000);

  it('reports queued jobs by kind while they wait', async () => {
    const audio = await gatedAudioServer(readFileSync(speechWav), { held: true });
    try {
      // One job slot: the first job holds it downloading, the other two wait in the queue.
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await create({ audio_url: `${audio.url}/fox.wav` }));
      const queued = (t: string) => metric(t, 'parlance_jobs_queued', { kind: 'transcription' });
      expect(queued(await waitFor(scrape, (t) => queued(t) === 2, 30_000, 100))).toBe(2);
      expect(metric(await scrape(), 'parlance_jobs_queued', { kind: 'webhook' })).toBe(0);
      audio.release();
      for (const id of ids)
        await waitFor(
          () => record(id),
          (r) => r.status === 'completed',
          60_000,
        );
      // The count serves scrapes for up to 5 s: the gauge falls to 0 within that.
      expect(queued(await waitFor(scrape, (t) => queued(t) === 0, 10_000, 100))).toBe(0);
    } finally {
      await audio.close();
    }
  }, 120_000);

  it('counts live STT sessions and TTS streams while they are open, their decoders and synthesizer slots, and their usage', async () => {
    const before = await scrape();
    expect(metric(before, 'parlance_engine_slots', { pool: 'tts_synthesis' })).toBe(2);
    const pcm = readFileSync(speechWav).subarray(44);
    const { default: WebSocket } = await import('ws');
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
    const finished = new Promise<void>((resolve) => ws.on('message', (m) => (JSON.parse(m.toString()) as { finished?: boolean }).finished && resolve()));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
    ws.send(pcm.subarray(0, 32000));
    const streaming = { pool: 'stt_streaming', model: 'parlance-en-pocketsphinx-v1' };
    const open = await waitFor(
      scrape,
      (t) => metric(t, 'parlance_realtime_sessions') === 1 && metric(t, 'parlance_engine_slots_busy', streaming) === 1,
      30_000,
      100,
    );
    expect(metric(open, 'parlance_engine_slots', streaming)).toBeGreaterThanOrEqual(1);
    for (let off = 32000; off < pcm.length; off += 3200) ws.send(pcm.subarray(off, off + 3200));
    ws.send('');
    await finished;
    ws.close();
    const rt = (t: string) =>
      (metric(t, 'parlance_usage_audio_seconds_total', { kind: 'stt_rt' }) ?? 0) -
      (metric(before, 'parlance_usage_audio_seconds_total', { kind: 'stt_rt' }) ?? 0);
    const closed = await waitFor(scrape, (t) => metric(t, 'parlance_realtime_sessions') === 0 && rt(t) > 0, 30_000, 100);
    expect(rt(closed)).toBeCloseTo(pcm.length / 32000, 1);

    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 'm1'));
    c.send({ text: 'Metrics count this stream while it is open.', text_end: false, stream_id: 'm1' });
    expect(metric(await waitFor(scrape, (t) => metric(t, 'parlance_tts_active') === 1, 30_000, 100), 'parlance_tts_active')).toBe(1);
    c.send({ text: '', text_end: true, stream_id: 'm1' });
    await c.next((f) => f.stream_id === 'm1' && f.terminated === true, 30_000);
    c.close();
    const spoken = streamAudio(c.frames, 'm1').length / 32000;
    const tts = (t: string) =>
      (metric(t, 'parlance_usage_audio_seconds_total', { kind: 'tts' }) ?? 0) - (metric(before, 'parlance_usage_audio_seconds_total', { kind: 'tts' }) ?? 0);
    const done = await waitFor(scrape, (t) => metric(t, 'parlance_tts_active') === 0 && tts(t) > 0, 30_000, 100);
    expect(spoken).toBeGreaterThan(1);
    expect(tts(done)).toBeCloseTo(spoken, 1);
    expect(metric(done, 'parlance_engine_slots_busy', { pool: 'tts_synthesis' })).toBe(0);
  }, 120_000);

  it('times voice preparation jobs', async () => {
    const before = await scrape();
    const form = new FormData();
    form.append('name', 'metrics-voice');
    form.append('file', new Blob([new Uint8Array(readFileSync(speechWav))]), 'reference.wav');
    const res = await s.request('/v1/voices', { method: 'POST', body: form });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await waitFor(
      async () => (await (await s.request(`/v1/voices/${id}`)).json()) as { models: { status: string }[] },
      (v) => v.models.every((m) => m.status !== 'processing'),
      60_000,
    );
    await grown(before, [['parlance_job_duration_seconds_count', { kind: 'voice_preparation', outcome: 'completed' }, 1]]);
  }, 120_000);
});
