// UsageRepository on both real engines: records, balance draws, monthly roll-ups, paging and the daily
// summary behave the same on SQLite and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES as engines, type OpenedDatabase as Opened } from '../../../test/databases.js';
import { drawFromBalance } from './balance.js';
import { type NewUsageRecord, UsageRepository } from './repository.js';

describe.each(engines)('UsageRepository (%s)', (_engine, open) => {
  let opened: Opened;
  let repo: UsageRepository;

  beforeAll(async () => {
    opened = await open();
    repo = new UsageRepository(opened.db.kysely, opened.db.dialect);
  });
  afterAll(async () => opened?.cleanup());

  async function tenant(balance: { available?: string; free?: string; invoice?: 0 | 1 } = {}): Promise<{ org: string; project: string; other: string }> {
    const org = randomUUID();
    const project = randomUUID();
    const other = randomUUID();
    const now = new Date().toISOString();
    await opened.db.kysely
      .insertInto('organizations')
      .values({
        id: org,
        name: 'org',
        created_at: now,
        available_balance_usd: balance.available ?? '0',
        free_balance_usd: balance.free ?? '0',
        invoice_billing_enabled: balance.invoice ?? 1,
      })
      .execute();
    for (const id of [project, other])
      await opened.db.kysely.insertInto('projects').values({ id, organization_id: org, name: id, description: '', region: 'local', created_at: now }).execute();
    return { org, project, other };
  }

  function record(t: { org: string; project: string }, over: Partial<NewUsageRecord> = {}): NewUsageRecord {
    return {
      id: randomUUID(),
      organization_id: t.org,
      project_id: t.project,
      api_key_id: null,
      source: 'public_api',
      kind: 'tts',
      request_id: `req_${randomUUID()}`,
      client_reference_id: null,
      model: 'm1',
      start_time: '2026-03-10T10:00:00.000Z',
      end_time: '2026-03-10T10:00:01.000Z',
      duration_ms: 1000,
      input_text_tokens: 10,
      input_audio_tokens: 0,
      input_audio_duration_ms: 0,
      output_text_tokens: 0,
      output_audio_tokens: 20,
      output_audio_duration_ms: 1000,
      input_text_cost_nusd: 100_000,
      input_audio_cost_nusd: 0,
      output_text_cost_nusd: 0,
      output_audio_cost_nusd: 20_000,
      cost_nusd: 120_000,
      ...over,
    };
  }
  const pay = (r: NewUsageRecord) => (org: Parameters<typeof drawFromBalance>[0]) => drawFromBalance(org, r.cost_nusd);

  it('draws from the balance, granted part first, and rolls the month up per project and source', async () => {
    const t = await tenant({ available: '0.0002', free: '0.00005', invoice: 0 });
    const a = record(t);
    const stored = await repo.insertRecord(a, pay(a));
    expect(stored).toMatchObject({ free_nusd: 50_000, invoiced_nusd: 0, cost_nusd: 120_000 });
    const org = await opened.db.kysely.selectFrom('organizations').selectAll().where('id', '=', t.org).executeTakeFirstOrThrow();
    expect(org).toMatchObject({ available_balance_usd: '0.00008', free_balance_usd: '0', used_balance_usd: '0.00012' });
    // The next one overshoots: only what is left is drawn, the balance stops at zero, usage counts in full.
    const b = record(t, { source: 'playground' });
    await repo.insertRecord(b, pay(b));
    const after = await opened.db.kysely.selectFrom('organizations').selectAll().where('id', '=', t.org).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ available_balance_usd: '0', used_balance_usd: '0.0002' });
    const monthly = (await repo.monthly(t.org, '2026-03')).sort((x, y) => x.source.localeCompare(y.source));
    expect(monthly).toEqual([
      { project_id: t.project, source: 'playground', cost_nusd: 120_000, free_nusd: 0, invoiced_nusd: 0 },
      { project_id: t.project, source: 'public_api', cost_nusd: 120_000, free_nusd: 50_000, invoiced_nusd: 0 },
    ]);
    expect(await repo.monthly(t.org, '2026-04')).toEqual([]);
  });

  it('invoices with invoice billing and leaves the balance alone', async () => {
    const t = await tenant({ available: '5', invoice: 1 });
    const a = record(t);
    expect(await repo.insertRecord(a, pay(a))).toMatchObject({ invoiced_nusd: 120_000, free_nusd: 0 });
    const org = await opened.db.kysely.selectFrom('organizations').selectAll().where('id', '=', t.org).executeTakeFirstOrThrow();
    expect(org.available_balance_usd).toBe('5');
  });

  it('stores a record id once: a re-run job does not draw or count twice', async () => {
    const t = await tenant({ available: '1', invoice: 0 });
    const a = record(t);
    await repo.insertRecord(a, pay(a));
    await repo.insertRecord(a, pay(a));
    const [m] = await repo.monthly(t.org, '2026-03');
    expect(m!.cost_nusd).toBe(120_000);
    const org = await opened.db.kysely.selectFrom('organizations').selectAll().where('id', '=', t.org).executeTakeFirstOrThrow();
    expect(org.available_balance_usd).toBe('0.99988');
  });

  it('concurrent records draw exactly: no lost update on the balance', async () => {
    const t = await tenant({ available: '1', invoice: 0 });
    const recs = Array.from({ length: 20 }, () => record(t));
    await Promise.all(recs.map((r) => repo.insertRecord(r, pay(r))));
    const org = await opened.db.kysely.selectFrom('organizations').selectAll().where('id', '=', t.org).executeTakeFirstOrThrow();
    expect(org.available_balance_usd).toBe('0.9976');
    expect(org.used_balance_usd).toBe('0.0024');
    expect((await repo.monthly(t.org, '2026-03'))[0]!.cost_nusd).toBe(20 * 120_000);
  });

  it('pages records by (end_time, id) in both directions within [start, end)', async () => {
    const t = await tenant();
    const ends = ['2026-05-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z', '2026-05-01T00:00:01.000Z', '2026-05-02T00:00:00.000Z', '2026-05-03T00:00:00.000Z'];
    for (const end of ends) {
      const r = record(t, { end_time: end, start_time: end });
      await repo.insertRecord(r, pay(r));
    }
    const window = { start: '2026-05-01T00:00:00.000Z', end: '2026-05-03T00:00:00.000Z' };
    const walk = async (desc: boolean) => {
      const seen: string[] = [];
      let after: [string, string] | undefined;
      for (;;) {
        const page = await repo.listRecords(t.project, { ...window, desc, after, limit: 2 });
        if (!page.length) return seen;
        seen.push(...page.map((r) => r.end_time));
        after = [page[page.length - 1]!.end_time, page[page.length - 1]!.id];
      }
    };
    const asc = await walk(false);
    expect(asc).toEqual(ends.slice(0, 4)); // the end bound is exclusive
    expect(await walk(true)).toEqual([...asc].reverse());
    expect(await repo.listRecords(t.other, { ...window, desc: false, limit: 10 })).toEqual([]);
  });

  it('summarises per UTC day of end time and model', async () => {
    const t = await tenant();
    for (const [end, model] of [
      ['2026-06-01T23:59:59.999Z', 'a'],
      ['2026-06-01T10:00:00.000Z', 'b'],
      ['2026-06-02T00:00:00.000Z', 'a'],
      ['2026-06-02T05:00:00.000Z', 'a'],
    ] as const) {
      const r = record(t, { end_time: end, model });
      await repo.insertRecord(r, pay(r));
    }
    const rows = await repo.summary(t.project, '2026-06-01T00:00:00.000Z', '2026-06-03T00:00:00.000Z');
    expect(rows.map((r) => [r.day, r.model, r.num_requests, r.cost_nusd, r.input_cost_nusd, r.output_cost_nusd, r.output_audio_duration_ms])).toEqual([
      ['2026-06-01', 'a', 1, 120_000, 100_000, 20_000, 1000],
      ['2026-06-01', 'b', 1, 120_000, 100_000, 20_000, 1000],
      ['2026-06-02', 'a', 2, 240_000, 200_000, 40_000, 2000],
    ]);
  });

  it('notifies once per scope and month', async () => {
    const id = randomUUID();
    expect(await repo.markNotified('organization', id, '2026-07', 'x')).toBe(true);
    expect(await repo.markNotified('organization', id, '2026-07', 'x')).toBe(false);
    expect(await repo.markNotified('project', id, '2026-07', 'x')).toBe(true);
    expect(await repo.markNotified('organization', id, '2026-08', 'x')).toBe(true);
  });

  it('stores price overrides and funds', async () => {
    await repo.setPrice('m-price', 'input_character', '0.5', 'x');
    await repo.setPrice('m-price', 'input_character', '0.25', 'x');
    expect((await repo.listPrices()).filter((p) => p.model === 'm-price')).toEqual([{ model: 'm-price', unit: 'input_character', price_usd: '0.25' }]);
    expect(await repo.deletePrice('m-price', 'input_character')).toBe(true);
    expect(await repo.deletePrice('m-price', 'input_character')).toBe(false);
    const t = await tenant({ available: '0.1', free: '0' });
    expect(await repo.addFunds(t.org, '0.2', true)).toMatchObject({ available_balance_usd: '0.3', free_balance_usd: '0.2' });
    expect(await repo.addFunds(t.org, '1', false)).toMatchObject({ available_balance_usd: '1.3', free_balance_usd: '0.2' });
    expect(await repo.addFunds(randomUUID(), '1', false)).toBeUndefined();
  });
});
