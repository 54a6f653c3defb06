// Usage rows on both engines. A record, its monthly roll-up and the balance draw are written in one
// transaction that first locks the organization row, so concurrent sessions never draw the same cents.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../storage/database.js';
import type { Database, UsageMonthlyTable, UsageRecordsTable } from '../../storage/schema.js';
import { type BalanceState, type Draw } from './balance.js';
import { Decimal } from './money.js';

export type UsageRecordRow = UsageRecordsTable;
export type NewUsageRecord = Omit<UsageRecordsTable, 'free_nusd' | 'invoiced_nusd'>;

export interface MonthlyRow {
  project_id: string;
  source: string;
  cost_nusd: number;
  free_nusd: number;
  invoiced_nusd: number;
}

export interface DaySummaryRow {
  day: string;
  model: string;
  num_requests: number;
  input_text_tokens: number;
  input_audio_tokens: number;
  input_audio_duration_ms: number;
  output_text_tokens: number;
  output_audio_tokens: number;
  output_audio_duration_ms: number;
  duration_ms: number;
  input_cost_nusd: number;
  output_cost_nusd: number;
  cost_nusd: number;
}

/** UTC month of an ISO timestamp. */
export const monthOf = (iso: string): string => iso.slice(0, 7);

export class UsageRepository {
  constructor(
    readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Store a record: lock the organization, decide how it is paid (`pay`), update the balance, the record
   * and the month's roll-up together. Returns the stored row.
   */
  async insertRecord(rec: NewUsageRecord, pay: (org: BalanceState) => Draw): Promise<UsageRecordRow> {
    return this.db.transaction().execute(async (tx) => {
      // A write first: SQLite takes its write lock here (no read-to-write upgrade that could fail), PostgreSQL its row lock.
      await tx
        .updateTable('organizations')
        .set({ id: sql`id` })
        .where('id', '=', rec.organization_id)
        .execute();
      // Stored already (a re-run job metering again): nothing more is drawn.
      const existing = await tx.selectFrom('usage_records').selectAll().where('id', '=', rec.id).executeTakeFirst();
      if (existing) return numericRecord(existing);
      const org = await tx
        .selectFrom('organizations')
        .select(['available_balance_usd', 'free_balance_usd', 'used_balance_usd', 'invoice_billing_enabled'])
        .where('id', '=', rec.organization_id)
        .executeTakeFirst();
      const draw = org ? pay(org) : { freeNano: 0, invoicedNano: 0 };
      if (draw.patch) await tx.updateTable('organizations').set(draw.patch).where('id', '=', rec.organization_id).execute();
      const row: UsageRecordRow = { ...rec, free_nusd: draw.freeNano, invoiced_nusd: draw.invoicedNano };
      await tx.insertInto('usage_records').values(row).execute();
      const monthly: UsageMonthlyTable = {
        project_id: rec.project_id,
        organization_id: rec.organization_id,
        month: monthOf(rec.end_time),
        source: rec.source,
        cost_nusd: rec.cost_nusd,
        free_nusd: draw.freeNano,
        invoiced_nusd: draw.invoicedNano,
      };
      await tx
        .insertInto('usage_monthly')
        .values(monthly)
        .onConflict((oc) =>
          oc.columns(['project_id', 'month', 'source']).doUpdateSet({
            cost_nusd: sql`usage_monthly.cost_nusd + excluded.cost_nusd`,
            free_nusd: sql`usage_monthly.free_nusd + excluded.free_nusd`,
            invoiced_nusd: sql`usage_monthly.invoiced_nusd + excluded.invoiced_nusd`,
          }),
        )
        .execute();
      return row;
    });
  }

  /** Add funds to the prepaid balance (granted ones also to its free part); returns the new balance fields. */
  async addFunds(organizationId: string, amountUsd: string, granted: boolean): Promise<BalanceState | undefined> {
    return this.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('organizations')
        .set({ id: sql`id` })
        .where('id', '=', organizationId)
        .execute();
      const org = await tx
        .selectFrom('organizations')
        .select(['available_balance_usd', 'free_balance_usd', 'used_balance_usd', 'invoice_billing_enabled'])
        .where('id', '=', organizationId)
        .executeTakeFirst();
      if (!org) return undefined;
      const patch = {
        available_balance_usd: new Decimal(org.available_balance_usd).plus(amountUsd).toFixed(),
        free_balance_usd: granted ? new Decimal(org.free_balance_usd).plus(amountUsd).toFixed() : org.free_balance_usd,
      };
      await tx.updateTable('organizations').set(patch).where('id', '=', organizationId).execute();
      return { ...org, ...patch };
    });
  }

  /** The month's roll-up rows of an organization (one per project and source). */
  async monthly(organizationId: string, month: string): Promise<MonthlyRow[]> {
    const rows = await this.db
      .selectFrom('usage_monthly')
      .select(['project_id', 'source', 'cost_nusd', 'free_nusd', 'invoiced_nusd'])
      .where('organization_id', '=', organizationId)
      .where('month', '=', month)
      .execute();
    return rows.map((r) => ({ ...r, cost_nusd: Number(r.cost_nusd), free_nusd: Number(r.free_nusd), invoiced_nusd: Number(r.invoiced_nusd) }));
  }

  /** Usage records of a project whose end time is in [start, end), in (end_time, id) order, after a position. */
  async listRecords(projectId: string, q: { start: string; end: string; desc: boolean; after?: [string, string]; limit: number }): Promise<UsageRecordRow[]> {
    let query = this.db
      .selectFrom('usage_records')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('end_time', '>=', q.start)
      .where('end_time', '<', q.end);
    if (q.after) {
      const [t, id] = q.after;
      query = q.desc
        ? query.where((eb) => eb.or([eb('end_time', '<', t), eb.and([eb('end_time', '=', t), eb('id', '<', id)])]))
        : query.where((eb) => eb.or([eb('end_time', '>', t), eb.and([eb('end_time', '=', t), eb('id', '>', id)])]));
    }
    const dir = q.desc ? 'desc' : 'asc';
    const rows = await query.orderBy('end_time', dir).orderBy('id', dir).limit(q.limit).execute();
    return rows.map(numericRecord);
  }

  /** Per UTC day (of end time) and model: counts and costs of a project's records in [start, end). */
  async summary(projectId: string, start: string, end: string): Promise<DaySummaryRow[]> {
    const day = sql<string>`substr(end_time, 1, 10)`;
    const rows = await this.db
      .selectFrom('usage_records')
      .select([
        day.as('day'),
        'model',
        (eb) => eb.fn.countAll<number>().as('num_requests'),
        (eb) => eb.fn.sum<number>('input_text_tokens').as('input_text_tokens'),
        (eb) => eb.fn.sum<number>('input_audio_tokens').as('input_audio_tokens'),
        (eb) => eb.fn.sum<number>('input_audio_duration_ms').as('input_audio_duration_ms'),
        (eb) => eb.fn.sum<number>('output_text_tokens').as('output_text_tokens'),
        (eb) => eb.fn.sum<number>('output_audio_tokens').as('output_audio_tokens'),
        (eb) => eb.fn.sum<number>('output_audio_duration_ms').as('output_audio_duration_ms'),
        (eb) => eb.fn.sum<number>('duration_ms').as('duration_ms'),
        sql<number>`sum(input_text_cost_nusd + input_audio_cost_nusd)`.as('input_cost_nusd'),
        sql<number>`sum(output_text_cost_nusd + output_audio_cost_nusd)`.as('output_cost_nusd'),
        (eb) => eb.fn.sum<number>('cost_nusd').as('cost_nusd'),
      ])
      .where('project_id', '=', projectId)
      .where('end_time', '>=', start)
      .where('end_time', '<', end)
      .groupBy([day, 'model'])
      .orderBy(day)
      .orderBy('model')
      .execute();
    return rows.map((r) => {
      const out = { ...r } as Record<string, unknown>;
      for (const [k, v] of Object.entries(r)) if (k !== 'day' && k !== 'model') out[k] = Number(v ?? 0);
      return out as unknown as DaySummaryRow;
    });
  }

  /** Record that a budget notification went out; false when one already did this month. */
  async markNotified(scope: 'organization' | 'project', scopeId: string, month: string, at: string): Promise<boolean> {
    const r = await this.db
      .insertInto('budget_notifications')
      .values({ scope, scope_id: scopeId, month, notified_at: at })
      .onConflict((oc) => oc.columns(['scope', 'scope_id', 'month']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async listPrices(): Promise<{ model: string; unit: string; price_usd: string }[]> {
    return this.db.selectFrom('usage_prices').select(['model', 'unit', 'price_usd']).execute();
  }

  async setPrice(model: string, unit: string, priceUsd: string, at: string): Promise<void> {
    await this.db
      .insertInto('usage_prices')
      .values({ model, unit, price_usd: priceUsd, updated_at: at })
      .onConflict((oc) => oc.columns(['model', 'unit']).doUpdateSet({ price_usd: priceUsd, updated_at: at }))
      .execute();
  }

  async deletePrice(model: string, unit: string): Promise<boolean> {
    const r = await this.db.deleteFrom('usage_prices').where('model', '=', model).where('unit', '=', unit).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

const NUMERIC: (keyof UsageRecordRow)[] = [
  'duration_ms',
  'input_text_tokens',
  'input_audio_tokens',
  'input_audio_duration_ms',
  'output_text_tokens',
  'output_audio_tokens',
  'output_audio_duration_ms',
  'input_text_cost_nusd',
  'input_audio_cost_nusd',
  'output_text_cost_nusd',
  'output_audio_cost_nusd',
  'cost_nusd',
  'free_nusd',
  'invoiced_nusd',
];

/** bigint columns come back as strings from some drivers: make them numbers. */
function numericRecord(r: UsageRecordRow): UsageRecordRow {
  const out = { ...r } as Record<string, unknown>;
  for (const k of NUMERIC) out[k] = Number(r[k]);
  return out as unknown as UsageRecordRow;
}
