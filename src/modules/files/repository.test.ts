// FilesRepository on both real engines: the same behaviour from SQLite and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES as engines, type OpenedDatabase as Opened } from '../../../test/databases.js';
import { FilesRepository, type FileRow, type Usage } from './repository.js';

describe.each(engines)('FilesRepository (%s)', (_engine, open) => {
  let opened: Opened;
  let repo: FilesRepository;

  beforeAll(async () => {
    opened = await open();
    repo = new FilesRepository(opened.db.kysely, opened.db.dialect);
  });
  afterAll(async () => opened?.cleanup());

  /** A fresh organization (a real row, which PostgreSQL locks during the cap check) and project. */
  async function tenant(): Promise<{ org: string; project: string }> {
    const org = randomUUID();
    const project = randomUUID();
    const now = new Date().toISOString();
    await opened.db.kysely.insertInto('organizations').values({ id: org, name: 'org', created_at: now }).execute();
    await opened.db.kysely
      .insertInto('projects')
      .values({ id: project, organization_id: org, name: 'p', description: '', region: 'local', created_at: now })
      .execute();
    return { org, project };
  }

  function row(t: { org: string; project: string }, over: Partial<FileRow> = {}): FileRow {
    const id = over.id ?? randomUUID();
    return {
      id,
      organization_id: t.org,
      project_id: t.project,
      filename: 'a.wav',
      size: 1000,
      client_reference_id: null,
      source: 'public_api',
      blob_key: `files/${t.project}/${id}`,
      duration_ms: 1000,
      format: 'wav',
      created_at: new Date().toISOString(),
      ...over,
    };
  }

  const accept = () => null;

  it('inserts within the caps and hands the check the current usage of project and organization', async () => {
    const t = await tenant();
    const sibling = { org: t.org, project: randomUUID() };
    await repo.insertWithinCaps(row(sibling, { size: 5 }), accept);
    await repo.insertWithinCaps(row(t, { size: 7 }), accept);
    let seen: { project: Usage; organization: Usage } | undefined;
    let seenSize = 0;
    const r = row(t, { size: 11 });
    expect(
      await repo.insertWithinCaps(r, (usage, size) => {
        seen = usage;
        seenSize = size;
        return null;
      }),
    ).toBeNull();
    expect(seen).toEqual({ project: { count: 1, bytes: 7 }, organization: { count: 2, bytes: 12 } });
    expect(seenSize).toBe(11);
    expect(await repo.get(t.project, r.id)).toEqual(r);
  });

  it('refuses when the check says so, and stores nothing', async () => {
    const t = await tenant();
    const r = row(t);
    expect(await repo.insertWithinCaps(r, () => 'files_total_count cap reached')).toBe('files_total_count cap reached');
    expect(await repo.get(t.project, r.id)).toBeUndefined();
    expect(await repo.usage('project', t.project)).toEqual({ count: 0, bytes: 0 });
  });

  it('serialises concurrent inserts so that a cap cannot be overshot', async () => {
    const t = await tenant();
    const capOf3 = (usage: { organization: Usage }) => (usage.organization.count + 1 > 3 ? 'cap' : null);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => repo.insertWithinCaps(row({ org: t.org, project: i % 2 ? t.project : randomUUID() }), capOf3)),
    );
    expect(outcomes.filter((o) => o === null)).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'cap')).toHaveLength(5);
    expect((await repo.usage('organization', t.org)).count).toBe(3);
  });

  it('sums usage as exact numbers, beyond 32 bits', async () => {
    const t = await tenant();
    const big = 3 * 2 ** 32 + 5;
    await repo.insertWithinCaps(row(t, { size: big }), accept);
    await repo.insertWithinCaps(row(t, { size: 2 }), accept);
    const usage = await repo.usage('project', t.project);
    expect(usage).toEqual({ count: 2, bytes: big + 2 });
    expect(typeof usage.count).toBe('number');
    expect(typeof usage.bytes).toBe('number');
    expect(await repo.usage('organization', t.org)).toEqual({ count: 2, bytes: big + 2 });
    expect(await repo.usage('project', randomUUID())).toEqual({ count: 0, bytes: 0 });
    const stored = await repo.get(t.project, (await repo.list(t.project, 10)).find((f) => f.size === big)!.id);
    expect(stored?.size).toBe(big);
    expect(typeof stored?.duration_ms).toBe('number');
  });

  it('lists newest first, breaks created_at ties by id, and continues after a cursor position', async () => {
    const t = await tenant();
    const same = '2025-03-01T10:00:00.000Z';
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const id of ids) await repo.insertWithinCaps(row(t, { id, created_at: same }), accept);
    const older = row(t, { created_at: '2025-02-01T10:00:00.000Z' });
    const newer = row(t, { created_at: '2025-04-01T10:00:00.000Z' });
    await repo.insertWithinCaps(older, accept);
    await repo.insertWithinCaps(newer, accept);
    // Another project's file never shows.
    await repo.insertWithinCaps(row({ org: t.org, project: randomUUID() }, { created_at: same }), accept);

    const expected = [newer.id, ...[...ids].sort().reverse(), older.id];
    expect((await repo.list(t.project, 100)).map((r) => r.id)).toEqual(expected);

    const paged: string[] = [];
    let after: [string, string] | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await repo.list(t.project, 2, after);
      paged.push(...page.map((r) => r.id));
      if (page.length < 2) break;
      const last = page[page.length - 1]!;
      after = [last.created_at, last.id];
    }
    expect(paged).toEqual(expected);
  });

  it('counts by source within the project', async () => {
    const t = await tenant();
    await repo.insertWithinCaps(row(t, { source: 'public_api' }), accept);
    await repo.insertWithinCaps(row(t, { source: 'public_api' }), accept);
    await repo.insertWithinCaps(row(t, { source: 'playground' }), accept);
    await repo.insertWithinCaps(row({ org: t.org, project: randomUUID() }, { source: 'playground' }), accept);
    expect(await repo.countBySource(t.project)).toEqual({ public_api: 2, playground: 1 });
    expect(await repo.countBySource(randomUUID())).toEqual({});
  });

  it('deletes one row of the project, once', async () => {
    const t = await tenant();
    const a = row(t);
    const b = row(t);
    await repo.insertWithinCaps(a, accept);
    await repo.insertWithinCaps(b, accept);
    expect(await repo.delete(randomUUID(), a.id)).toBeUndefined(); // another project cannot delete it
    expect(await repo.delete(t.project, a.id)).toEqual(a);
    expect(await repo.delete(t.project, a.id)).toBeUndefined();
    expect(await repo.get(t.project, a.id)).toBeUndefined();
    expect(await repo.get(t.project, b.id)).toEqual(b);
    expect(await repo.usage('project', t.project)).toEqual({ count: 1, bytes: b.size });
  });
});
