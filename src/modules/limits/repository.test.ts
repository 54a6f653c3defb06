// LimitsRepository on both real engines: concurrency overrides and per-minute stream samples.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES as engines, type OpenedDatabase as Opened } from '../../../test/databases.js';
import { LimitsRepository, type SampleRow } from './repository.js';

const row = (project: string, minute: string, node: string, v: Partial<SampleRow> = {}): SampleRow => ({
  project_id: project,
  organization_id: 'org',
  kind: 'stt',
  minute_start: minute,
  node_id: node,
  sample_min: 0,
  sample_max: 1,
  sample_sum: 1,
  sample_count: 1,
  ...v,
});

describe.each(engines)('LimitsRepository (%s)', (_engine, open) => {
  let opened: Opened;
  let repo: LimitsRepository;

  beforeAll(async () => {
    opened = await open();
    repo = new LimitsRepository(opened.db.kysely);
  });
  afterAll(async () => opened?.cleanup());

  it('overrides: set (a number or null = unlimited), replace and clear, per scope and kind', async () => {
    const org = randomUUID();
    const project = randomUUID();
    const otherProject = randomUUID();
    expect(await repo.overrides(org, project)).toEqual([]);
    await repo.setOverride('organization', org, 'stt', 7, '2026-01-01T00:00:00.000Z');
    await repo.setOverride('project', project, 'tts', null, '2026-01-01T00:00:00.000Z');
    await repo.setOverride('project', otherProject, 'stt', 1, '2026-01-01T00:00:00.000Z');
    const sorted = async () => (await repo.overrides(org, project)).sort((a, b) => a.scope.localeCompare(b.scope) || a.kind.localeCompare(b.kind));
    expect(await sorted()).toEqual([
      { scope: 'organization', kind: 'stt', max: 7 },
      { scope: 'project', kind: 'tts', max: null },
    ]);
    await repo.setOverride('organization', org, 'stt', 0, '2026-01-02T00:00:00.000Z');
    await repo.setOverride('project', project, 'tts', 3, '2026-01-02T00:00:00.000Z');
    expect(await sorted()).toEqual([
      { scope: 'organization', kind: 'stt', max: 0 },
      { scope: 'project', kind: 'tts', max: 3 },
    ]);
    await repo.clearOverride('project', project, 'tts');
    expect(await sorted()).toEqual([{ scope: 'organization', kind: 'stt', max: 0 }]);
  });

  it("samples: a node's row is replaced within the minute; nodes add up per minute; window bounds [from, to)", async () => {
    const p = randomUUID();
    const m0 = '2026-03-31T23:58:00.000Z';
    const m1 = '2026-03-31T23:59:00.000Z';
    const m2 = '2026-04-01T00:00:00.000Z';
    await repo.upsertSamples([row(p, m1, 'a', { sample_max: 1, sample_sum: 1, sample_count: 1 })]);
    await repo.upsertSamples([row(p, m1, 'a', { sample_max: 3, sample_sum: 5, sample_count: 4 })]);
    await repo.upsertSamples([
      row(p, m1, 'b', { sample_max: 2, sample_sum: 6, sample_count: 4 }),
      row(p, m0, 'a', { sample_max: 1, sample_sum: 2, sample_count: 12 }),
      row(p, m2, 'a', { sample_max: 9, sample_sum: 9, sample_count: 1 }),
      row(p, m1, 'a', { kind: 'tts', sample_max: 50, sample_sum: 50 }),
      row(randomUUID(), m1, 'a', { sample_max: 40 }),
    ]);
    expect(await repo.minutes(p, 'stt', m0, m2)).toEqual([
      { minute_start: m0, sample_max: 1, sample_sum: 2, sample_count: 12 },
      { minute_start: m1, sample_max: 5, sample_sum: 11, sample_count: 4 },
    ]);
    expect(await repo.minutes(p, 'tts', m0, m2)).toEqual([{ minute_start: m1, sample_max: 50, sample_sum: 50, sample_count: 1 }]);
    expect(await repo.minutes(p, 'stt', m2, '2026-04-01T00:01:00.000Z')).toHaveLength(1);
    expect(await repo.deleteSamplesBefore(m1)).toBeGreaterThanOrEqual(1);
    expect((await repo.minutes(p, 'stt', m0, m2)).map((m) => m.minute_start)).toEqual([m1]);
  });
});
