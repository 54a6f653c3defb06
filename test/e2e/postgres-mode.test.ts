// The server with DATABASE_URL: every row in PostgreSQL, the admin CLI against the same database.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, errorBody, makeAudio, startParlance, tempDir, type Parlance } from '../harness.js';

interface FileRecord {
  id: string;
  filename: string;
  size: number;
  created_at: string;
  client_reference_id: string | null;
}

let work: string;
let wav: Buffer;

beforeAll(async () => {
  work = tempDir('parlance-pg-audio-');
  wav = readFileSync(await makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function upload(s: Parlance, opts: { name?: string; ref?: string; key?: string } = {}): Promise<Response> {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(wav)]), opts.name ?? 'tone.wav');
  if (opts.ref !== undefined) fd.append('client_reference_id', opts.ref);
  return s.request('/v1/files', { method: 'POST', body: fd, key: opts.key });
}

async function uploadOk(s: Parlance, opts: { name?: string; ref?: string; key?: string } = {}): Promise<FileRecord> {
  const res = await upload(s, opts);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as FileRecord;
}

describe('PostgreSQL mode', () => {
  let db: { url: string; drop(): Promise<void> };
  let s: Parlance;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createPgDatabase();
    s = await startParlance({ env: { DATABASE_URL: db.url } });
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await s?.stop();
    await db?.drop();
  });

  it('bootstraps into PostgreSQL and prints a working key, with no SQLite file', async () => {
    expect(s.apiKey).toMatch(/^prl_/);
    const orgs = await client.query<{ id: string }>('SELECT id FROM organizations');
    expect(orgs.rows.map((r) => r.id)).toEqual([s.organizationId]);
    const projects = await client.query<{ id: string }>('SELECT id FROM projects');
    expect(projects.rows.map((r) => r.id)).toEqual([s.projectId]);
    expect(existsSync(path.join(s.dataDir, 'parlance.db'))).toBe(false);
    expect((await s.request('/v1/files/count')).status).toBe(200);
  });

  it('refuses NUL characters in ids, fields and filenames with invalid_request, never 500 (issue 22 D1)', async () => {
    const expect400 = async (res: Response, location: string) => {
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.error_type).toBe('invalid_request');
      expect(JSON.stringify(body)).toContain(location);
    };
    await expect400(await s.request('/v1/files/%00'), 'id');
    await expect400(await s.request('/v1/transcriptions/abc%00def'), 'id');
    await expect400(await s.request('/v1/files?cursor=%00'), 'cursor');
    await expect400(
      await s.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stt-async-v4', audio_url: 'https://example.com/a.wav', client_reference_id: 'a\u0000b' }),
      }),
      'client_reference_id',
    );
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(wav)]), 'a\u0000.wav');
    await expect400(await s.request('/v1/files', { method: 'POST', body: form }), 'filename');
    const withRef = new FormData();
    withRef.set('client_reference_id', 'x\u0000');
    withRef.set('file', new Blob([new Uint8Array(wav)]), 'a.wav');
    await expect400(await s.request('/v1/files', { method: 'POST', body: withRef }), 'client_reference_id');
    // Nothing was stored by the refused requests, and the server still serves.
    expect((await s.request('/v1/files/count')).status).toBe(200);
  });

  it('uploads, reads, lists, counts and deletes files, with numeric sizes', async () => {
    const a = await uploadOk(s, { name: 'a.wav', ref: 'ref-a' });
    expect(a.size).toBe(wav.length);
    const row = await client.query<{ size: string; project_id: string }>('SELECT size::text AS size, project_id FROM files WHERE id = $1', [a.id]);
    expect(row.rows).toEqual([{ size: String(wav.length), project_id: s.projectId }]);

    const got = await s.request(`/v1/files/${a.id}`);
    expect(got.status).toBe(200);
    const gotBody = (await got.json()) as FileRecord;
    expect(gotBody).toEqual(a);
    expect(typeof gotBody.size).toBe('number');

    const b = await uploadOk(s, { name: 'b.wav' });
    const c = await uploadOk(s, { name: 'c.wav' });
    const list = (await (await s.request('/v1/files')).json()) as { files: FileRecord[]; next_page_cursor: string | null };
    expect(list.files.map((f) => f.id)).toEqual([c.id, b.id, a.id]);
    expect(list.next_page_cursor).toBeNull();
    for (const f of list.files) expect(typeof f.size).toBe('number');

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = (await (await s.request(`/v1/files?limit=1${q}`)).json()) as { files: FileRecord[]; next_page_cursor: string | null };
      seen.push(...page.files.map((f) => f.id));
      cursor = page.next_page_cursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual([c.id, b.id, a.id]);

    expect(await (await s.request('/v1/files/count')).json()).toEqual({ playground: 0, public_api: 3, total: 3 });

    const del = await s.request(`/v1/files/${b.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(existsSync(path.join(s.dataDir, 'blobs', 'files', s.projectId, b.id))).toBe(false);
    const again = await s.request(`/v1/files/${b.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect((await errorBody(again)).error_type).toBe('file_not_found');
    expect((await s.request(`/v1/files/${b.id}`)).status).toBe(404);
    expect((await client.query('SELECT id FROM files ORDER BY id')).rows.map((r: { id: string }) => r.id)).toEqual([a.id, c.id].sort());
    expect(readdirSync(path.join(s.dataDir, 'blobs', 'files', s.projectId)).sort()).toEqual([a.id, c.id].sort());
  });

  it('admin commands work against the same DATABASE_URL while the server runs', async () => {
    const p = await s.admin<{ id: string; name: string }>('create-project', '--name', 'pg-second');
    expect((await client.query('SELECT name FROM projects WHERE id = $1', [p.id])).rows).toEqual([{ name: 'pg-second' }]);
    const k = await s.admin<{ api_key: string }>('create-key', '--project', p.id, '--playground');
    const rec = await uploadOk(s, { key: k.api_key });
    expect(await (await s.request('/v1/files/count', { key: k.api_key })).json()).toEqual({ playground: 1, public_api: 0, total: 1 });
    // Projects stay apart.
    expect((await s.request(`/v1/files/${rec.id}`)).status).toBe(404);
    const listed = await s.admin<{ projects: { id: string }[] }>('list-projects');
    expect(listed.projects.map((x) => x.id).sort()).toEqual([s.projectId, p.id].sort());
  });

  it("a second node on the same database shares keys and accepts the first node's cursors", async () => {
    const other = await startParlance({ env: { DATABASE_URL: db.url } });
    try {
      expect(other.organizationId).toBe(s.organizationId);
      // The bootstrap key of the first node authenticates on the second.
      const page = (await (await s.request('/v1/files?limit=1')).json()) as { next_page_cursor: string };
      expect(typeof page.next_page_cursor).toBe('string');
      const res = await other.request(`/v1/files?limit=1&cursor=${encodeURIComponent(page.next_page_cursor)}`, {
        headers: { authorization: `Bearer ${s.apiKey}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { files: unknown[] }).files).toHaveLength(1);
    } finally {
      await other.stop();
    }
  });
});

describe('PostgreSQL mode: caps under concurrent uploads', () => {
  let db: { url: string; drop(): Promise<void> };
  let s: Parlance;

  beforeAll(async () => {
    db = await createPgDatabase();
    s = await startParlance({ env: { DATABASE_URL: db.url, PARLANCE_FILES_TOTAL_COUNT_ORG: '3', PARLANCE_FILES_TOTAL_COUNT_PROJECT: '0' } });
  });
  afterAll(async () => {
    await s?.stop();
    await db?.drop();
  });

  it('lets exactly the organization cap through across two projects', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'pg-concurrent');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(s, { key: i % 2 ? key : undefined })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429, 429]);
    for (const r of results.filter((x) => x.status === 429)) expect((await errorBody(r)).message).toContain('files_total_count');
    const a = ((await (await s.request('/v1/files/count')).json()) as { total: number }).total;
    const b = ((await (await s.request('/v1/files/count', { key })).json()) as { total: number }).total;
    expect(a + b).toBe(3);
    expect(readdirSync(path.join(s.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });
});
