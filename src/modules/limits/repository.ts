// Concurrency cap overrides and per-minute concurrent-stream samples, the same on SQLite and PostgreSQL.
import { type Kysely, sql } from 'kysely';
import type { ConcurrentStreamSamplesTable, Database } from '../../storage/schema.js';

export type StreamKind = 'stt' | 'tts';
export const streamKinds: readonly StreamKind[] = ['stt', 'tts'];
export type LimitScope = 'organization' | 'project';

/** An override row: `max` null means unlimited. */
export interface LimitOverride {
  scope: LimitScope;
  kind: StreamKind;
  max: number | null;
}

export type SampleRow = ConcurrentStreamSamplesTable;

/** One minute of a project's samples, every node added up. */
export interface MinuteSamples {
  minute_start: string;
  sample_max: number;
  sample_sum: number;
  sample_count: number;
}

export class LimitsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Overrides of an organization and one of its projects, in one query. */
  async overrides(organizationId: string, projectId: string): Promise<LimitOverride[]> {
    const rows = await this.db
      .selectFrom('concurrency_limits')
      .select(['scope', 'kind', 'max_streams'])
      .where((eb) =>
        eb.or([
          eb.and([eb('scope', '=', 'organization'), eb('scope_id', '=', organizationId)]),
          eb.and([eb('scope', '=', 'project'), eb('scope_id', '=', projectId)]),
        ]),
      )
      .execute();
    return rows.map((r) => ({ scope: r.scope, kind: r.kind, max: r.max_streams === null ? null : Number(r.max_streams) }));
  }

  /** Set an override (`max` null: unlimited). */
  async setOverride(scope: LimitScope, scopeId: string, kind: StreamKind, max: number | null, at: string): Promise<void> {
    await this.db
      .insertInto('concurrency_limits')
      .values({ scope, scope_id: scopeId, kind, max_streams: max, updated_at: at })
      .onConflict((oc) => oc.columns(['scope', 'scope_id', 'kind']).doUpdateSet({ max_streams: max, updated_at: at }))
      .execute();
  }

  /** Remove an override: the setting applies again. */
  async clearOverride(scope: LimitScope, scopeId: string, kind: StreamKind): Promise<void> {
    await this.db.deleteFrom('concurrency_limits').where('scope', '=', scope).where('scope_id', '=', scopeId).where('kind', '=', kind).execute();
  }

  /** Write this node's running aggregate of a minute (replacing what it wrote earlier in the minute). */
  async upsertSamples(rows: SampleRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db
      .insertInto('concurrent_stream_samples')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['project_id', 'kind', 'minute_start', 'node_id']).doUpdateSet((eb) => ({
          sample_min: eb.ref('excluded.sample_min'),
          sample_max: eb.ref('excluded.sample_max'),
          sample_sum: eb.ref('excluded.sample_sum'),
          sample_count: eb.ref('excluded.sample_count'),
        })),
      )
      .execute();
  }

  /**
   * A project's minutes with samples in [from, to), ascending. Nodes sample concurrently, so their peaks and
   * sums add up; the count is the number of sampling instants, which every node shares.
   */
  async minutes(projectId: string, kind: StreamKind, from: string, to: string): Promise<MinuteSamples[]> {
    const rows = await this.db
      .selectFrom('concurrent_stream_samples')
      .select([
        'minute_start',
        sql<number>`SUM(sample_max)`.as('sample_max'),
        sql<number>`SUM(sample_sum)`.as('sample_sum'),
        sql<number>`MAX(sample_count)`.as('sample_count'),
      ])
      .where('project_id', '=', projectId)
      .where('kind', '=', kind)
      .where('minute_start', '>=', from)
      .where('minute_start', '<', to)
      .groupBy('minute_start')
      .orderBy('minute_start')
      .execute();
    return rows.map((r) => ({
      minute_start: r.minute_start,
      sample_max: Number(r.sample_max),
      sample_sum: Number(r.sample_sum),
      sample_count: Number(r.sample_count),
    }));
  }

  /** Housekeeping: samples older than the retention window. */
  async deleteSamplesBefore(minute: string): Promise<number> {
    const r = await this.db.deleteFrom('concurrent_stream_samples').where('minute_start', '<', minute).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
