// Usage metering and reporting. `meter` prices one finished request or session and stores it (drawing
// from the balance); the read side answers monthly usage, balance, usage logs and the daily summary.
// No Fastify or ws types here.
import { type CursorCodec, stringPairAfter } from '../../lib/cursor.js';
import { type Clock, systemClock, utcMonth } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import { drawFromBalance } from './balance.js';
import type { TenancyRepository } from '../tenancy/repository.js';
import { costNano, Decimal, NANO_PER_USD, nanoToUsd } from './money.js';
import type { PriceTable } from './prices.js';
import type { Balance, MonthlyUsage, SummaryEntry, UsageLog, UsageSummary } from './schemas.js';
import { type DaySummaryRow, type UsageRecordRow, type UsageRepository } from './repository.js';

export type UsageKind = 'stt_async' | 'stt_rt' | 'tts' | 'speaker_enrolment';

/** Who made the request: an AuthContext fits. */
export interface UsageActor {
  organizationId: string;
  projectId: string;
  apiKeyId: string | null;
  source: string;
}

export interface MeterInput {
  /** Record id; a job that may re-run passes a stable one (its transcription id) so usage is stored once. */
  id?: string;
  kind: UsageKind;
  actor: UsageActor;
  requestId: string;
  clientReferenceId: string | null;
  /** The catalog model that served the request (aliases resolved): prices are per model. */
  model: string;
  startTime: Date | string;
  endTime?: Date;
  inputAudioMs?: number;
  inputCharacters?: number;
  outputAudioMs?: number;
  outputTextTokens?: number;
}

export interface Quantities {
  inputAudioMs?: number;
  inputCharacters?: number;
  outputAudioMs?: number;
}

/**
 * Audio tokens are not counted by our engines; they are derived from duration at 20 per second (one per
 * started 50 ms), the rate of the SDK documentation's example (60 000 ms → 1 200 tokens). Text input
 * tokens of TTS are characters, the unit TTS is priced in.
 */
export const AUDIO_MS_PER_TOKEN = 50;
const audioTokens = (ms: number) => Math.ceil(ms / AUDIO_MS_PER_TOKEN);

/** What the billable modules call: price and store a finished request, or price what a running one accrued. */
export type UsageMeter = Pick<UsageService, 'meter' | 'estimateNano'>;

export type EventLog = (detail: Record<string, unknown>, msg: string) => void;

export interface UsageServiceOptions {
  clock?: Clock;
  /** Structured events (budget notifications). */
  event?: EventLog;
}

const LIST_LIMIT_MAX = 1000;
const SUMMARY_MAX_DAYS = 366;
const DAY_MS = 86_400_000;
const usdOf = (nano: number) => nanoToUsd(nano);

/** An ISO-8601 timestamp with a date, as the SDK sends it; normalised to our stored form. */
function parseTime(name: string, value: unknown): string {
  if (value === undefined || value === null || value === '') throw invalidField(name, 'is required', 'missing');
  if (typeof value !== 'string' || value.length > 64 || !/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value))
    throw invalidField(name, 'must be an ISO-8601 date-time such as 2026-04-28T09:00:00Z');
  const ms = Date.parse(/[T ]\d{2}:\d{2}/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? `${value}Z` : value);
  if (!Number.isFinite(ms)) throw invalidField(name, 'is not a valid date-time');
  return new Date(ms).toISOString();
}

function parseWindow(q: Record<string, unknown>): { start: string; end: string } {
  const start = parseTime('start_time', q.start_time);
  const end = parseTime('end_time', q.end_time);
  if (end <= start) throw invalidField('end_time', 'must be strictly after start_time', 'invalid_value');
  return { start, end };
}

export class UsageService {
  private readonly clock: Clock;

  constructor(
    private readonly repo: UsageRepository,
    readonly prices: PriceTable,
    private readonly tenancy: TenancyRepository,
    private readonly cursors: CursorCodec,
    private readonly opts: UsageServiceOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  /** Cost in nano-USD of these quantities at the model's current prices (no rounding beyond the nano-dollar per part). */
  async estimateNano(model: string, q: Quantities): Promise<number> {
    const p = await this.prices.pricesOf(model);
    return (
      costNano(new Decimal(q.inputAudioMs ?? 0).div(1000), p.input_audio_second) +
      costNano(q.inputCharacters ?? 0, p.input_character) +
      costNano(new Decimal(q.outputAudioMs ?? 0).div(1000), p.output_audio_second)
    );
  }

  /** Price and store one finished request or session. */
  async meter(input: MeterInput): Promise<UsageRecordRow> {
    const p = await this.prices.pricesOf(input.model);
    const inAudioMs = Math.max(0, Math.round(input.inputAudioMs ?? 0));
    const chars = Math.max(0, Math.round(input.inputCharacters ?? 0));
    const outAudioMs = Math.max(0, Math.round(input.outputAudioMs ?? 0));
    const inputAudioCost = costNano(new Decimal(inAudioMs).div(1000), p.input_audio_second);
    const inputTextCost = costNano(chars, p.input_character);
    const outputAudioCost = costNano(new Decimal(outAudioMs).div(1000), p.output_audio_second);
    const end = input.endTime ?? this.clock.now();
    const start = typeof input.startTime === 'string' ? new Date(input.startTime) : input.startTime;
    const startIso = (start.getTime() > end.getTime() ? end : start).toISOString();
    const endIso = end.toISOString();
    const row = await this.repo.insertRecord(
      {
        id: input.id ?? newId(),
        organization_id: input.actor.organizationId,
        project_id: input.actor.projectId,
        api_key_id: input.actor.apiKeyId,
        source: input.actor.source,
        kind: input.kind,
        request_id: input.requestId,
        client_reference_id: input.clientReferenceId,
        model: input.model,
        start_time: startIso,
        end_time: endIso,
        duration_ms: Math.max(0, end.getTime() - Date.parse(startIso)),
        input_text_tokens: chars,
        input_audio_tokens: audioTokens(inAudioMs),
        input_audio_duration_ms: inAudioMs,
        output_text_tokens: Math.max(0, input.outputTextTokens ?? 0),
        output_audio_tokens: audioTokens(outAudioMs),
        output_audio_duration_ms: outAudioMs,
        input_text_cost_nusd: inputTextCost,
        input_audio_cost_nusd: inputAudioCost,
        output_text_cost_nusd: 0,
        output_audio_cost_nusd: outputAudioCost,
        cost_nusd: inputTextCost + inputAudioCost + outputAudioCost,
      },
      (org) => drawFromBalance(org, inputTextCost + inputAudioCost + outputAudioCost),
    );
    await this.notifyBudgets(input.actor.organizationId, input.actor.projectId, utcMonth(end));
    return row;
  }

  /** Log one event per organization / project and month when its usage reaches the notification threshold. */
  private async notifyBudgets(organizationId: string, projectId: string, month: string): Promise<void> {
    const org = await this.tenancy.getOrganization(organizationId);
    const project = await this.tenancy.getProject(projectId);
    const orgThreshold = org?.monthly_budget_notification_usd ?? null;
    const projectThreshold = project?.monthly_budget_notification_usd ?? null;
    if (orgThreshold === null && projectThreshold === null) return;
    const rows = await this.repo.monthly(organizationId, month);
    const orgUsed = rows.reduce((n, r) => n + r.cost_nusd, 0);
    const projectUsed = rows.filter((r) => r.project_id === projectId).reduce((n, r) => n + r.cost_nusd, 0);
    const at = this.clock.now().toISOString();
    const check = async (scope: 'organization' | 'project', id: string, threshold: string | null, used: number, budget: string | null) => {
      if (threshold === null || !/^\d+(\.\d+)?$/.test(threshold)) return;
      if (new Decimal(threshold).mul(NANO_PER_USD).gt(used)) return;
      if (!(await this.repo.markNotified(scope, id, month, at))) return;
      this.opts.event?.(
        {
          event: 'budget_notification',
          scope,
          organization_id: organizationId,
          ...(scope === 'project' ? { project_id: id } : {}),
          month,
          usage_usd: usdOf(used),
          monthly_budget_notification_usd: threshold,
          monthly_budget_usd: budget,
        },
        `${scope} usage reached its monthly budget notification threshold`,
      );
    };
    await check('organization', organizationId, orgThreshold, orgUsed, org?.monthly_budget_usd ?? null);
    await check('project', projectId, projectThreshold, projectUsed, project?.monthly_budget_usd ?? null);
  }

  /** GET /v1/organization/usage/monthly */
  async monthlyUsage(organizationId: string, monthParam: unknown): Promise<MonthlyUsage> {
    const current = utcMonth(this.clock.now());
    let month = current;
    if (monthParam !== undefined && monthParam !== '') {
      if (typeof monthParam !== 'string' || !/^\d{4}-(0[1-9]|1[0-2])$/.test(monthParam)) throw invalidField('month', 'must be a month as YYYY-MM');
      month = monthParam;
    }
    const org = await this.tenancy.getOrganization(organizationId);
    if (!org) throw new ApiError('unauthenticated', 'Organization no longer exists.');
    const rows = await this.repo.monthly(organizationId, month);
    // Deleted projects stay listed so per-project costs add up to the total.
    const projects = await this.tenancy.listProjectsWithDeleted(organizationId);
    const isCurrent = month === current;
    const zero = () => ({ cost: 0, free: 0, invoiced: 0, api: 0, playground: 0 });
    const total = zero();
    const perProject = new Map<string, ReturnType<typeof zero>>();
    for (const r of rows) {
      const t = perProject.get(r.project_id) ?? zero();
      for (const acc of [t, total]) {
        acc.cost += r.cost_nusd;
        acc.free += r.free_nusd;
        acc.invoiced += r.invoiced_nusd;
        if (r.source === 'playground') acc.playground += r.cost_nusd;
        else acc.api += r.cost_nusd;
      }
      perProject.set(r.project_id, t);
    }
    const list = projects
      .filter((p) => !p.deleted_at || perProject.has(p.id))
      .map((p) => ({ p, u: perProject.get(p.id) ?? zero() }))
      .sort((a, b) => b.u.cost - a.u.cost || a.p.created_at.localeCompare(b.p.created_at) || a.p.id.localeCompare(b.p.id));
    const budget = org.monthly_budget_usd;
    const budgetNano = budget !== null ? new Decimal(budget).mul(NANO_PER_USD) : null;
    return {
      month,
      usage_usd: usdOf(total.cost),
      free_usage_usd: usdOf(total.free),
      invoiced_usage_usd: usdOf(total.invoiced),
      api_usage_usd: usdOf(total.api),
      playground_usage_usd: usdOf(total.playground),
      monthly_budget_usd: isCurrent ? budget : null,
      monthly_budget_notification_usd: isCurrent ? org.monthly_budget_notification_usd : null,
      remaining_budget_usd: isCurrent && budgetNano ? nanoToUsd(Decimal.max(0, budgetNano.minus(total.cost))) : null,
      budget_exhausted: isCurrent ? (budgetNano ? budgetNano.lte(total.cost) : false) : null,
      projects: list.map(({ p, u }) => ({
        id: p.id,
        name: p.name,
        usage_usd: usdOf(u.cost),
        free_usage_usd: usdOf(u.free),
        invoiced_usage_usd: usdOf(u.invoiced),
        api_usage_usd: usdOf(u.api),
        playground_usage_usd: usdOf(u.playground),
        monthly_budget_usd: isCurrent ? p.monthly_budget_usd : null,
      })),
    };
  }

  /** GET /v1/organization/balance */
  async balance(organizationId: string): Promise<Balance> {
    const org = await this.tenancy.getOrganization(organizationId);
    if (!org) throw new ApiError('unauthenticated', 'Organization no longer exists.');
    const invoiced = org.invoice_billing_enabled === 1;
    const norm = (v: string) => new Decimal(/^\d+(\.\d+)?$/.test(v) ? v : '0').toFixed();
    return {
      available_balance_usd: norm(org.available_balance_usd),
      free_balance_usd: norm(org.free_balance_usd),
      used_balance_usd: norm(org.used_balance_usd),
      invoice_billing_enabled: invoiced,
      balance_exhausted: !invoiced && new Decimal(norm(org.available_balance_usd)).lte(0),
      autopay_enabled: org.autopay_enabled === 1,
      autopay_threshold_usd: org.autopay_threshold_usd,
      autopay_amount_usd: org.autopay_amount_usd,
      has_payment_method: org.has_payment_method === 1,
      has_payment_error: org.has_payment_error === 1,
    };
  }

  /** GET /v1/usage-logs: the key's project, filtered on end time in [start_time, end_time). */
  async logs(projectId: string, q: Record<string, unknown>): Promise<{ usage_logs: UsageLog[]; next_page_cursor: string | null }> {
    const { start, end } = parseWindow(q);
    let limit = LIST_LIMIT_MAX;
    if (q.limit !== undefined && q.limit !== '') {
      const raw = String(q.limit);
      if (!/^\d+$/.test(raw)) throw invalidField('limit', `must be an integer from 1 to ${LIST_LIMIT_MAX}`, 'invalid_type');
      limit = Number(raw);
      if (limit < 1 || limit > LIST_LIMIT_MAX) throw invalidField('limit', `must be from 1 to ${LIST_LIMIT_MAX}`, 'out_of_range');
    }
    const sort = q.sort === undefined || q.sort === '' ? 'end_time_asc' : q.sort;
    if (sort !== 'end_time_asc' && sort !== 'end_time_desc') throw invalidField('sort', 'must be end_time_asc or end_time_desc');
    const desc = sort === 'end_time_desc';
    const list = `usage-logs:${projectId}:${sort}`;
    const after = stringPairAfter(this.cursors, q.cursor, list);
    const rows = await this.repo.listRecords(projectId, { start, end, desc, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      usage_logs: page.map(toUsageLog),
      next_page_cursor: rows.length > limit && last ? this.cursors.encode({ list, key: [last.end_time, last.id] }) : null,
    };
  }

  /** GET /v1/usage/summary: per UTC day of [start_time, end_time), every day present, per model. */
  async summary(projectId: string, q: Record<string, unknown>): Promise<UsageSummary> {
    const { start, end } = parseWindow(q);
    const first = Date.parse(`${start.slice(0, 10)}T00:00:00.000Z`);
    const days: string[] = [];
    for (let t = first; t < Date.parse(end); t += DAY_MS) {
      if (days.length >= SUMMARY_MAX_DAYS) throw invalidField('end_time', `the window covers more than ${SUMMARY_MAX_DAYS} days`, 'out_of_range');
      days.push(new Date(t).toISOString().slice(0, 10));
    }
    const rows = await this.repo.summary(projectId, start, end);
    const models = [...new Set(rows.map((r) => r.model))].sort();
    return {
      total: summarize(null, days, rows),
      models: models.map((m) =>
        summarize(
          m,
          days,
          rows.filter((r) => r.model === m),
        ),
      ),
    };
  }
}

function toUsageLog(r: UsageRecordRow): UsageLog {
  return {
    uuid: r.id,
    request_id: r.request_id,
    request_scope: r.source,
    client_reference_id: r.client_reference_id,
    model: r.model,
    start_time: r.start_time,
    end_time: r.end_time,
    input_text_tokens: r.input_text_tokens,
    input_audio_tokens: r.input_audio_tokens,
    input_audio_duration_ms: r.input_audio_duration_ms,
    output_text_tokens: r.output_text_tokens,
    output_audio_tokens: r.output_audio_tokens,
    output_audio_duration_ms: r.output_audio_duration_ms,
    cost_usd: usdOf(r.cost_nusd),
    input_cost_usd: usdOf(r.input_text_cost_nusd + r.input_audio_cost_nusd),
    input_text_cost_usd: usdOf(r.input_text_cost_nusd),
    input_audio_cost_usd: usdOf(r.input_audio_cost_nusd),
    output_cost_usd: usdOf(r.output_text_cost_nusd + r.output_audio_cost_nusd),
    output_text_cost_usd: usdOf(r.output_text_cost_nusd),
    output_audio_cost_usd: usdOf(r.output_audio_cost_nusd),
  };
}

const COUNTS = [
  'num_requests',
  'input_text_tokens',
  'input_audio_tokens',
  'input_audio_duration_ms',
  'output_text_tokens',
  'output_audio_tokens',
  'output_audio_duration_ms',
  'duration_ms',
] as const;

/**
 * One summary entry over `days`. Nothing is priced by wall-clock duration, so the duration costs are 0;
 * duration_ms is the wall time of the requests and sessions.
 */
function summarize(model: string | null, days: string[], rows: DaySummaryRow[]): SummaryEntry {
  const index = new Map(days.map((d, i) => [d, i]));
  const zeros = () => days.map(() => 0);
  const money = { cost: zeros(), input: zeros(), output: zeros() };
  const counts = Object.fromEntries(COUNTS.map((k) => [k, zeros()])) as Record<(typeof COUNTS)[number], number[]>;
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    money.cost[i]! += r.cost_nusd;
    money.input[i]! += r.input_cost_nusd;
    money.output[i]! += r.output_cost_nusd;
    for (const k of COUNTS) counts[k][i]! += r[k];
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    model,
    days,
    total_cost_usd: usdOf(sum(money.cost)),
    total_input_cost_usd: usdOf(sum(money.input)),
    total_output_cost_usd: usdOf(sum(money.output)),
    total_duration_cost_usd: '0',
    cost_usd: money.cost.map(usdOf),
    input_cost_usd: money.input.map(usdOf),
    output_cost_usd: money.output.map(usdOf),
    duration_cost_usd: days.map(() => '0'),
    total_num_requests: sum(counts.num_requests),
    total_input_text_tokens: sum(counts.input_text_tokens),
    total_input_audio_tokens: sum(counts.input_audio_tokens),
    total_input_audio_duration_ms: sum(counts.input_audio_duration_ms),
    total_output_text_tokens: sum(counts.output_text_tokens),
    total_output_audio_tokens: sum(counts.output_audio_tokens),
    total_output_audio_duration_ms: sum(counts.output_audio_duration_ms),
    total_duration_ms: sum(counts.duration_ms),
    ...counts,
  };
}
