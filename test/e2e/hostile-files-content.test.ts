// A hostile probe of GET /v1/files/{id}/content with Range headers: valid, merged, suffix, past the end, malformed,
// absurdly large numbers, a thousand ranges, a header over the parser's limit, odd ids, and another project's key
// (which must learn nothing, not even the size a 416 would tell). Everything held: the table is in
// docs/guide/security.md; files-content.test.ts covers the ordinary ranges.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeAudio, type Parlance, startParlance, tempDir, uploadFile } from '../harness.js';

let s: Parlance;
let work: string;
let wav: Buffer;
let id: string;
let keyB: string;

beforeAll(async () => {
  work = tempDir('parlance-hostile-range-');
  const file = await makeAudio(path.join(work, 'tone.wav'), { seconds: 1 });
  wav = readFileSync(file);
  s = await startParlance();
  id = await uploadFile(s, file);
  const project = await s.admin<{ id: string }>('create-project', '--name', 'Project B');
  keyB = (await s.admin<{ api_key: string }>('create-key', '--project', project.id)).api_key;
}, 60_000);

afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const get = (range: string | undefined, key?: string, fileId = id) =>
  s.request(`/v1/files/${fileId}/content`, { headers: range === undefined ? {} : { range }, ...(key ? { key } : {}) });

async function expectPartial(range: string, start: number, end: number) {
  const res = await get(range);
  expect(res.status, range).toBe(206);
  expect(res.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${wav.length}`);
  expect(res.headers.get('content-length'), range).toBe(String(end - start + 1));
  expect(Buffer.from(await res.arrayBuffer()).equals(wav.subarray(start, end + 1)), range).toBe(true);
}

async function expectWhole(range: string) {
  const res = await get(range);
  expect(res.status, range).toBe(200);
  expect(res.headers.get('content-range'), range).toBeNull();
  expect(Buffer.from(await res.arrayBuffer()).equals(wav), range).toBe(true);
}

async function expectUnsatisfiable(range: string) {
  const res = await get(range);
  expect(res.status, range).toBe(416);
  expect(res.headers.get('content-range'), range).toBe(`bytes */${wav.length}`);
  expect((await errorBody(res)).error_type, range).toBe('range_not_satisfiable');
}

describe('Range on GET /v1/files/{id}/content', () => {
  it('ranges that ask for bytes that exist: 206 with the right Content-Range and bytes', async () => {
    const n = wav.length;
    await expectPartial('bytes=0-0', 0, 0);
    await expectPartial(`bytes=${n - 1}-`, n - 1, n - 1);
    await expectPartial('bytes=-1', n - 1, n - 1);
    await expectPartial('bytes=0-99999999999999999999999', 0, n - 1);
    await expectPartial('bytes=-99999999999999999999', 0, n - 1);
    await expectPartial(`bytes=0-1,${n + 5}-${n + 10}`, 0, 1); // the part past the end is dropped
    await expectPartial('bytes=0-10,5-20,21-30', 0, 30); // touching and overlapping ranges merge
  });

  it('ranges that ask for no byte that exists: 416 with bytes */size and the REST body', async () => {
    const n = wav.length;
    for (const range of [`bytes=${n}-`, 'bytes=99999999999999999999-', 'bytes=-0', `bytes=${n + 100}-${n + 200},${n}-`, 'bytes=10-5'])
      await expectUnsatisfiable(range);
  });

  it('malformed ranges, other units and ranges that stay apart are ignored: the whole file', async () => {
    for (const range of ['bytes=1e3-2e3', 'bytes=0x10-0x20', 'bytes=--5', 'bytes=0--5', 'bytes=5', 'bytes=,,,,', 'items=0-5', 'BYTES=0-5', 'bytes=1.5-3'])
      await expectWhole(range);
    await expectWhole('bytes=0-1,10-11');
    // A thousand separate ranges (12 KB of header): no work per range, the whole file.
    await expectWhole(`bytes=${Array.from({ length: 1000 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',')}`);
    const stale = await s.request(`/v1/files/${id}/content`, { headers: { range: 'bytes=0-9', 'if-range': '"another"' } });
    expect(stale.status).toBe(200);
  });

  it('a Range header over the parser limit is a malformed request in the REST body', async () => {
    const res = await get(`bytes=${'0-0,'.repeat(5000)}0-0`);
    expect(res.status).toBe(400);
    expect((await errorBody(res)).error_type).toBe('invalid_request');
  });

  it('odd ids are file_not_found or refused, never a path', async () => {
    for (const bad of ['not-a-uuid', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', id.toUpperCase(), '00000000-0000-4000-8000-000000000000']) {
      const res = await get('bytes=0-10', undefined, bad);
      expect(res.status, bad).toBe(404);
      const body = await errorBody(res);
      expect(body.error_type, bad).toBe('file_not_found');
      expect(body.message, bad).toBe(`File ${decodeURIComponent(bad)} not found.`); // the id as given, no storage path
    }
    const long = await get(undefined, undefined, 'x'.repeat(300));
    expect(long.status).toBe(400);
  });

  it("another project's key learns nothing: 404 without Content-Range, whatever the range", async () => {
    for (const range of [undefined, 'bytes=0-10', `bytes=${wav.length}-`, 'bytes=-5']) {
      const res = await get(range, keyB);
      expect(res.status, range).toBe(404);
      expect(res.headers.get('content-range'), range).toBeNull();
      expect(res.headers.get('etag'), range).toBeNull();
      expect((await errorBody(res)).error_type, range).toBe('file_not_found');
    }
    expect((await get('bytes=0-0')).status).toBe(206);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });
});
