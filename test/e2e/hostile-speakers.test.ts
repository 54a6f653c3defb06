// A hostile probe of the enrolled speakers endpoints (/v1/speakers): malformed and oversized bodies, text that cannot
// be stored as sent, broken multipart enrolment audio, and another project's key reaching for this project's
// speakers, samples and files. Every refusal is the REST error body with the spec's type; nothing is changed by it, and
// the server keeps serving. The table of what was tried is docs/guide/security.md.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeSpeech, type Parlance, startParlance, streamRealtime, tempDir, uploadFile } from '../harness.js';

interface Speaker {
  id: string;
  name: string;
  num_samples: number;
}

const json = { 'content-type': 'application/json' };
let s: Parlance;
let work: string;
let keyB: string;
let alice: Speaker;
let sampleId: string;
let fileA: string;
let wav: string;

async function expectError(res: Response, status: number, type: string, location?: string) {
  expect(res.status).toBe(status);
  const body = await errorBody(res);
  expect(body.error_type).toBe(type);
  if (location !== undefined) expect(body.validation_errors.map((v) => v.location)).toContain(location);
  // No internals in the answer: paths, SQL, stack frames.
  expect(JSON.stringify(body)).not.toMatch(/\/tmp\/|\/work\/|SELECT|INSERT|sqlite|at .+\.js:\d+/i);
  return body;
}

const post = (p: string, body: string | FormData, key?: string) =>
  s.request(p, { method: 'POST', headers: typeof body === 'string' ? json : {}, body, ...(key ? { key } : {}) });

beforeAll(async () => {
  work = tempDir('parlance-hostile-speakers-');
  [s, wav] = await Promise.all([startParlance(), makeSpeech(path.join(work, 'alice.wav'), 'My voice is my passport.')]);
  const project = await s.admin<{ id: string }>('create-project', '--name', 'Project B');
  keyB = (await s.admin<{ api_key: string }>('create-key', '--project', project.id)).api_key;
  alice = (await (await post('/v1/speakers', JSON.stringify({ name: 'Alice', metadata: { team: 'a' } }))).json()) as Speaker;
  fileA = await uploadFile(s, wav);
  const sample = await post(`/v1/speakers/${alice.id}/audio`, JSON.stringify({ file_id: fileA }));
  expect(sample.status).toBe(201);
  sampleId = ((await sample.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('malformed speaker bodies', () => {
  it('bad JSON, a body of the wrong type, wrong field types and an unknown content type are invalid_request', async () => {
    await expectError(await post('/v1/speakers', '{"name":'), 400, 'invalid_request', 'body');
    await expectError(await post('/v1/speakers', '["Alice"]'), 400, 'invalid_request', 'body');
    await expectError(await post('/v1/speakers', '"Alice"'), 400, 'invalid_request', 'body');
    await expectError(await post('/v1/speakers', JSON.stringify({ name: 42 })), 400, 'invalid_request', 'name');
    await expectError(await post('/v1/speakers', JSON.stringify({ name: 'n', metadata: [1, 2] })), 400, 'invalid_request', 'metadata');
    await expectError(await post('/v1/speakers', JSON.stringify({ name: 'n', project_id: 'other', admin: true })), 400, 'invalid_request', 'project_id');
    const octet = await s.request('/v1/speakers', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0, 255, 1]) });
    await expectError(octet, 400, 'invalid_request');
  });

  it('oversized: a long name, 5 KB of metadata, metadata nested 2,000 deep, a 2 MB body', async () => {
    await expectError(await post('/v1/speakers', JSON.stringify({ name: 'x'.repeat(129) })), 400, 'invalid_request', 'name');
    await expectError(await post('/v1/speakers', JSON.stringify({ name: 'n', metadata: { a: 'y'.repeat(5000) } })), 400, 'invalid_request', 'metadata');
    const deep = `{"name":"deep","metadata":${'{"a":'.repeat(2000)}1${'}'.repeat(2001)}`;
    await expectError(await post('/v1/speakers', deep), 400, 'invalid_request', 'metadata');
    await expectError(await post('/v1/speakers', JSON.stringify({ name: 'n', metadata: { a: 'z'.repeat(2_000_000) } })), 400, 'invalid_request');
  });

  // Found by this probe: "\ud800" in a name was answered as sent (201) but stored as U+FFFD (or bytes that read back
  // as it), so the record read later differed from the answer, and two such names collided.
  it('text that cannot be stored as sent (a lone surrogate, NUL) is refused, in values and in keys', async () => {
    await expectError(await post('/v1/speakers', '{"name":"\\ud800 Mallory"}'), 400, 'invalid_request', 'name');
    await expectError(await post('/v1/speakers', '{"name":"Mallory \\udc00"}'), 400, 'invalid_request', 'name');
    await expectError(await post('/v1/speakers', '{"name":"M","metadata":{"\\ud83d":1}}'), 400, 'invalid_request', 'metadata');
    await expectError(await post('/v1/speakers', '{"name":"a\\u0000b"}'), 400, 'invalid_request', 'name');
    // A well-formed pair (an emoji) is fine.
    const ok = await post('/v1/speakers', '{"name":"Mallory \\ud83d\\ude00"}');
    expect(ok.status).toBe(201);
    const created = (await ok.json()) as Speaker;
    expect(created.name).toBe('Mallory 😀');
    expect(((await (await s.request(`/v1/speakers/${created.id}`)).json()) as Speaker).name).toBe('Mallory 😀');
    const names = ((await (await s.request('/v1/speakers')).json()) as { speakers: Speaker[] }).speakers.map((x) => x.name);
    expect(names.sort()).toEqual(['Alice', 'Mallory 😀']);
  });
});

describe('malformed enrolment audio', () => {
  const raw = (body: Buffer, boundary = 'XB') =>
    s.request(`/v1/speakers/${alice.id}/audio`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: new Uint8Array(body),
    });

  it('a multipart body without its boundary, cut off, or with two files is invalid_request; nothing is added', async () => {
    await expectError(await raw(Buffer.from('garbage'), 'nope'), 400, 'invalid_request');
    const head = Buffer.from('--XB\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n');
    await expectError(await raw(Buffer.concat([head, Buffer.alloc(2000, 1)])), 400, 'invalid_request');
    const two = new FormData();
    two.append('file', new Blob([Buffer.alloc(100)]), 'a.wav');
    two.append('file', new Blob([Buffer.alloc(100)]), 'b.wav');
    await expectError(await post(`/v1/speakers/${alice.id}/audio`, two), 400, 'invalid_request');
    await expectError(await post(`/v1/speakers/${alice.id}/audio`, JSON.stringify({ file_id: 12 })), 400, 'invalid_request', 'file_id');
    await expectError(await post(`/v1/speakers/${alice.id}/audio`, JSON.stringify({ file_id: 'x'.repeat(10_000) })), 404, 'file_not_found');
    expect(((await (await s.request(`/v1/speakers/${alice.id}`)).json()) as Speaker).num_samples).toBe(1);
  });
});

describe("another project's key", () => {
  it("finds none of this project's speakers or samples: 404, never 403 or data", async () => {
    for (const [method, p] of [
      ['GET', `/v1/speakers/${alice.id}`],
      ['DELETE', `/v1/speakers/${alice.id}`],
      ['GET', `/v1/speakers/${alice.id}/audio`],
      ['GET', `/v1/speakers/${alice.id}/audio/${sampleId}`],
      ['DELETE', `/v1/speakers/${alice.id}/audio/${sampleId}`],
    ] as const)
      await expectError(await s.request(p, { method, key: keyB }), 404, 'speaker_not_found');
    const form = new FormData();
    form.set('file', new Blob([Buffer.alloc(1000)]), 'x.wav');
    await expectError(await post(`/v1/speakers/${alice.id}/audio`, form, keyB), 404, 'speaker_not_found');
    expect(await (await s.request('/v1/speakers', { key: keyB })).json()).toEqual({ speakers: [], next_page_cursor: null });
  });

  it("cannot reach this project's samples through its own speaker, nor enrol this project's files", async () => {
    const bob = (await (await post('/v1/speakers', JSON.stringify({ name: 'Bob' }), keyB)).json()) as Speaker;
    await expectError(await s.request(`/v1/speakers/${bob.id}/audio/${sampleId}`, { key: keyB }), 404, 'speaker_sample_not_found');
    await expectError(await s.request(`/v1/speakers/${bob.id}/audio/${sampleId}`, { method: 'DELETE', key: keyB }), 404, 'speaker_sample_not_found');
    await expectError(await post(`/v1/speakers/${bob.id}/audio`, JSON.stringify({ file_id: fileA }), keyB), 404, 'file_not_found');
    expect(((await (await s.request(`/v1/speakers/${bob.id}`, { key: keyB })).json()) as Speaker).num_samples).toBe(0);
  });

  it("cannot name this project's speaker in a transcription or a real-time session", async () => {
    const form = new FormData();
    form.set('file', new Blob([readFileSync(wav)]), 'b.wav');
    const fileB = ((await (await post('/v1/files', form, keyB)).json()) as { id: string }).id;
    const body = JSON.stringify({ model: 'stt-async-v4', file_id: fileB, enable_speaker_diarization: true, speakers: [alice.id] });
    await expectError(await post('/v1/transcriptions', body, keyB), 404, 'speaker_not_found');
    const frames = await streamRealtime({ ...s, apiKey: keyB }, Buffer.alloc(3200), { enable_speaker_diarization: true, speakers: [alice.id] });
    expect(frames.at(-1)).toMatchObject({ error_type: 'speaker_not_found', error_code: 404 });
  });

  it("left this project's speaker, its sample and its file as they were; the server still serves", async () => {
    const a = (await (await s.request(`/v1/speakers/${alice.id}`)).json()) as Speaker;
    expect(a).toMatchObject({ name: 'Alice', num_samples: 1 });
    expect((await s.request(`/v1/speakers/${alice.id}/audio/${sampleId}`)).status).toBe(200);
    expect((await s.request(`/v1/files/${fileA}`)).status).toBe(200);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });
});
