// Concurrent-streams history. Every node samples the streams it serves at instants aligned to the wall
// clock (every few seconds) and keeps, per project and kind, a running aggregate of the current minute
// (min/max/sum/count, idle instants of the minute counted as zeros) that it writes to the database after each
// sample. Reads add the nodes up per minute and roll minutes up to hours and hours up to days.
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../../lib/clock.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { ConcurrencyLimits } from './concurrency.js';
import type { LimitsRepository, MinuteSamples, SampleRow, StreamKind } from './repository.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export const historyPeriods = [60, 3600, 86400] as const;
export type HistoryPeriod = (typeof historyPeriods)[number];
/** The SDK documents both caps: 7 days of minutes, and 20 000 entries for any period. */
export const MAX_MINUTE_WINDOW_MS = 7 * DAY_MS;
export const MAX_HISTORY_ENTRIES = 20_000;

export interface HistoryEntry {
  period_start: string;
  period_sec: number;
  sample_min: number;
  sample_max: number;
  sample_sum: number;
  sample_count: number;
  total_count: number;
}

interface Accumulator {
  organizationId: string;
  projectId: string;
  kind: StreamKind;
  min: number;
  max: number;
  sum: number;
  count: number;
}

export class StreamSampler {
  private readonly clock: Clock;
  private minute = -1;
  private ticksInMinute = 0;
  private readonly acc = new Map<string, Accumulator>();
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly limits: ConcurrencyLimits,
    private readonly repo: LimitsRepository,
    private readonly opts: { intervalMs: number; nodeId: string; log?: Logger; clock?: Clock },
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  /** Sample at every multiple of the interval (all nodes share the instants); returns a stop function. */
  start(): () => void {
    let stopped = false;
    const schedule = () => {
      if (stopped) return;
      const now = this.clock.now().getTime();
      const wait = this.opts.intervalMs - (now % this.opts.intervalMs);
      this.timer = setTimeout(() => {
        this.running = this.tick().catch((err: unknown) => this.opts.log?.warn({ err }, 'concurrent-stream sampling failed'));
        void this.running.then(schedule);
      }, wait);
      this.timer.unref();
    };
    schedule();
    return () => {
      stopped = true;
      if (this.timer) clearTimeout(this.timer);
    };
  }

  /** Take one sample of every project this node served during the minute, and write the minute's rows. */
  async tick(): Promise<void> {
    const now = this.clock.now().getTime();
    const minute = now - (now % MINUTE_MS);
    if (minute !== this.minute) {
      // The previous minute's rows were written at its last sample.
      this.minute = minute;
      this.ticksInMinute = 0;
      this.acc.clear();
    }
    const values = new Map<string, number>();
    for (const s of this.limits.takeSamples()) {
      const key = `${s.kind}:${s.projectId}`;
      values.set(key, s.value);
      if (!this.acc.has(key))
        // Instants of this minute before the project's first stream here were idle: zeros.
        this.acc.set(key, {
          organizationId: s.organizationId,
          projectId: s.projectId,
          kind: s.kind,
          min: this.ticksInMinute ? 0 : Infinity,
          max: 0,
          sum: 0,
          count: this.ticksInMinute,
        });
    }
    this.ticksInMinute++;
    if (!this.acc.size) return;
    const minuteStart = new Date(minute).toISOString();
    const rows: SampleRow[] = [];
    for (const [key, a] of this.acc) {
      const v = values.get(key) ?? 0;
      a.min = Math.min(a.min, v);
      a.max = Math.max(a.max, v);
      a.sum += v;
      a.count++;
      rows.push({
        project_id: a.projectId,
        organization_id: a.organizationId,
        kind: a.kind,
        minute_start: minuteStart,
        node_id: this.opts.nodeId,
        sample_min: a.min,
        sample_max: a.max,
        sample_sum: a.sum,
        sample_count: a.count,
      });
    }
    await this.repo.upsertSamples(rows);
  }

  /** Wait for a sample in progress (shutdown). */
  async settled(): Promise<void> {
    await this.running;
  }
}

export interface HistoryQuery {
  start_time: string;
  end_time: string;
  period_sec: number;
  kind: StreamKind;
}

/** ISO-8601 date-time with a zone (Z or an offset); seconds and fractions optional. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export function parseInstant(field: string, value: string): number {
  const ms = ISO_DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw invalidField(field, 'must be an ISO 8601 date-time with a time zone, e.g. 2026-04-28T09:00:00Z', 'invalid_datetime');
  return ms;
}

/** `2026-04-28T09:00:00Z`: the SDK's documented form, without milliseconds. */
const formatInstant = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

export class StreamHistory {
  constructor(private readonly repo: LimitsRepository) {}

  /** Every period whose start lies in [start_time, end_time), ascending, zeros where idle. */
  async history(projectId: string, q: HistoryQuery): Promise<{ kind: StreamKind; entries: HistoryEntry[] }> {
    const start = parseInstant('start_time', q.start_time);
    const end = parseInstant('end_time', q.end_time);
    if (!(historyPeriods as readonly number[]).includes(q.period_sec))
      throw invalidField('period_sec', `must be one of ${historyPeriods.join(', ')}`, 'invalid_value');
    if (end <= start) throw new ApiError('invalid_request', 'Invalid request: end_time must be strictly after start_time.');
    const periodMs = q.period_sec * 1000;
    if (q.period_sec === 60 && end - start > MAX_MINUTE_WINDOW_MS)
      throw new ApiError('invalid_request', 'Invalid request: with period_sec=60 the window from start_time to end_time may span at most 7 days.');
    const first = Math.ceil(start / periodMs) * periodMs;
    const count = first < end ? Math.ceil((end - first) / periodMs) : 0;
    if (count > MAX_HISTORY_ENTRIES)
      throw new ApiError(
        'invalid_request',
        `Invalid request: the window holds ${count} periods; at most ${MAX_HISTORY_ENTRIES} entries are returned per request.`,
      );
    if (!count) return { kind: q.kind, entries: [] };
    const stop = first + count * periodMs;
    const minutes = await this.repo.minutes(projectId, q.kind, new Date(first).toISOString(), new Date(stop).toISOString());
    const entries =
      q.period_sec === 60 ? perMinute(minutes) : rollUp(q.period_sec === 3600 ? perMinute(minutes) : hours(minutes), periodMs, q.period_sec === 3600 ? 60 : 24);
    const byStart = new Map(entries.map((e) => [Date.parse(e.period_start), e]));
    const out: HistoryEntry[] = [];
    for (let i = 0; i < count; i++) {
      const t = first + i * periodMs;
      const e = byStart.get(t);
      out.push(
        e
          ? { ...e, period_start: formatInstant(t), period_sec: q.period_sec }
          : { period_start: formatInstant(t), period_sec: q.period_sec, sample_min: 0, sample_max: 0, sample_sum: 0, sample_count: 0, total_count: 0 },
      );
    }
    return { kind: q.kind, entries: out };
  }
}

/**
 * Minute entries. sample_min is 0 at every tier, as the SDK documents: a minute's samples include the idle
 * instants before the first and after the last stream.
 */
function perMinute(minutes: MinuteSamples[]): HistoryEntry[] {
  return minutes.map((m) => ({
    period_start: m.minute_start,
    period_sec: 60,
    sample_min: 0,
    sample_max: m.sample_max,
    sample_sum: m.sample_sum,
    sample_count: m.sample_count,
    total_count: 1,
  }));
}

/** Hour entries built from minutes: each minute contributes its peak. */
function hours(minutes: MinuteSamples[]): HistoryEntry[] {
  return rollUp(perMinute(minutes), HOUR_MS, 60);
}

/**
 * Roll source periods up: the peak stays exact, the sum adds the source peaks, sample_count is the number of
 * source periods with data and total_count the number of slots the period covers (60 minutes, 24 hours).
 */
function rollUp(source: HistoryEntry[], periodMs: number, slots: number): HistoryEntry[] {
  const out = new Map<number, HistoryEntry>();
  for (const s of source) {
    const t = Date.parse(s.period_start);
    const start = t - (t % periodMs);
    let e = out.get(start);
    if (!e) {
      e = {
        period_start: new Date(start).toISOString(),
        period_sec: periodMs / 1000,
        sample_min: 0,
        sample_max: 0,
        sample_sum: 0,
        sample_count: 0,
        total_count: slots,
      };
      out.set(start, e);
    }
    e.sample_max = Math.max(e.sample_max, s.sample_max);
    e.sample_sum += s.sample_max;
    e.sample_count++;
  }
  return [...out.values()];
}
