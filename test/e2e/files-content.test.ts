// GET /v1/files/{id}/content (a Parlance extension): a file's bytes as uploaded, with their media type and length,
// and single Range requests (206 / 416) so a browser's audio element can seek. Local blob store; the S3 store is
// covered in s3-blobs.test.ts.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeAudio, startParlance, tempDir, uploadFile, type Parlance } from '../harness.js';

let s: Parlance;
let work: string;
let wav: Buffer;
let mp3: Buffer;
let wavId: string;
let mp3Id: string;

beforeAll(async () => {
  work = tempDir('parlance-files-content-');
  const [server, wavFile, mp3File] = await Promise.all([
    startParlance(),
    makeAudio(path.join(work, 'tone.wav'), { seconds: 2 }),
    makeAudio(path.join(work, 'tone.mp3'), { seconds: 2, format: 'mp3' }),
  ]);
  s = server;
  [wav, mp3] = [readFileSync(wavFile), readFileSync(mp3File)];
  [wavId, mp3Id] = [await uploadFile(s, wavFile, 'tone & café.wav'), await uploadFile(s, mp3File)];
}, 60_000);
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const content = (id: string, headers: Record<string, string> = {}, key?: string | null) => s.request(`/v1/files/${id}/content`, { headers, key });
const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());

async function expectError(res: Response, status: number, type: string) {
  expect(res.status).toBe(status);
  const body = await errorBody(res);
  expect(body.error_type).toBe(type);
  expect(body.status_code).toBe(status);
  return res;
}

describe('GET /v1/files/{id}/content', () => {
  it('answers the whole file with its media type, length and range support', async () => {
    const res = await content(wavId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('content-length')).toBe(String(wav.length));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename*=UTF-8''${encodeURIComponent('tone & café.wav')}`);
    expect((await bytes(res)).equals(wav)).toBe(true);
    const m = await content(mp3Id);
    expect(m.headers.get('content-type')).toBe('audio/mpeg');
    expect((await bytes(m)).equals(mp3)).toBe(true);
  });

  it('answers single ranges with 206 and Content-Range: first bytes, middle, open-ended, suffix, past the end', async () => {
    const n = wav.length;
    const cases: [string, number, number][] = [
      ['bytes=0-0', 0, 0],
      ['bytes=0-99', 0, 99],
      ['bytes=100-1099', 100, 1099],
      [`bytes=${n - 10}-`, n - 10, n - 1],
      ['bytes=-100', n - 100, n - 1],
      [`bytes=${n - 1}-${n - 1}`, n - 1, n - 1],
      // An end past the last byte is cut to it; a suffix longer than the file is the whole file.
      [`bytes=10-${n + 5000}`, 10, n - 1],
      [`bytes=-${n + 10}`, 0, n - 1],
      // Overlapping ranges merge into one.
      ['bytes=0-10,5-20', 0, 20],
    ];
    for (const [range, start, end] of cases) {
      const res = await content(wavId, { range });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${n}`);
      expect(res.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect((await bytes(res)).equals(wav.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers 416 range_not_satisfiable with Content-Range for a range past the end or backwards', async () => {
    const n = wav.length;
    // A last byte before the first is an invalid range: 416 too (RFC 9110 §14.2).
    for (const range of [`bytes=${n}-`, `bytes=${n + 100}-${n + 200}`, 'bytes=-0', 'bytes=5-1']) {
      const res = await expectError(await content(wavId, { range }), 416, 'range_not_satisfiable');
      expect(res.headers.get('content-range'), range).toBe(`bytes */${n}`);
    }
  });

  it('ignores malformed and non-byte ranges, separate ranges, and a stale If-Range: the whole file', async () => {
    for (const headers of <Record<string, string>[]>[
      { range: 'bytes=abc' },
      { range: 'items=0-5' },
      { range: 'bytes=0-1,100-200' },
      { range: 'bytes=0-99', 'if-range': '"some-other-version"' },
    ]) {
      const res = await content(wavId, headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect((await bytes(res)).equals(wav), JSON.stringify(headers)).toBe(true);
    }
    // A matching If-Range keeps the range.
    const etag = (await content(wavId, { range: 'bytes=0-0' })).headers.get('etag')!;
    expect((await content(wavId, { range: 'bytes=0-3', 'if-range': etag })).status).toBe(206);
  });

  it("is file_not_found for unknown ids, other projects' files and deleted files", async () => {
    await expectError(await content('00000000-0000-4000-8000-000000000000'), 404, 'file_not_found');
    await expectError(await content('not-a-file'), 404, 'file_not_found');
    const p = await s.admin<{ id: string }>('create-project', '--name', 'content-other');
    const other = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    await expectError(await content(wavId, {}, other), 404, 'file_not_found');
    await expectError(await content(wavId, { range: 'bytes=0-9' }, other), 404, 'file_not_found');
    const gone = await uploadFile(s, path.join(work, 'tone.wav'));
    expect((await s.request(`/v1/files/${gone}`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await content(gone), 404, 'file_not_found');
  });

  it('needs files:read and a key', async () => {
    await expectError(await content(wavId, {}, null), 401, 'unauthenticated');
    const k = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'stt_rt:write');
    await expectError(await content(wavId, {}, k.api_key), 403, 'permission_denied');
  });

  it('is described in /openapi.json with its 200 and 206 bytes', async () => {
    const doc = (await (await s.request('/openapi.json')).json()) as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> };
    const op = doc.paths['/v1/files/{file_id}/content']?.get;
    expect(op).toBeDefined();
    expect(Object.keys(op!.responses)).toEqual(expect.arrayContaining(['200', '206']));
  });
});
