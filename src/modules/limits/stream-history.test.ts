// Stream sampling and history on a real SQLite database with an injected clock: minute, hour and day
// boundaries without sleeping, two nodes adding up, and every validation rule at its boundary.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/harness.js';
import { openDatabase, type Db } from '../../storage/database.js';
import { ApiError } from '../../wire/api-error.js';
import { ConcurrencyLimits } from './concurrency.js';
import { LimitsRepository } from './repository.js';
import { MAX_HISTORY_ENTRIES, StreamHistory, StreamSampler } from './stream-history.js';

let dir: string;
let db: Db;
let repo: LimitsRepository;
let history: StreamHistory;

beforeAll(async () => {
  dir = tempDir('parlance-history-');
  db = await openDatabase({ dataDir: dir });
  repo = new LimitsRepository(db.kysely);
  history = new StreamHistory(repo);
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

class TestClock {
  constructor(public t: number) {}
  now() {
    return new Date(this.t);
  }
  set(iso: string) {
    this.t = Date.parse(iso);
  }
}

function node(clock: TestClock) {
  const limits = new ConcurrencyLimits(repo, { defaults: { stt: { organization: 0, project: 0 }, tts: { organization: 0, project: 0 } } });
  const sampler = new StreamSampler(limits, repo, { intervalMs: 15_000, nodeId: randomUUID(), clock });
  return { limits, sampler };
}

const zero = (period_start: string, period_sec: number) => ({
  period_start,
  period_sec,
  sample_min: 0,
  sample_max: 0,
  sample_sum: 0,
  sample_count: 0,
  total_count: 0,
});

describe('StreamSampler → StreamHistory', () => {
  it('per-minute aggregates count idle instants as zeros, split at the minute, hour and day (UTC month end)', async () => {
    const clock = new TestClock(Date.parse('2026-03-31T23:58:00Z'));
    const { limits, sampler } = node(clock);
    const who = { organizationId: randomUUID(), projectId: randomUUID() };
    await sampler.tick(); // 23:58:00 idle: nothing is written
    clock.set('2026-03-31T23:58:15Z');
    const a = await limits.acquire('stt', who);
    const b = await limits.acquire('stt', who);
    await sampler.tick(); // 2 (one idle instant before: 0)
    b();
    clock.set('2026-03-31T23:58:30Z');
    await sampler.tick(); // 2: the second stream lived during this interval
    clock.set('2026-03-31T23:58:45Z');
    await sampler.tick(); // 1
    clock.set('2026-04-01T00:00:00Z'); // next month
    await sampler.tick(); // 1
    a();
    clock.set('2026-04-01T00:00:15Z');
    await sampler.tick(); // 1: live during the interval
    clock.set('2026-04-01T00:00:30Z');
    await sampler.tick(); // 0
    const tts = await limits.acquire('tts', who);
    clock.set('2026-04-01T01:10:00Z');
    await sampler.tick();
    tts();

    const minutes = await history.history(who.projectId, { start_time: '2026-03-31T23:57:00Z', end_time: '2026-04-01T00:02:00Z', period_sec: 60, kind: 'stt' });
    expect(minutes).toEqual({
      kind: 'stt',
      entries: [
        zero('2026-03-31T23:57:00Z', 60),
        { period_start: '2026-03-31T23:58:00Z', period_sec: 60, sample_min: 0, sample_max: 2, sample_sum: 5, sample_count: 4, total_count: 1 },
        zero('2026-03-31T23:59:00Z', 60),
        { period_start: '2026-04-01T00:00:00Z', period_sec: 60, sample_min: 0, sample_max: 1, sample_sum: 2, sample_count: 3, total_count: 1 },
        zero('2026-04-01T00:01:00Z', 60),
      ],
    });
    const hours = await history.history(who.projectId, { start_time: '2026-03-31T23:00:00Z', end_time: '2026-04-01T02:00:00Z', period_sec: 3600, kind: 'stt' });
    expect(hours.entries).toEqual([
      { period_start: '2026-03-31T23:00:00Z', period_sec: 3600, sample_min: 0, sample_max: 2, sample_sum: 2, sample_count: 1, total_count: 60 },
      { period_start: '2026-04-01T00:00:00Z', period_sec: 3600, sample_min: 0, sample_max: 1, sample_sum: 1, sample_count: 1, total_count: 60 },
      zero('2026-04-01T01:00:00Z', 3600),
    ]);
    const days = await history.history(who.projectId, { start_time: '2026-03-31T00:00:00Z', end_time: '2026-04-02T00:00:00Z', period_sec: 86400, kind: 'stt' });
    expect(days.entries).toEqual([
      { period_start: '2026-03-31T00:00:00Z', period_sec: 86400, sample_min: 0, sample_max: 2, sample_sum: 2, sample_count: 1, total_count: 24 },
      { period_start: '2026-04-01T00:00:00Z', period_sec: 86400, sample_min: 0, sample_max: 1, sample_sum: 1, sample_count: 1, total_count: 24 },
    ]);
    const ttsDays = await history.history(who.projectId, {
      start_time: '2026-04-01T00:00:00Z',
      end_time: '2026-04-02T00:00:00Z',
      period_sec: 86400,
      kind: 'tts',
    });
    expect(ttsDays.entries).toEqual([
      { period_start: '2026-04-01T00:00:00Z', period_sec: 86400, sample_min: 0, sample_max: 1, sample_sum: 1, sample_count: 1, total_count: 24 },
    ]);
    // Another project sees nothing.
    const other = await history.history(randomUUID(), { start_time: '2026-03-31T23:58:00Z', end_time: '2026-03-31T23:59:00Z', period_sec: 60, kind: 'stt' });
    expect(other.entries).toEqual([zero('2026-03-31T23:58:00Z', 60)]);
  });

  it('two nodes sampling the same project add up', async () => {
    const clock = new TestClock(Date.parse('2026-05-01T10:00:00Z'));
    const n1 = node(clock);
    const n2 = node(clock);
    const who = { organizationId: randomUUID(), projectId: randomUUID() };
    const held = [await n1.limits.acquire('tts', who), await n2.limits.acquire('tts', who), await n2.limits.acquire('tts', who)];
    await n1.sampler.tick();
    await n2.sampler.tick();
    clock.set('2026-05-01T10:00:15Z');
    held[0]!();
    await n1.sampler.tick(); // still 1: live during the interval
    await n2.sampler.tick();
    clock.set('2026-05-01T10:00:30Z');
    await n1.sampler.tick(); // 0
    await n2.sampler.tick(); // 2
    const h = await history.history(who.projectId, { start_time: '2026-05-01T10:00:00Z', end_time: '2026-05-01T10:01:00Z', period_sec: 60, kind: 'tts' });
    expect(h.entries).toEqual([
      { period_start: '2026-05-01T10:00:00Z', period_sec: 60, sample_min: 0, sample_max: 3, sample_sum: 8, sample_count: 3, total_count: 1 },
    ]);
  });
});

describe('StreamHistory validation', () => {
  const p = randomUUID();
  const q = (start_time: string, end_time: string, period_sec = 60, kind: 'stt' | 'tts' = 'stt') =>
    history.history(p, { start_time, end_time, period_sec, kind });

  async function invalid(promise: Promise<unknown>, message: RegExp, location?: string): Promise<void> {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).type).toBe('invalid_request');
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toMatch(message);
    if (location) expect((err as ApiError).validationErrors[0]?.location).toBe(location);
  }

  it('end_time must be strictly after start_time', async () => {
    await invalid(q('2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), /strictly after/);
    await invalid(q('2026-01-01T00:01:00Z', '2026-01-01T00:00:00Z'), /strictly after/);
    expect((await q('2026-01-01T00:00:00Z', '2026-01-01T00:00:00.001Z')).entries).toHaveLength(1);
  });

  it('period_sec is 60, 3600 or 86400', async () => {
    for (const period of [0, 1, 59, 61, 120, 86401]) await invalid(q('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', period), /period_sec/, 'period_sec');
  });

  it('times are ISO 8601 with a zone', async () => {
    for (const bad of ['yesterday', '2026-01-01', '2026-01-01T00:00:00', '2026-13-01T00:00:00Z', '1767225600', ''])
      await invalid(q(bad, '2026-01-02T00:00:00Z'), /start_time/, 'start_time');
    await invalid(q('2026-01-01T00:00:00Z', 'later'), /end_time/, 'end_time');
    // An offset is converted to UTC.
    expect((await q('2026-01-01T02:00:00+02:00', '2026-01-01T00:02:00Z')).entries.map((e) => e.period_start)).toEqual([
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:01:00Z',
    ]);
  });

  it('60 s periods: a window of exactly 7 days is allowed, a minute more is refused', async () => {
    const week = await q('2026-01-01T00:00:00Z', '2026-01-08T00:00:00Z');
    expect(week.entries).toHaveLength(7 * 24 * 60);
    await invalid(q('2026-01-01T00:00:00Z', '2026-01-08T00:01:00Z'), /7 days/);
    // The same window is fine with hourly periods.
    expect((await q('2026-01-01T00:00:00Z', '2026-01-08T00:01:00Z', 3600)).entries).toHaveLength(7 * 24 + 1);
  });

  it(`at most ${MAX_HISTORY_ENTRIES} entries`, async () => {
    const start = Date.parse('2020-01-01T00:00:00Z');
    const hours = (n: number) => new Date(start + n * 3_600_000).toISOString();
    const ok = await q(hours(0), hours(MAX_HISTORY_ENTRIES), 3600);
    expect(ok.entries).toHaveLength(MAX_HISTORY_ENTRIES);
    expect(ok.entries.at(-1)!.period_start).toBe(hours(MAX_HISTORY_ENTRIES - 1).replace('.000Z', 'Z'));
    await invalid(q(hours(0), hours(MAX_HISTORY_ENTRIES + 1), 3600), /20000 entries/);
    const days = (n: number) => new Date(start + n * 86_400_000).toISOString();
    expect((await q(days(0), days(MAX_HISTORY_ENTRIES), 86400)).entries).toHaveLength(MAX_HISTORY_ENTRIES);
    await invalid(q(days(0), days(MAX_HISTORY_ENTRIES + 1), 86400), /20000 entries/);
  });

  it('periods are aligned to multiples of period_sec: an unaligned start begins at the next period', async () => {
    const h = await q('2026-01-01T00:00:30Z', '2026-01-01T00:03:00Z');
    expect(h.entries.map((e) => e.period_start)).toEqual(['2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z']);
    // A window holding no period start is empty, not an error.
    expect((await q('2026-01-01T00:00:10Z', '2026-01-01T00:00:50Z')).entries).toEqual([]);
  });
});
