// ModelRecords on both real engines: one row per model id (a second insert of an id under way writes nothing, a failed
// row is replaced), updates only from the states given, sizes read back as numbers, and the version stamp every
// change renews (progress updates excepted).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES as engines, type OpenedDatabase as Opened } from '../../../test/databases.js';
import { ModelRecords, type ModelRow } from './records.js';

describe.each(engines)('ModelRecords (%s)', (_engine, open) => {
  let opened: Opened;
  let records: ModelRecords;

  beforeAll(async () => {
    opened = await open();
    records = new ModelRecords(opened.db.kysely);
  });
  afterAll(async () => opened?.cleanup());

  const row = (id: string, source = 'catalogue-name'): ModelRow => ({
    id,
    source,
    plan: JSON.stringify({ kind: 'archive', options: { source } }),
    family: 'stt-offline',
    type: 'whisper',
    status: 'downloading',
    bytes_received: null,
    bytes_total: null,
    size_bytes: null,
    sha256: null,
    error_type: null,
    error_message: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });

  it('inserts one row per id, with its job in the same transaction, and renews the version stamp', async () => {
    const before = await records.version();
    let jobs = 0;
    expect(await records.insert(row('a-v1'), async () => jobs++)).toBe(true);
    const stamp = await records.version();
    expect(stamp).not.toBe(before);
    expect(await records.insert(row('a-v1', 'other'), async () => jobs++)).toBe(false);
    expect(jobs).toBe(1);
    expect((await records.get('a-v1'))?.source).toBe('catalogue-name');
    expect(await records.version()).toBe(stamp);
  });

  it('rolls the row back when its job cannot be written', async () => {
    await expect(
      records.insert(row('b-v1'), async () => {
        throw new Error('no queue');
      }),
    ).rejects.toThrow('no queue');
    expect(await records.get('b-v1')).toBeUndefined();
  });

  it('updates only from the states given; progress without a new stamp; large sizes as numbers', async () => {
    await records.insert(row('c-v1'), async () => undefined);
    const stamp = await records.version();
    expect(await records.update('c-v1', ['downloading'], { bytes_received: 5_000_000_000, bytes_total: 6_000_000_000 }, false)).toBe(true);
    expect(await records.version()).toBe(stamp);
    const r = (await records.get('c-v1'))!;
    expect([Number(r.bytes_received), Number(r.bytes_total)]).toEqual([5_000_000_000, 6_000_000_000]);
    expect(await records.update('c-v1', ['installing'], { status: 'ready' })).toBe(false);
    expect(await records.update('c-v1', ['downloading', 'installing'], { status: 'failed', error_type: 'file_download_failed', error_message: 'x' })).toBe(
      true,
    );
    expect(await records.version()).not.toBe(stamp);
    // A failed row is replaced by a new pull of the id.
    expect(await records.insert(row('c-v1', 'again'), async () => undefined)).toBe(true);
    expect(await records.get('c-v1')).toMatchObject({ status: 'downloading', source: 'again', error_type: null });
    // Writes of the earlier pull, fenced on its creation time, leave the new one alone.
    expect(await records.update('c-v1', ['downloading'], { bytes_received: 1 }, false, '2026-01-01T00:00:00.000Z')).toBe(true);
    expect(await records.update('c-v1', ['downloading'], { bytes_received: 2 }, false, '2025-12-31T00:00:00.000Z')).toBe(false);
    expect(Number((await records.get('c-v1'))!.bytes_received)).toBe(1);
    expect((await records.list()).map((x) => x.id)).toEqual(['a-v1', 'c-v1']);
    expect(await records.delete('c-v1')).toBe(true);
    expect(await records.delete('c-v1')).toBe(false);
  });
});
