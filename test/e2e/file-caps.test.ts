// Per-file limit and the files_total_count / files_total_size_gb caps, against real server processes.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeAudio, startParlance, tempDir, type Parlance } from '../harness.js';

interface FileRecord {
  id: string;
  filename: string;
  size: number;
}

let work: string;
let wav: Buffer;

beforeAll(async () => {
  work = tempDir('parlance-caps-audio-');
  wav = readFileSync(await makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The WAV plus `extra` trailing bytes: still decodable (demuxers ignore data after the data chunk). */
const padded = (extra: number) => Buffer.concat([wav, Buffer.alloc(extra, 0)]);

function upload(s: Parlance, bytes: Buffer, key?: string): Promise<Response> {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(bytes)]), 'tone.wav');
  return s.request('/v1/files', { method: 'POST', body: fd, key });
}

async function uploadOk(s: Parlance, bytes: Buffer, key?: string): Promise<FileRecord> {
  const res = await upload(s, bytes, key);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as FileRecord;
}

async function total(s: Parlance, key?: string): Promise<number> {
  const res = await s.request('/v1/files/count', { key });
  return ((await res.json()) as { total: number }).total;
}

async function expectLimit(res: Response, cap: 'files_total_count' | 'files_total_size_gb', scope: 'project' | 'organization'): Promise<void> {
  expect(res.status).toBe(429);
  const body = await errorBody(res);
  expect(body.error_type).toBe('limit_exceeded');
  expect(body.message).toContain(cap);
  expect(body.message).toContain(scope);
  expect(body.validation_errors).toEqual([]);
}

function expectCleanDisk(s: Parlance, projectId: string, ids: string[]): void {
  expect(readdirSync(path.join(s.dataDir, 'blobs', 'tmp'))).toEqual([]);
  const dir = path.join(s.dataDir, 'blobs', 'files', projectId);
  expect(existsSync(dir) ? readdirSync(dir).sort() : []).toEqual([...ids].sort());
}

async function newProjectKey(s: Parlance, name: string): Promise<{ projectId: string; key: string }> {
  const p = await s.admin<{ id: string }>('create-project', '--name', name);
  const k = await s.admin<{ api_key: string }>('create-key', '--project', p.id);
  return { projectId: p.id, key: k.api_key };
}

async function del(s: Parlance, id: string, key?: string): Promise<void> {
  const res = await s.request(`/v1/files/${id}`, { method: 'DELETE', key });
  expect(res.status).toBe(204);
}

describe('per-file limit (PARLANCE_MAX_FILE_SIZE_BYTES)', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_MAX_FILE_SIZE_BYTES: String(wav.length) } });
  });
  afterAll(async () => s?.stop());

  it('accepts a file of exactly the limit', async () => {
    const rec = await uploadOk(s, wav);
    expect(rec.size).toBe(wav.length);
  });

  it('refuses a file one byte over the limit with 400 invalid_request on the file field, storing nothing', async () => {
    const before = await total(s);
    const res = await upload(s, padded(1));
    expect(res.status).toBe(400);
    const body = await errorBody(res);
    expect(body.error_type).toBe('invalid_request');
    expect(body.message).toContain(String(wav.length));
    expect(body.validation_errors.map((v) => v.location)).toEqual(['file']);
    expect(await total(s)).toBe(before);
    expect(readdirSync(path.join(s.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });

  it('refuses a file far over the limit (declared Content-Length) and keeps serving', async () => {
    const before = await total(s);
    const res = await upload(s, padded(3 * 1024 * 1024));
    expect(res.status).toBe(400);
    expect((await errorBody(res)).error_type).toBe('invalid_request');
    expect(await total(s)).toBe(before);
    expect((await uploadOk(s, wav)).size).toBe(wav.length);
  });
});

describe('files_total_count cap of a project', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_FILES_TOTAL_COUNT_PROJECT: '2' } });
  });
  afterAll(async () => s?.stop());

  it('refuses the third file with 429 naming files_total_count, and accepts again after a delete', async () => {
    const a = await uploadOk(s, wav);
    const b = await uploadOk(s, wav);
    await expectLimit(await upload(s, wav), 'files_total_count', 'project');
    expect(await total(s)).toBe(2);
    expectCleanDisk(s, s.projectId, [a.id, b.id]);

    await del(s, a.id);
    const c = await uploadOk(s, wav);
    await expectLimit(await upload(s, wav), 'files_total_count', 'project');
    expectCleanDisk(s, s.projectId, [b.id, c.id]);
  });

  it('applies per project: another project has its own count', async () => {
    const other = await newProjectKey(s, 'second');
    await uploadOk(s, wav, other.key);
    await uploadOk(s, wav, other.key);
    await expectLimit(await upload(s, wav, other.key), 'files_total_count', 'project');
  });
});

describe('files_total_count cap of an organization', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_FILES_TOTAL_COUNT_ORG: '3', PARLANCE_FILES_TOTAL_COUNT_PROJECT: '0' } });
  });
  afterAll(async () => s?.stop());

  it('counts the files of every project of the organization', async () => {
    const other = await newProjectKey(s, 'second');
    const a1 = await uploadOk(s, wav);
    await uploadOk(s, wav);
    const b1 = await uploadOk(s, wav, other.key);
    await expectLimit(await upload(s, wav, other.key), 'files_total_count', 'organization');
    await expectLimit(await upload(s, wav), 'files_total_count', 'organization');
    expectCleanDisk(s, other.projectId, [b1.id]);

    // Space freed in one project is usable from the other.
    await del(s, a1.id);
    const b2 = await uploadOk(s, wav, other.key);
    expectCleanDisk(s, other.projectId, [b1.id, b2.id]);
    await expectLimit(await upload(s, wav), 'files_total_count', 'organization');
  });
});

/**
 * A byte total whose GB value, parsed from its decimal string and multiplied back by 1e9, comes out just
 * below the integer (e.g. 64156.99999999999): the cap must still admit an upload landing exactly on it.
 */
function roundingProneCap(base: number): { bytes: number; gb: string } {
  for (let extra = 1; extra < 5000; extra++) {
    const bytes = base + extra;
    const gb = String(bytes / 1e9);
    if (Number(gb) * 1e9 < bytes) return { bytes, gb };
  }
  throw new Error('no rounding-prone value found');
}

describe('files_total_size_gb cap of a project (fractional GB)', () => {
  let s: Parlance;
  let cap: { bytes: number; gb: string };
  beforeAll(async () => {
    cap = roundingProneCap(2 * wav.length);
    s = await startParlance({ env: { PARLANCE_FILES_TOTAL_SIZE_GB_PROJECT: cap.gb } });
  });
  afterAll(async () => s?.stop());

  it('accepts an upload landing exactly on the cap and refuses one byte more', async () => {
    const first = await uploadOk(s, wav);
    const rest = cap.bytes - wav.length; // bytes left under the cap
    expect(rest).toBeGreaterThan(wav.length);

    await expectLimit(await upload(s, padded(rest - wav.length + 1)), 'files_total_size_gb', 'project');
    expect(await total(s)).toBe(1);
    expectCleanDisk(s, s.projectId, [first.id]);

    const exact = await uploadOk(s, padded(rest - wav.length));
    expect(first.size + exact.size).toBe(cap.bytes);

    await expectLimit(await upload(s, wav), 'files_total_size_gb', 'project');
    expectCleanDisk(s, s.projectId, [first.id, exact.id]);

    await del(s, first.id);
    await uploadOk(s, wav);
  });
});

describe('files_total_size_gb cap of an organization', () => {
  let s: Parlance;
  beforeAll(async () => {
    // Room for exactly three copies of the WAV across the organization.
    s = await startParlance({ env: { PARLANCE_FILES_TOTAL_SIZE_GB_ORG: String((3 * wav.length) / 1e9), PARLANCE_FILES_TOTAL_SIZE_GB_PROJECT: '0' } });
  });
  afterAll(async () => s?.stop());

  it('sums the sizes of every project of the organization', async () => {
    const other = await newProjectKey(s, 'second');
    await uploadOk(s, wav);
    await uploadOk(s, wav, other.key);
    await uploadOk(s, wav);
    await expectLimit(await upload(s, wav, other.key), 'files_total_size_gb', 'organization');
    expect(await total(s, other.key)).toBe(1);
  });
});

describe('concurrent uploads at a count cap', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_FILES_TOTAL_COUNT_PROJECT: '3' } });
  });
  afterAll(async () => s?.stop());

  it('lets exactly as many through as the cap allows (transactional re-check)', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => upload(s, wav)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    const ids: string[] = [];
    for (const r of results) {
      if (r.status === 201) ids.push(((await r.json()) as FileRecord).id);
      else await expectLimit(r, 'files_total_count', 'project');
    }
    expect(await total(s)).toBe(3);
    expectCleanDisk(s, s.projectId, ids);
  });
});
