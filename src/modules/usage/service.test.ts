// UsageService and BudgetGuard against a real SQLite database with an injected clock: pricing, month
// boundaries (budgets reset on the 1st, UTC), budget notifications, monthly usage sums, query validation.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/harness.js';
import { CursorCodec } from '../../lib/cursor.js';
import { openDatabase, type Db } from '../../storage/database.js';
import { ApiError } from '../../wire/api-error.js';
import { BudgetGuard } from '../billing/guard.js';
import { TenancyRepository } from '../tenancy/repository.js';
import { PriceTable } from './prices.js';
import { UsageRepository } from './repository.js';
import { type MeterInput, UsageService } from './service.js';

let db: Db;
let dir: string;
let now: Date;
const clock = { now: () => now };
let events: Record<string, unknown>[];
let usage: UsageService;
let guard: BudgetGuard;
let repo: UsageRepository;
let tenancy: TenancyRepository;

beforeAll(async () => {
  dir = tempDir('parlance-usage-svc-');
  db = await openDatabase({ dataDir: dir });
  repo = new UsageRepository(db.kysely, db.dialect);
  tenancy = new TenancyRepository(db.kysely);
  const prices = new PriceTable(
    ['rt:input_audio_second=0.00005', 'tts:input_character=0.00001', 'tts:output_audio_second=0.00002', '*:input_audio_second=0.001'],
    repo,
    0,
  );
  usage = new UsageService(repo, prices, tenancy, new CursorCodec(Buffer.alloc(32, 7)), { clock, event: (d) => events.push(d) });
  guard = new BudgetGuard(tenancy, repo, clock);
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  events = [];
  now = new Date('2026-01-15T12:00:00.000Z');
});

async function tenant(
  org: Partial<{
    available_balance_usd: string;
    free_balance_usd: string;
    invoice_billing_enabled: 0 | 1;
    monthly_budget_usd: string;
    monthly_budget_notification_usd: string;
  }> = {},
) {
  const id = randomUUID();
  const project = randomUUID();
  const other = randomUUID();
  await db.kysely
    .insertInto('organizations')
    .values({ id, name: 'o', created_at: '2026-01-01T00:00:00.000Z', ...org })
    .execute();
  await db.kysely
    .insertInto('projects')
    .values({ id: project, organization_id: id, name: 'first', description: '', region: 'local', created_at: '2026-01-01T00:00:00.000Z' })
    .execute();
  await db.kysely
    .insertInto('projects')
    .values({ id: other, organization_id: id, name: 'second', description: '', region: 'local', created_at: '2026-01-02T00:00:00.000Z' })
    .execute();
  return { org: id, project, other };
}

const meter = (t: { org: string; project: string }, over: Partial<MeterInput> = {}) =>
  usage.meter({
    kind: 'stt_rt',
    actor: { organizationId: t.org, projectId: t.project, apiKeyId: null, source: 'public_api' },
    requestId: 'req_1',
    clientReferenceId: null,
    model: 'rt',
    startTime: new Date(now.getTime() - 1000),
    inputAudioMs: 1000,
    ...over,
  });

async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (err instanceof ApiError && err.status === 402) return err.type;
    throw err;
  }
}

describe('metering', () => {
  it('prices each unit exactly and derives audio tokens from duration', async () => {
    const t = await tenant();
    const rt = await meter(t, { inputAudioMs: 1234 });
    expect(rt).toMatchObject({
      input_audio_cost_nusd: 61_700,
      cost_nusd: 61_700,
      input_audio_tokens: 25,
      input_audio_duration_ms: 1234,
      end_time: now.toISOString(),
    });
    const tts = await meter(t, { kind: 'tts', model: 'tts', inputAudioMs: 0, inputCharacters: 33, outputAudioMs: 2501 });
    // 33 × 0.00001 + 2.501 × 0.00002 = 0.00033 + 0.00005002
    expect(tts).toMatchObject({
      input_text_cost_nusd: 330_000,
      output_audio_cost_nusd: 50_020,
      cost_nusd: 380_020,
      input_text_tokens: 33,
      output_audio_tokens: 51,
    });
    // A model without its own price uses the '*' entry; a unit without any price is free.
    expect(await meter(t, { model: 'unknown', inputAudioMs: 500, outputAudioMs: 1000 })).toMatchObject({
      input_audio_cost_nusd: 500_000,
      output_audio_cost_nusd: 0,
    });
    expect(await usage.estimateNano('rt', { inputAudioMs: 60_000 })).toBe(3_000_000);
  });

  it('admin price overrides win over the settings table', async () => {
    await repo.setPrice('rt', 'input_audio_second', '0.1', now.toISOString());
    try {
      expect(await usage.estimateNano('rt', { inputAudioMs: 1000 })).toBe(100_000_000);
    } finally {
      await repo.deletePrice('rt', 'input_audio_second');
    }
    expect(await usage.estimateNano('rt', { inputAudioMs: 1000 })).toBe(50_000);
  });
});

describe('budgets and balance', () => {
  it('refuses in order: balance, organization budget, project budget', async () => {
    const t = await tenant({ invoice_billing_enabled: 0, available_balance_usd: '0' });
    expect(await refusal(guard.assertCanStart(t.org, t.project))).toBe('organization_balance_exhausted');
    await tenancy.updateOrganization(t.org, { available_balance_usd: '1', monthly_budget_usd: '0.0001' });
    await tenancy.updateProject(t.project, { monthly_budget_usd: '0.00005' });
    expect(await refusal(guard.assertCanStart(t.org, t.project))).toBeUndefined();
    await meter(t, { inputAudioMs: 1000 }); // 0.00005: the project budget is reached, not the organization's
    expect(await refusal(guard.assertCanStart(t.org, t.project))).toBe('project_monthly_budget_exhausted');
    expect(await refusal(guard.assertCanStart(t.org, t.other))).toBeUndefined();
    await meter({ org: t.org, project: t.other }, { inputAudioMs: 1000 });
    expect(await refusal(guard.assertCanStart(t.org, t.other))).toBe('organization_monthly_budget_exhausted');
  });

  it('counts what a running session accrued (pending) against balance and budgets', async () => {
    const t = await tenant({ invoice_billing_enabled: 0, available_balance_usd: '0.001' });
    expect(await refusal(guard.assertCanStart(t.org, t.project, 999_999))).toBeUndefined();
    expect(await refusal(guard.assertCanStart(t.org, t.project, 1_000_000))).toBe('organization_balance_exhausted');
    await tenancy.updateOrganization(t.org, { invoice_billing_enabled: 1, monthly_budget_usd: '0.002' });
    expect(await refusal(guard.assertCanStart(t.org, t.project, 1_999_999))).toBeUndefined();
    expect(await refusal(guard.assertCanStart(t.org, t.project, 2_000_000))).toBe('organization_monthly_budget_exhausted');
  });

  it('budgets reset at the calendar month (UTC)', async () => {
    const t = await tenant({ monthly_budget_usd: '0.00005' });
    now = new Date('2026-01-31T23:59:59.999Z');
    await meter(t);
    expect(await refusal(guard.assertCanStart(t.org, t.project))).toBe('organization_monthly_budget_exhausted');
    now = new Date('2026-02-01T00:00:00.000Z');
    expect(await refusal(guard.assertCanStart(t.org, t.project))).toBeUndefined();
    const feb = await usage.monthlyUsage(t.org, undefined);
    expect(feb).toMatchObject({ month: '2026-02', usage_usd: '0', monthly_budget_usd: '0.00005', remaining_budget_usd: '0.00005', budget_exhausted: false });
    // Past months carry no budget fields.
    const jan = await usage.monthlyUsage(t.org, '2026-01');
    expect(jan).toMatchObject({
      month: '2026-01',
      usage_usd: '0.00005',
      monthly_budget_usd: null,
      monthly_budget_notification_usd: null,
      remaining_budget_usd: null,
      budget_exhausted: null,
    });
  });

  it('logs one budget notification per organization / project and month', async () => {
    const t = await tenant({ monthly_budget_notification_usd: '0.0001', monthly_budget_usd: '1' });
    await tenancy.updateProject(t.project, { monthly_budget_notification_usd: '0.00005' });
    await meter(t);
    expect(events).toEqual([
      expect.objectContaining({ event: 'budget_notification', scope: 'project', project_id: t.project, month: '2026-01', usage_usd: '0.00005' }),
    ]);
    await meter(t);
    await meter(t);
    expect(events.map((e) => e.scope)).toEqual(['project', 'organization']);
    expect(events[1]).toMatchObject({ organization_id: t.org, usage_usd: '0.0001', monthly_budget_notification_usd: '0.0001', monthly_budget_usd: '1' });
    now = new Date('2026-02-01T00:00:01.000Z');
    await meter(t, { inputAudioMs: 2000 });
    expect(events.map((e) => `${e.scope}:${e.month}`)).toEqual(['project:2026-01', 'organization:2026-01', 'organization:2026-02', 'project:2026-02']);
  });
});

describe('monthly usage', () => {
  it('adds up exactly, sorts projects by cost and keeps deleted projects', async () => {
    const t = await tenant({ invoice_billing_enabled: 0, available_balance_usd: '0.001', free_balance_usd: '0.0002', monthly_budget_usd: '0.0003' });
    // 0.1 + 0.2 style amounts that binary floating point gets wrong.
    for (let i = 0; i < 7; i++) await meter(t, { inputAudioMs: 333 }); // 0.00001665 each
    for (let i = 0; i < 3; i++)
      await meter(
        { org: t.org, project: t.other },
        { inputAudioMs: 1001, actor: { organizationId: t.org, projectId: t.other, apiKeyId: null, source: 'playground' } },
      );
    await tenancy.updateProject(t.other, { deleted_at: now.toISOString() });
    const m = await usage.monthlyUsage(t.org, '2026-01');
    expect(m.usage_usd).toBe('0.0002667');
    expect(m.projects.map((p) => [p.name, p.usage_usd, p.api_usage_usd, p.playground_usage_usd])).toEqual([
      ['second', '0.00015015', '0', '0.00015015'],
      ['first', '0.00011655', '0.00011655', '0'],
    ]);
    expect(m).toMatchObject({ api_usage_usd: '0.00011655', playground_usage_usd: '0.00015015', free_usage_usd: '0.0002', invoiced_usage_usd: '0' });
    expect(m).toMatchObject({ remaining_budget_usd: '0.0000333', budget_exhausted: false });
    const bal = await usage.balance(t.org);
    expect(bal).toMatchObject({
      available_balance_usd: '0.0007333',
      free_balance_usd: '0',
      used_balance_usd: '0.0002667',
      balance_exhausted: false,
      invoice_billing_enabled: false,
    });
  });

  it('rejects a malformed month', async () => {
    const t = await tenant();
    for (const month of ['2026-13', '2026-1', 'x', '2026-00'])
      await expect(usage.monthlyUsage(t.org, month)).rejects.toMatchObject({
        type: 'invalid_request',
        validationErrors: [expect.objectContaining({ location: 'month' })],
      });
  });
});

describe('usage logs and summary queries', () => {
  const window = { start_time: '2026-01-01T00:00:00Z', end_time: '2026-02-01T00:00:00Z' };

  it('validates the window, limit, sort and cursor', async () => {
    const t = await tenant();
    const bad = async (q: Record<string, unknown>, location: string) =>
      expect(usage.logs(t.project, q)).rejects.toMatchObject({ type: 'invalid_request', validationErrors: [expect.objectContaining({ location })] });
    await bad({ end_time: window.end_time }, 'start_time');
    await bad({ start_time: window.start_time }, 'end_time');
    await bad({ start_time: window.start_time, end_time: window.start_time }, 'end_time');
    await bad({ start_time: '2026-01-02T00:00:00Z', end_time: '2026-01-01T23:59:59Z' }, 'end_time');
    await bad({ start_time: 'yesterday', end_time: window.end_time }, 'start_time');
    await bad({ ...window, limit: '0' }, 'limit');
    await bad({ ...window, limit: '1001' }, 'limit');
    await bad({ ...window, limit: 'ten' }, 'limit');
    await bad({ ...window, sort: 'newest' }, 'sort');
    expect((await usage.logs(t.project, { ...window, limit: '1000' })).next_page_cursor).toBeNull();
    expect((await usage.logs(t.project, { start_time: window.start_time, end_time: '2026-01-01T00:00:00.001Z' })).usage_logs).toEqual([]);
    await expect(usage.logs(t.project, { ...window, cursor: 'nope' })).rejects.toMatchObject({ type: 'invalid_cursor' });
  });

  it('pages with a signed cursor bound to the project and the sort', async () => {
    const t = await tenant();
    for (let i = 0; i < 5; i++) {
      now = new Date(Date.parse('2026-01-10T00:00:00Z') + i * 1000);
      await meter(t, { requestId: `req_${i}` });
    }
    const first = await usage.logs(t.project, { ...window, limit: '2', sort: 'end_time_desc' });
    expect(first.usage_logs.map((l) => l.request_id)).toEqual(['req_4', 'req_3']);
    const second = await usage.logs(t.project, { ...window, limit: '2', sort: 'end_time_desc', cursor: first.next_page_cursor });
    expect(second.usage_logs.map((l) => l.request_id)).toEqual(['req_2', 'req_1']);
    await expect(usage.logs(t.project, { ...window, limit: '2', cursor: first.next_page_cursor })).rejects.toMatchObject({ type: 'invalid_cursor' });
    await expect(usage.logs(t.other, { ...window, limit: '2', sort: 'end_time_desc', cursor: first.next_page_cursor })).rejects.toMatchObject({
      type: 'invalid_cursor',
    });
    expect(first.usage_logs[0]).toMatchObject({
      cost_usd: '0.00005',
      input_cost_usd: '0.00005',
      input_audio_cost_usd: '0.00005',
      output_cost_usd: '0',
      request_scope: 'public_api',
    });
  });

  it('summary: every UTC day of the window, at most 366', async () => {
    const t = await tenant();
    now = new Date('2026-01-05T10:00:00Z');
    await meter(t);
    const s = await usage.summary(t.project, { start_time: '2026-01-03T12:00:00Z', end_time: '2026-01-06T00:00:00Z' });
    expect(s.total.days).toEqual(['2026-01-03', '2026-01-04', '2026-01-05']);
    expect(s.total.cost_usd).toEqual(['0', '0', '0.00005']);
    expect(s.total).toMatchObject({ total_num_requests: 1, total_input_audio_duration_ms: 1000, total_duration_ms: 1000 });
    expect(s.models.map((m) => m.model)).toEqual(['rt']);
    const year = await usage.summary(t.project, { start_time: '2024-01-01T00:00:00Z', end_time: '2025-01-01T00:00:00Z' });
    expect(year.total.days).toHaveLength(366);
    expect(year.models).toEqual([]);
    await expect(usage.summary(t.project, { start_time: '2024-01-01T00:00:00Z', end_time: '2025-01-01T00:00:00.001Z' })).rejects.toMatchObject({
      type: 'invalid_request',
    });
  });
});
