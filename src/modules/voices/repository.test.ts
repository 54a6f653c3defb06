// VoicesRepository on both real engines: name uniqueness per project, per-model transitions (not_computed →
// processing only once, processing → ready | failed only from processing), paging, counting and deletion.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES as engines, type OpenedDatabase as Opened } from '../../../test/databases.js';
import { type VoiceModelRow, VoiceNameTaken, type VoiceRow, VoicesRepository } from './repository.js';

describe.each(engines)('VoicesRepository (%s)', (_engine, open) => {
  let opened: Opened;
  let repo: VoicesRepository;

  beforeAll(async () => {
    opened = await open();
    repo = new VoicesRepository(opened.db.kysely);
  });
  afterAll(async () => opened?.cleanup());

  let clock = Date.parse('2026-01-01T00:00:00Z');
  function voice(project: string, name: string): VoiceRow {
    const id = randomUUID();
    clock += 1000;
    return {
      id,
      organization_id: 'org',
      project_id: project,
      name,
      filename: 'a.wav',
      size: 10,
      blob_key: `voices/${project}/${id}`,
      reference_profile: null,
      created_at: new Date(clock).toISOString(),
    };
  }
  const processing = (voiceId: string, model: string): VoiceModelRow => ({
    voice_id: voiceId,
    model,
    status: 'processing',
    error_type: null,
    error_message: null,
    adaptation: null,
    updated_at: new Date().toISOString(),
  });

  it('names are unique per project, not across projects; a refused insert leaves no model rows', async () => {
    const p1 = randomUUID();
    const a = voice(p1, 'Narrator');
    await repo.insert(a, [processing(a.id, 'm1')]);
    const b = voice(p1, 'Narrator');
    await expect(repo.insert(b, [processing(b.id, 'm1')])).rejects.toBeInstanceOf(VoiceNameTaken);
    expect(await repo.models([b.id])).toEqual([]);
    const c = voice(randomUUID(), 'Narrator');
    await repo.insert(c, []);
    expect((await repo.get(c.project_id, c.id))?.name).toBe('Narrator');
    // Another project's voice is not found through the project-scoped get.
    expect(await repo.get(p1, c.id)).toBeUndefined();
  });

  it('startModels moves only models without a row, once; finish moves only processing rows', async () => {
    const v = voice(randomUUID(), 'v');
    await repo.insert(v, [processing(v.id, 'm1')]);
    const enqueued: string[][] = [];
    const moved = await repo.startModels(v.id, ['m1', 'm2'], new Date().toISOString(), async (_tx, m) => void enqueued.push(m));
    expect(moved).toEqual(['m2']);
    expect(enqueued).toEqual([['m2']]);
    expect(await repo.startModels(v.id, ['m2'], new Date().toISOString(), async () => undefined)).toEqual([]);

    expect(
      await repo.finish(v.id, 'm1', { status: 'failed', error_type: 'voice_invalid_audio', error_message: 'bad', adaptation: null }, new Date().toISOString()),
    ).toBe(true);
    // failed is terminal: a late "ready" (a duplicate job run) does not overwrite it, and recompute does not restart it.
    expect(await repo.finish(v.id, 'm1', { status: 'ready', error_type: null, error_message: null, adaptation: '{}' }, new Date().toISOString())).toBe(false);
    expect(await repo.startModels(v.id, ['m1'], new Date().toISOString(), async () => undefined)).toEqual([]);
    expect(await repo.model(v.id, 'm1')).toMatchObject({ status: 'failed', error_type: 'voice_invalid_audio' });
  });

  it('lists newest first with a (created_at, id) cursor, counts, and deletes with the model rows', async () => {
    const p = randomUUID();
    const rows = [voice(p, 'a'), voice(p, 'b'), voice(p, 'c')];
    for (const r of rows) await repo.insert(r, [processing(r.id, 'm1')]);
    const first = await repo.list(p, 2);
    expect(first.map((r) => r.name)).toEqual(['c', 'b']);
    const rest = await repo.list(p, 2, [first[1]!.created_at, first[1]!.id]);
    expect(rest.map((r) => r.name)).toEqual(['a']);
    expect(await repo.count(p)).toBe(3);
    expect((await repo.delete(p, rows[0]!.id))?.id).toBe(rows[0]!.id);
    expect(await repo.delete(p, rows[0]!.id)).toBeUndefined();
    expect(await repo.models([rows[0]!.id])).toEqual([]);
    expect(await repo.count(p)).toBe(2);
  });
});
