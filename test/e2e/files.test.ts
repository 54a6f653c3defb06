// Files API end to end: a real server process, real ffmpeg-made audio, the real data dir on disk.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeAudio, startParlance, tempDir, type Parlance, waitFor } from '../harness.js';

const execFileP = promisify(execFile);

interface FileRecord {
  id: string;
  filename: string;
  size: number;
  created_at: string;
  client_reference_id: string | null;
}

let s: Parlance;
let work: string;
let wav: Buffer;

beforeAll(async () => {
  work = tempDir('parlance-files-audio-');
  [s, wav] = await Promise.all([startParlance(), makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }).then((f) => readFileSync(f))]);
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function form(bytes: Buffer | null, opts: { partFilename?: string; filename?: string; ref?: string } = {}): FormData {
  const fd = new FormData();
  if (bytes) fd.append('file', new Blob([new Uint8Array(bytes)]), opts.partFilename ?? 'tone.wav');
  if (opts.ref !== undefined) fd.append('client_reference_id', opts.ref);
  if (opts.filename !== undefined) fd.append('filename', opts.filename);
  return fd;
}

function upload(bytes: Buffer | null, opts: { partFilename?: string; filename?: string; ref?: string; key?: string } = {}): Promise<Response> {
  return s.request('/v1/files', { method: 'POST', body: form(bytes, opts), key: opts.key });
}

async function uploadOk(bytes: Buffer, opts: { partFilename?: string; filename?: string; ref?: string; key?: string } = {}): Promise<FileRecord> {
  const res = await upload(bytes, opts);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as FileRecord;
}

async function count(key?: string): Promise<{ playground: number; public_api: number; total: number }> {
  const res = await s.request('/v1/files/count', { key });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

const tmpDir = () => path.join(s.dataDir, 'blobs', 'tmp');
const blobPath = (projectId: string, id: string) => path.join(s.dataDir, 'blobs', 'files', projectId, id);
const storedBlobs = (projectId: string) => {
  const dir = path.join(s.dataDir, 'blobs', 'files', projectId);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

/** Raw HTTP exchange with exact control over headers and framing. */
function raw(opts: { headers: Record<string, string>; body: Buffer; chunked?: boolean }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(s.url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: '/v1/files',
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${s.apiKey}`, ...opts.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    if (opts.chunked) {
      // No Content-Length: node frames this as transfer-encoding: chunked.
      req.write(opts.body.subarray(0, 100));
      req.end(opts.body.subarray(100));
    } else {
      req.end(opts.body);
    }
  });
}

function multipartBody(boundary: string, file: Buffer, filename = 'tone.wav'): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: audio/wav\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

/**
 * After a refused upload: no temp file left, no blob added, the count unchanged. A clean-clone run on a loaded machine
 * saw a refused part's temp file just after the answer: its removal is waited for (a file never removed still fails).
 */
async function expectNothingStored(before: { total: number }, blobsBefore: string[]): Promise<void> {
  expect(
    await waitFor(
      async () => readdirSync(tmpDir()),
      (names) => names.length === 0,
      10_000,
      50,
    ),
  ).toEqual([]);
  expect(storedBlobs(s.projectId)).toEqual(blobsBefore);
  expect((await count()).total).toBe(before.total);
}

async function expectRejected(res: Response, status: number, type: string): Promise<Awaited<ReturnType<typeof errorBody>>> {
  expect(res.status).toBe(status);
  const body = await errorBody(res);
  expect(body.error_type).toBe(type);
  return body;
}

describe('POST /v1/files', () => {
  it('stores a real WAV and answers 201 with exactly the File fields', async () => {
    const before = await count();
    const res = await upload(wav, { partFilename: 'meeting.wav' });
    expect(res.status).toBe(201);
    const body = (await res.json()) as FileRecord;
    expect(Object.keys(body).sort()).toEqual(['client_reference_id', 'created_at', 'filename', 'id', 'size']);
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(body.filename).toBe('meeting.wav');
    expect(body.size).toBe(wav.length);
    expect(body.client_reference_id).toBeNull();
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    expect(Math.abs(Date.parse(body.created_at) - Date.now())).toBeLessThan(60_000);
    // The bytes are on disk, byte for byte, and nothing is left in tmp.
    expect(readFileSync(blobPath(s.projectId, body.id)).equals(wav)).toBe(true);
    expect(readdirSync(tmpDir())).toEqual([]);
    expect((await count()).total).toBe(before.total + 1);
  });

  it('uses a custom `filename` part instead of the part filename', async () => {
    const rec = await uploadOk(wav, { partFilename: 'original.wav', filename: 'renamed by caller.wav' });
    expect(rec.filename).toBe('renamed by caller.wav');
    // The custom filename may come before the file part, too.
    const fd = new FormData();
    fd.append('filename', 'first.wav');
    fd.append('file', new Blob([new Uint8Array(wav)]), 'second.wav');
    const res = await s.request('/v1/files', { method: 'POST', body: fd });
    expect(res.status).toBe(201);
    expect(((await res.json()) as FileRecord).filename).toBe('first.wav');
  });

  it('accepts client_reference_id of 256 characters and returns it', async () => {
    const ref = 'r'.repeat(256);
    const rec = await uploadOk(wav, { ref });
    expect(rec.client_reference_id).toBe(ref);
    const got = await s.request(`/v1/files/${rec.id}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as FileRecord).client_reference_id).toBe(ref);
  });

  it('refuses client_reference_id of 257 characters with a validation error, storing nothing', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const body = await expectRejected(await upload(wav, { ref: 'r'.repeat(257) }), 400, 'invalid_request');
    expect(body.validation_errors).toHaveLength(1);
    expect(body.validation_errors[0]!.location).toBe('client_reference_id');
    await expectNothingStored(before, blobs);
  });

  it('accepts a 256-character filename and refuses 257 (custom part and part filename)', async () => {
    const ok = await uploadOk(wav, { filename: `${'f'.repeat(252)}.wav` });
    expect(ok.filename).toHaveLength(256);
    const okPart = await uploadOk(wav, { partFilename: `${'p'.repeat(252)}.wav` });
    expect(okPart.filename).toHaveLength(256);

    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const custom = await expectRejected(await upload(wav, { filename: `${'f'.repeat(253)}.wav` }), 400, 'invalid_request');
    expect(custom.validation_errors.map((v) => v.location)).toEqual(['filename']);
    const part = await expectRejected(await upload(wav, { partFilename: `${'p'.repeat(253)}.wav` }), 400, 'invalid_request');
    expect(part.validation_errors.map((v) => v.location)).toEqual(['filename']);
    await expectNothingStored(before, blobs);
  });

  it('refuses a multipart body without a file part', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const body = await expectRejected(await upload(null, { ref: 'no-file' }), 400, 'invalid_request');
    expect(body.validation_errors.map((v) => v.location)).toEqual(['file']);
    await expectNothingStored(before, blobs);
  });

  it('refuses a file part under another name', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const fd = new FormData();
    fd.append('audio', new Blob([new Uint8Array(wav)]), 'tone.wav');
    await expectRejected(await s.request('/v1/files', { method: 'POST', body: fd }), 400, 'invalid_request');
    await expectNothingStored(before, blobs);
  });

  it('refuses a JSON body', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const res = await s.request('/v1/files', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ file: 'x' }),
    });
    await expectRejected(res, 400, 'invalid_request');
    await expectNothingStored(before, blobs);
  });

  it('refuses a multipart body whose boundary does not match the header, then serves the next request', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const body = multipartBody('the-real-boundary', wav);
    const res = await raw({ headers: { 'content-type': 'multipart/form-data; boundary=another-boundary', 'content-length': String(body.length) }, body });
    expect(res.status).toBe(400);
    expect((JSON.parse(res.body) as { error_type: string }).error_type).toBe('invalid_request');
    await expectNothingStored(before, blobs);
    expect((await uploadOk(wav)).size).toBe(wav.length);
  });

  it('refuses a multipart body cut off in the middle of the file (correct Content-Length), then serves the next request', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const full = multipartBody('cut-boundary', wav);
    const body = full.subarray(0, Math.floor(full.length / 2));
    const res = await raw({ headers: { 'content-type': 'multipart/form-data; boundary=cut-boundary', 'content-length': String(body.length) }, body });
    expect(res.status).toBe(400);
    expect((JSON.parse(res.body) as { error_type: string }).error_type).toBe('invalid_request');
    await expectNothingStored(before, blobs);
    expect((await uploadOk(wav)).size).toBe(wav.length);
  });

  it('refuses a body cut off inside a text field after the file (no closing boundary) instead of dropping the field', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const b = 'field-cut';
    const body = Buffer.concat([
      Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="tone.wav"\r\n\r\n`),
      wav,
      Buffer.from(`\r\n--${b}\r\nContent-Disposition: form-data; name="client_reference_id"\r\n\r\norder-4`),
    ]);
    const res = await raw({ headers: { 'content-type': `multipart/form-data; boundary=${b}`, 'content-length': String(body.length) }, body });
    expect(res.status).toBe(400);
    expect((JSON.parse(res.body) as { error_type: string }).error_type).toBe('invalid_request');
    await expectNothingStored(before, blobs);
  });

  it('accepts a hand-framed body with a quoted boundary and an epilogue', async () => {
    const b = 'quoted:boundary';
    const body = Buffer.concat([multipartBody(b, wav, 'framed.wav'), Buffer.from('epilogue text\r\n')]);
    const res = await raw({ headers: { 'content-type': `multipart/form-data; boundary="${b}"`, 'content-length': String(body.length) }, body });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ filename: 'framed.wav', size: wav.length });
  });

  it('refuses a chunked upload without Content-Length (unknown size)', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const body = multipartBody('chunked-boundary', wav);
    const res = await raw({ headers: { 'content-type': 'multipart/form-data; boundary=chunked-boundary' }, body, chunked: true });
    expect(res.status).toBe(400);
    const err = JSON.parse(res.body) as { error_type: string; message: string };
    expect(err.error_type).toBe('invalid_request');
    expect(err.message).toMatch(/content-length/i);
    await expectNothingStored(before, blobs);
    expect((await uploadOk(wav)).size).toBe(wav.length);
  });

  it('refuses garbage bytes as invalid_audio_file', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    await expectRejected(await upload(randomBytes(20_000), { partFilename: 'noise.mp3' }), 400, 'invalid_audio_file');
    await expectRejected(await upload(Buffer.from('this is plain text, not audio\n'.repeat(300)), { partFilename: 'notes.wav' }), 400, 'invalid_audio_file');
    await expectNothingStored(before, blobs);
  });

  it('refuses an empty file as invalid_audio_file', async () => {
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    await expectRejected(await upload(Buffer.alloc(0), { partFilename: 'empty.wav' }), 400, 'invalid_audio_file');
    await expectNothingStored(before, blobs);
  });

  it('refuses a video without an audio stream as invalid_audio_file', async () => {
    const video = path.join(work, 'video-only.mp4');
    await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '1', '-c:v', 'mpeg4', '-y', video]);
    const before = await count();
    const blobs = storedBlobs(s.projectId);
    const body = await expectRejected(await upload(readFileSync(video), { partFilename: 'video.mp4' }), 400, 'invalid_audio_file');
    expect(body.message).toMatch(/no audio stream/);
    expect(body.message).not.toContain(s.dataDir);
    await expectNothingStored(before, blobs);
  });

  it.each([
    ['mp3', ['-c:a', 'libmp3lame', '-f', 'mp3']],
    ['flac', ['-c:a', 'flac', '-f', 'flac']],
    ['ogg', ['-c:a', 'libopus', '-ar', '48000', '-f', 'ogg']],
    ['m4a', ['-c:a', 'aac', '-f', 'ipod']],
  ])('accepts a real %s file', async (ext, args) => {
    const file = path.join(work, `tone.${ext}`);
    await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', ...args, '-y', file]);
    const bytes = readFileSync(file);
    const rec = await uploadOk(bytes, { partFilename: `tone.${ext}` });
    expect(rec.size).toBe(bytes.length);
    expect(rec.filename).toBe(`tone.${ext}`);
    expect(readFileSync(blobPath(s.projectId, rec.id)).equals(bytes)).toBe(true);
  });
});

describe('GET /v1/files/:id', () => {
  it('returns the stored record', async () => {
    const rec = await uploadOk(wav, { partFilename: 'get-me.wav', ref: 'order-17' });
    const res = await s.request(`/v1/files/${rec.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(rec);
  });

  it('answers 404 file_not_found for an unknown id', async () => {
    const id = randomUUID();
    const body = await expectRejected(await s.request(`/v1/files/${id}`), 404, 'file_not_found');
    expect(body.message).toContain(id);
  });
});

describe('GET /v1/files (list)', () => {
  let key: string;
  let projectId: string;
  const uploaded: FileRecord[] = [];

  beforeAll(async () => {
    // A project of its own, so the list holds exactly the three files uploaded here.
    const p = await s.admin<{ id: string }>('create-project', '--name', 'list-test');
    projectId = p.id;
    key = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    for (const name of ['one.wav', 'two.wav', 'three.wav']) uploaded.push(await uploadOk(wav, { partFilename: name, key }));
  });

  it('lists newest first with next_page_cursor null (present) on the only page', async () => {
    const res = await s.request('/v1/files', { key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { files: FileRecord[]; next_page_cursor: string | null };
    expect(Object.keys(body).sort()).toEqual(['files', 'next_page_cursor']);
    expect(body.next_page_cursor).toBeNull();
    expect(body.files.map((f) => f.filename)).toEqual(['three.wav', 'two.wav', 'one.wav']);
    expect(body.files).toEqual([...uploaded].reverse());
  });

  it('pages with limit=1 through all files once each, ending with next_page_cursor null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const q: string = cursor === null ? '?limit=1' : `?limit=1&cursor=${encodeURIComponent(cursor)}`;
      const res = await s.request(`/v1/files${q}`, { key });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { files: FileRecord[]; next_page_cursor: string | null };
      expect('next_page_cursor' in body).toBe(true);
      expect(body.files).toHaveLength(1);
      seen.push(body.files[0]!.id);
      cursor = body.next_page_cursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(uploaded.map((f) => f.id).reverse());
  });

  it('accepts limit 1 and 1000 and refuses 0, 1001 and a non-number', async () => {
    for (const limit of [1, 1000]) {
      const res = await s.request(`/v1/files?limit=${limit}`, { key });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { files: unknown[] }).files).toHaveLength(Math.min(limit, 3));
    }
    for (const limit of ['0', '1001', 'ten']) {
      const body = await expectRejected(await s.request(`/v1/files?limit=${limit}`, { key }), 400, 'invalid_request');
      expect(body.validation_errors.map((v) => v.location)).toEqual(['limit']);
    }
  });

  it("refuses a tampered cursor and another project's cursor as invalid_cursor", async () => {
    const res = await s.request('/v1/files?limit=1', { key });
    const cursor = ((await res.json()) as { next_page_cursor: string }).next_page_cursor;
    expect(typeof cursor).toBe('string');
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    await expectRejected(await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(tampered)}`, { key }), 400, 'invalid_cursor');
    await expectRejected(await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
  });

  it("keeps projects apart: another project's file reads as not found", async () => {
    await expectRejected(await s.request(`/v1/files/${uploaded[0]!.id}`), 404, 'file_not_found');
    await expectRejected(await s.request(`/v1/files/${uploaded[0]!.id}`, { method: 'DELETE' }), 404, 'file_not_found');
    expect(existsSync(blobPath(projectId, uploaded[0]!.id))).toBe(true);
  });
});

describe('GET /v1/files/count', () => {
  it("splits the count by the uploading key's source", async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'count-test');
    const apiKey = (await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key;
    const playgroundKey = (await s.admin<{ api_key: string }>('create-key', '--project', p.id, '--playground')).api_key;
    expect(await count(apiKey)).toEqual({ playground: 0, public_api: 0, total: 0 });
    await uploadOk(wav, { key: apiKey });
    await uploadOk(wav, { key: apiKey });
    await uploadOk(wav, { key: playgroundKey });
    expect(await count(apiKey)).toEqual({ playground: 1, public_api: 2, total: 3 });
    expect(await count(playgroundKey)).toEqual({ playground: 1, public_api: 2, total: 3 });
  });
});

describe('DELETE /v1/files/:id', () => {
  it('deletes permanently: 204 with no body, bytes gone, then 404 on read and delete', async () => {
    const keep = await uploadOk(wav, { partFilename: 'keep.wav' });
    const doomed = await uploadOk(wav, { partFilename: 'doomed.wav' });
    const before = await count();
    expect(existsSync(blobPath(s.projectId, doomed.id))).toBe(true);

    const res = await s.request(`/v1/files/${doomed.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(existsSync(blobPath(s.projectId, doomed.id))).toBe(false);
    expect((await count()).total).toBe(before.total - 1);

    await expectRejected(await s.request(`/v1/files/${doomed.id}`, { method: 'DELETE' }), 404, 'file_not_found');
    await expectRejected(await s.request(`/v1/files/${doomed.id}`), 404, 'file_not_found');
    const list = (await (await s.request('/v1/files')).json()) as { files: FileRecord[] };
    expect(list.files.map((f) => f.id)).not.toContain(doomed.id);

    // Nothing else went: the neighbour's row and bytes are intact.
    const other = await s.request(`/v1/files/${keep.id}`);
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual(keep);
    expect(readFileSync(blobPath(s.projectId, keep.id)).equals(wav)).toBe(true);
  });

  it('leaves every other stored file in place (rows and blobs agree)', async () => {
    const list = (await (await s.request('/v1/files')).json()) as { files: FileRecord[] };
    expect(list.files.length).toBe((await count()).total);
    expect(storedBlobs(s.projectId)).toEqual(list.files.map((f) => f.id).sort());
  });

  it("answers the SDK's bodyless DELETE with Content-Type: application/json", async () => {
    const rec = await uploadOk(wav);
    const res = await s.request(`/v1/files/${rec.id}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(204);
    expect(existsSync(blobPath(s.projectId, rec.id))).toBe(false);
  });
});
