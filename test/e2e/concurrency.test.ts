// Concurrency caps, the concurrency report and the concurrent-streams history, black-box: real servers, real
// WebSocket sessions, `parlance admin set-limits`; then two server processes sharing PostgreSQL and Redis.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, errorBody, REDIS_TEST_URL, startParlance, waitFor, type Parlance } from '../harness.js';
import { expectRefused, holdStt, type Session } from './stt-helpers.js';
import { openTts, startMsg } from './tts-helpers.js';

interface Report {
  project: {
    current: { transcribe_concurrent: number; tts_concurrent: number };
    limits: { transcribe_concurrent: number | null; tts_concurrent: number | null };
  };
  organization: Report['project'];
}

const report = async (s: Parlance, key?: string): Promise<Report> => {
  const res = await s.request('/v1/concurrency-limits', { key });
  expect(res.status).toBe(200);
  return (await res.json()) as Report;
};

interface HistoryEntry {
  period_start: string;
  period_sec: number;
  sample_min: number;
  sample_max: number;
  sample_sum: number;
  sample_count: number;
  total_count: number;
}

const historyPath = (q: Record<string, string | number>) =>
  `/v1/concurrent-streams-history?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString()}`;

/** The current minute's entry of the project's history. */
async function currentMinute(s: Parlance, kind: 'stt' | 'tts', key?: string): Promise<HistoryEntry> {
  const now = Date.now();
  const minute = now - (now % 60_000);
  const res = await s.request(
    historyPath({ start_time: new Date(minute).toISOString(), end_time: new Date(minute + 60_000).toISOString(), period_sec: 60, kind }),
    { key },
  );
  expect(res.status).toBe(200);
  const body = (await res.json()) as { kind: string; entries: HistoryEntry[] };
  expect(body.kind).toBe(kind);
  expect(body.entries).toHaveLength(1);
  return body.entries[0]!;
}

/** The peak of the previous and the current minute (a sample may land just across a minute boundary). */
async function recentPeak(s: Parlance, kind: 'stt' | 'tts', key?: string): Promise<number> {
  const now = Date.now();
  const minute = now - (now % 60_000);
  const res = await s.request(
    historyPath({ start_time: new Date(minute - 60_000).toISOString(), end_time: new Date(minute + 60_000).toISOString(), period_sec: 60, kind }),
    { key },
  );
  const body = (await res.json()) as { entries: HistoryEntry[] };
  expect(body.entries).toHaveLength(2);
  return Math.max(...body.entries.map((e) => e.sample_max));
}

const ttsBody = JSON.stringify({ model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav', text: 'Hello.' });

describe('one server, in-memory counts', () => {
  let s: Parlance;
  const open: Session[] = [];
  beforeAll(async () => {
    s = await startParlance({
      env: { PARLANCE_CONCURRENCY_SAMPLE_SECONDS: '0.5', PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG: '7', PARLANCE_TTS_CONCURRENT_PROJECT: '0' },
    });
  });
  afterAll(async () => {
    for (const x of open) x.stop();
    await s?.stop();
  });

  it("GET /v1/concurrency-limits: the Concurrency report with the settings' caps (0 = unlimited → null)", async () => {
    const r = await report(s);
    expect(r).toEqual({
      project: { current: { transcribe_concurrent: 0, tts_concurrent: 0 }, limits: { transcribe_concurrent: 50, tts_concurrent: null } },
      organization: { current: { transcribe_concurrent: 0, tts_concurrent: 0 }, limits: { transcribe_concurrent: 7, tts_concurrent: 100 } },
    });
  });

  it('a live real-time session shows in the report and in the current minute of the history; both fall back when it ends', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'live');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    const session = await holdStt(s.url, key);
    open.push(session);
    const r = await waitFor(
      () => report(s, key),
      (x) => x.project.current.transcribe_concurrent === 1,
      20_000,
    );
    expect(r.organization.current.transcribe_concurrent).toBeGreaterThanOrEqual(1);
    expect(r.project.current.tts_concurrent).toBe(0);
    // A live stream is sampled in every minute it spans: the current one always has it.
    const entry = await waitFor(
      () => currentMinute(s, 'stt', key),
      (e) => e.sample_max === 1,
      20_000,
    );
    expect(entry).toMatchObject({ period_sec: 60, sample_min: 0, total_count: 1 });
    expect(entry.sample_count).toBeGreaterThanOrEqual(1);
    expect(entry.sample_sum).toBeGreaterThanOrEqual(1);
    expect(entry.sample_sum).toBeLessThanOrEqual(entry.sample_count);
    // The default project's history does not see this project's stream.
    expect((await currentMinute(s, 'stt')).sample_max).toBe(0);
    expect((await currentMinute(s, 'tts', key)).sample_max).toBe(0);
    session.stop();
    await waitFor(
      () => report(s, key),
      (x) => x.project.current.transcribe_concurrent === 0,
      10_000,
    );
  });

  it('TTS: a WebSocket stream counts while it lives; a short HTTP request still shows in the history of its minute', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'tts-live');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    const c = await openTts(s.url);
    c.send(startMsg(key, 'hold'));
    c.send({ text: 'Holding a slot. ', text_end: false, stream_id: 'hold' });
    await c.next((f) => f.stream_id === 'hold' && typeof f.audio === 'string');
    const r = await report(s, key);
    expect(r.project.current).toEqual({ transcribe_concurrent: 0, tts_concurrent: 1 });
    c.send({ stream_id: 'hold', cancel: true });
    await c.next((f) => f.stream_id === 'hold' && f.terminated === true);
    await waitFor(
      () => report(s, key),
      (x) => x.project.current.tts_concurrent === 0,
      10_000,
    );
    c.close();

    const p2 = await s.admin<{ id: string }>('create-project', '--name', 'tts-short');
    const key2 = (await s.admin<{ api_key: string }>('create-key', '--project', p2.id)).api_key;
    const res = await s.request('/tts', { method: 'POST', key: key2, headers: { 'content-type': 'application/json' }, body: ttsBody });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(
      await waitFor(
        () => recentPeak(s, 'tts', key2),
        (peak) => peak === 1,
        20_000,
      ),
    ).toBe(1);
    expect(await recentPeak(s, 'stt', key2)).toBe(0);
  });

  it('set-limits overrides per project and organization; limit_exceeded names the limit; "default" restores the setting', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'capped');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    expect(await s.admin('set-limits', '--project', p.id, '--transcribe-concurrent', '1', '--tts-concurrent', '0')).toEqual({
      scope: 'project',
      id: p.id,
      transcribe_concurrent: 1,
      tts_concurrent: 0,
    });
    const holder = await holdStt(s.url, key);
    open.push(holder);
    await waitFor(
      () => report(s, key),
      (x) => x.project.current.transcribe_concurrent === 1,
      20_000,
    );
    await expectRefused(await holdStt(s.url, key), /real-time transcription streams limit exceeded for the project \(1\)/);
    // TTS over HTTP with a project cap of 0.
    const res = await s.request('/tts', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: ttsBody });
    expect(res.status).toBe(429);
    const b = (await res.json()) as Record<string, unknown>;
    expect(b).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
    expect(b.error_message).toMatch(/text-to-speech requests limit exceeded for the project \(0\)/);
    // Unlimited (null) in the report, then back to the settings' value.
    await s.admin('set-limits', '--project', p.id, '--tts-concurrent', 'none');
    expect((await report(s, key)).project.limits).toEqual({ transcribe_concurrent: 1, tts_concurrent: null });
    const ok = await s.request('/tts', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: ttsBody });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    await s.admin('set-limits', '--project', p.id, '--transcribe-concurrent', 'default');
    expect((await report(s, key)).project.limits.transcribe_concurrent).toBe(50);
    // An organization cap below the live count refuses the next session, naming the organization.
    await s.admin('set-limits', '--transcribe-concurrent', '1');
    expect((await report(s, key)).organization.limits.transcribe_concurrent).toBe(1);
    await expectRefused(await holdStt(s.url, key), /limit exceeded for the organization \(1\)/);
    await s.admin('set-limits', '--transcribe-concurrent', 'default');
    holder.stop();
  }, 60_000);

  it('set-limits refuses bad values and unknown scopes', async () => {
    await expect(s.admin('set-limits', '--transcribe-concurrent', '-1')).rejects.toThrow(/whole number/);
    await expect(s.admin('set-limits', '--tts-concurrent', 'lots')).rejects.toThrow(/whole number/);
    await expect(s.admin('set-limits', '--project', randomUUID(), '--tts-concurrent', '1')).rejects.toThrow(/no such project/);
    await expect(s.admin('set-limits', '--organization', randomUUID())).rejects.toThrow(/no such organization/);
    // Without values: shows the effective caps.
    expect(await s.admin('set-limits')).toMatchObject({ scope: 'organization', id: s.organizationId, transcribe_concurrent: 7, tts_concurrent: 100 });
  });

  it('history: every period of the window in ascending order, zeros when idle; hours and days too', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'idle');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    const get = async (q: Record<string, string | number>) => {
      const res = await s.request(historyPath(q), { key });
      expect(res.status).toBe(200);
      return (await res.json()) as { kind: string; entries: HistoryEntry[] };
    };
    const minutes = await get({ start_time: '2026-04-28T09:00:00Z', end_time: '2026-04-28T10:00:00Z', period_sec: 60, kind: 'tts' });
    expect(minutes.kind).toBe('tts');
    expect(minutes.entries).toHaveLength(60);
    minutes.entries.forEach((e, i) => {
      expect(e).toEqual({
        period_start: new Date(Date.parse('2026-04-28T09:00:00Z') + i * 60_000).toISOString().replace('.000Z', 'Z'),
        period_sec: 60,
        sample_min: 0,
        sample_max: 0,
        sample_sum: 0,
        sample_count: 0,
        total_count: 0,
      });
    });
    expect((await get({ start_time: '2026-04-28T00:00:00Z', end_time: '2026-04-29T00:00:00Z', period_sec: 3600, kind: 'stt' })).entries).toHaveLength(24);
    const days = await get({ start_time: '2026-04-01T00:00:00Z', end_time: '2026-05-01T00:00:00Z', period_sec: 86400, kind: 'stt' });
    expect(days.entries.map((e) => e.period_start)).toEqual(Array.from({ length: 30 }, (_, i) => `2026-04-${String(i + 1).padStart(2, '0')}T00:00:00Z`));
  });

  it('history: 400 invalid_request for missing or malformed parameters, end not after start, and windows over the caps', async () => {
    const ok = { start_time: '2026-04-28T09:00:00Z', end_time: '2026-04-28T10:00:00Z', period_sec: 60, kind: 'stt' };
    const bad = async (q: Record<string, string | number>, location?: string) => {
      const res = await s.request(historyPath(q));
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.error_type).toBe('invalid_request');
      if (location) expect(body.validation_errors.map((v) => v.location)).toContain(location);
      return body;
    };
    for (const k of Object.keys(ok)) {
      const q: Record<string, string | number> = { ...ok };
      delete q[k];
      await bad(q, k);
    }
    await bad({ ...ok, period_sec: 120 }, 'period_sec');
    await bad({ ...ok, period_sec: 'hourly' }, 'period_sec');
    await bad({ ...ok, kind: 'video' }, 'kind');
    await bad({ ...ok, start_time: 'yesterday' }, 'start_time');
    expect((await bad({ ...ok, end_time: ok.start_time })).message).toMatch(/strictly after/);
    expect((await bad({ ...ok, end_time: '2026-04-28T08:00:00Z' })).message).toMatch(/strictly after/);
    expect((await bad({ ...ok, end_time: '2026-05-05T09:01:00Z' })).message).toMatch(/7 days/);
    const week = await s.request(historyPath({ ...ok, end_time: '2026-05-05T09:00:00Z' }));
    expect(week.status).toBe(200);
    expect(((await week.json()) as { entries: unknown[] }).entries).toHaveLength(7 * 1440);
    expect((await bad({ ...ok, start_time: '2000-01-01T00:00:00Z', end_time: '2003-01-01T00:00:00Z', period_sec: 3600 })).message).toMatch(/20000 entries/);
  });

  it('both endpoints need a key with usage:read', async () => {
    for (const path of [
      '/v1/concurrency-limits',
      historyPath({ start_time: '2026-04-28T09:00:00Z', end_time: '2026-04-28T10:00:00Z', period_sec: 60, kind: 'stt' }),
    ]) {
      expect((await s.request(path, { key: null })).status).toBe(401);
      const k = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'stt_rt:write');
      const res = await s.request(path, { key: k.api_key });
      expect(res.status).toBe(403);
      expect((await errorBody(res)).message).toMatch(/usage:read/);
    }
  });
});

describe('two server processes sharing PostgreSQL and Redis', () => {
  let a: Parlance;
  let b: Parlance;
  let drop: () => Promise<void>;
  const open: Session[] = [];
  beforeAll(async () => {
    const db = await createPgDatabase();
    drop = db.drop;
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS_TEST_URL,
      PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '2',
      PARLANCE_CONCURRENCY_LEASE_SECONDS: '3',
      PARLANCE_CONCURRENCY_SAMPLE_SECONDS: '0.5',
    };
    a = await startParlance({ env });
    b = await startParlance({ env });
  });
  afterAll(async () => {
    for (const x of open) x.stop();
    await a?.stop();
    await b?.stop();
    await drop?.();
  });

  it("share one cap; samples of both nodes add up; a killed node's slot comes free after the lease TTL", async () => {
    const key = a.apiKey;
    const onA = await holdStt(a.url, key);
    const onB = await holdStt(b.url, key);
    open.push(onA, onB);
    // Each node serves one stream; the report on either counts both.
    const r = await waitFor(
      () => report(b, key),
      (x) => x.project.current.transcribe_concurrent === 2,
      30_000,
    );
    expect(r.organization.current.transcribe_concurrent).toBe(2);
    // Counts across nodes agree once each node's leases are in Redis (a lease taken while a command was slow is
    // moved there at the next refresh).
    await waitFor(
      () => report(a, key),
      (x) => x.project.current.transcribe_concurrent === 2,
      10_000,
    );
    await expectRefused(await holdStt(b.url, key), /limit exceeded for the project \(2\)/);
    await expectRefused(await holdStt(a.url, key), /limit exceeded for the project \(2\)/);
    // Both nodes write their samples; the history adds them up.
    const entry = await waitFor(
      () => currentMinute(a, 'stt', key),
      (e) => e.sample_max === 2,
      20_000,
    );
    expect(entry.total_count).toBe(1);
    // Node A dies without releasing its slot: its lease lapses after the TTL, then B takes a new session.
    await a.kill9();
    await waitFor(
      () => report(b, key),
      (x) => x.project.current.transcribe_concurrent === 1,
      15_000,
    );
    const next = await holdStt(b.url, key);
    open.push(next);
    await waitFor(
      () => report(b, key),
      (x) => x.project.current.transcribe_concurrent === 2,
      20_000,
    );
    expect(next.frames.filter((f) => f.error_type)).toEqual([]);
  });
});

describe('requests-per-minute limits of the new categories', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_RATE_CONCURRENCY_PROJECT_PER_MIN: '3', PARLANCE_RATE_ORGANIZATION_ORG_PER_MIN: '2' } });
  });
  afterAll(() => s?.stop());

  it("concurrency: the report and the history share the project's limit; one more gets 429 naming it", async () => {
    const history = historyPath({ start_time: '2026-04-28T09:00:00Z', end_time: '2026-04-28T09:01:00Z', period_sec: 60, kind: 'stt' });
    for (const path of ['/v1/concurrency-limits', history, '/v1/concurrency-limits']) {
      const ok = await s.request(path);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-limit')).toBe('3');
    }
    const res = await s.request(history);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = await errorBody(res);
    expect(body.error_type).toBe('limit_exceeded');
    expect(body.message).toMatch(/per minute.*project.*concurrency: 3/);
  });

  it('organization: the organization endpoints count per organization; one more gets 429 naming it', async () => {
    expect((await s.request('/v1/organization')).status).toBe(200);
    expect((await s.request('/v1/organization/projects')).status).toBe(200);
    const res = await s.request(`/v1/organization/projects/${s.projectId}/api-keys`);
    expect(res.status).toBe(429);
    expect((await errorBody(res)).message).toMatch(/per minute.*organization.*organization: 2/);
  });
});
