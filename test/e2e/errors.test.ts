// The REST error surface, black-box: exact bodies, request ids, more_info anchors, routing errors, body
// parsing (bodyless requests with a JSON content type: docs/wire-compat.md, "REST conventions"), list parameters, cursors, and no stack traces.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalog } from '../../src/wire/error-catalog.js';
import { errorBody, makeAudio, startParlance, tempDir, type Parlance } from '../harness.js';

const BODY_LIMIT = 2048;

let s: Parlance;
let audioDir: string;
let wav: Buffer;
let keyB: string;
let readOnlyKey: string;

beforeAll(async () => {
  audioDir = tempDir('parlance-audio-');
  const [server] = await Promise.all([
    startParlance({ env: { PARLANCE_JSON_BODY_LIMIT_BYTES: String(BODY_LIMIT) } }),
    makeAudio(path.join(audioDir, 'tone.wav'), { seconds: 1 }),
  ]);
  s = server;
  wav = readFileSync(path.join(audioDir, 'tone.wav'));
  const project = await s.admin<{ id: string }>('create-project', '--name', 'Other project');
  keyB = (await s.admin<{ api_key: string }>('create-key', '--project', project.id)).api_key;
  readOnlyKey = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--read-only')).api_key;
});
afterAll(async () => {
  await s?.stop();
  if (audioDir) rmSync(audioDir, { recursive: true, force: true });
});

async function upload(key: string, name: string): Promise<{ id: string }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), name);
  const res = await s.request('/v1/files', { method: 'POST', body: form, key });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string };
}

const hyphenated = (type: string) => type.replace(/_/g, '-');

/** Full check of a REST error response: status, exact keys, type, more_info, request id header. */
async function expectError(res: Response, status: number, type: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await errorBody(res);
  expect(body.error_type).toBe(type);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(Array.isArray(body.validation_errors)).toBe(true);
  expect(body.more_info).toBe(`${s.url}/docs/errors#${hyphenated(type)}`);
  expect(body.request_id).toMatch(/\S/);
  expect(res.headers.get('x-request-id')).toBe(body.request_id);
  return body;
}

const json = { 'content-type': 'application/json' };

describe('REST error body', () => {
  it('401: exact shape, no validation errors', async () => {
    const body = await expectError(await s.request('/v1/files', { key: null }), 401, 'unauthenticated');
    expect(body.validation_errors).toEqual([]);
  });

  it('403: exact shape', async () => {
    const body = await expectError(await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', key: readOnlyKey }), 403, 'permission_denied');
    expect(body.validation_errors).toEqual([]);
  });

  it('404: a missing file', async () => {
    await expectError(await s.request(`/v1/files/${randomUUID()}`), 404, 'file_not_found');
  });

  it('400: a NUL character in an id, a query or a JSON field, as in PostgreSQL mode (SQLite would store it)', async () => {
    for (const res of [
      await s.request('/v1/files/%00'),
      await s.request('/v1/files?cursor=a%00'),
      await s.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stt-async-v4', audio_url: 'https://example.com/a.wav', client_reference_id: '\u0000' }),
      }),
    ])
      await expectError(res, 400, 'invalid_request');
  });

  it('404: an unknown route is invalid_request with status 404, with or without a key', async () => {
    // (`/` is the web console.)
    for (const p of ['/v1/nope', '/v2/files', '/nope', '/v1/files/a/b']) await expectError(await s.request(p), 404, 'invalid_request');
    await expectError(await s.request('/v1/nope', { key: null }), 404, 'invalid_request');
  });

  it('405: a known path with another method, with an Allow header listing the real methods', async () => {
    const put = await s.request('/v1/files', { method: 'PUT', headers: json, body: '{}' });
    await expectError(put, 405, 'invalid_request');
    const allow = (put.headers.get('allow') ?? '').split(/\s*,\s*/);
    expect(allow).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(allow).not.toContain('PUT');
    const patch = await s.request(`/v1/files/${randomUUID()}`, { method: 'PATCH' });
    await expectError(patch, 405, 'invalid_request');
    const allowOne = (patch.headers.get('allow') ?? '').split(/\s*,\s*/);
    expect(allowOne).toEqual(expect.arrayContaining(['GET', 'DELETE']));
    expect(allowOne).not.toContain('POST');
    const getTemp = await s.request('/v1/auth/temporary-api-key');
    await expectError(getTemp, 405, 'invalid_request');
    expect(getTemp.headers.get('allow')).toContain('POST');
  });

  it('a 405 never refuses a method its own Allow header lists (trailing-slash paths are unknown, 404)', async () => {
    const cases: [string, string][] = [
      ['GET', '/v1/files/count/'],
      ['POST', '/v1/auth/temporary-api-key/'],
      ['PUT', '/v1/files/count/'],
      ['GET', '/v1/files/count//'],
    ];
    for (const [method, p] of cases) {
      const res = await s.request(p, { method });
      if (res.status === 405) expect((res.headers.get('allow') ?? '').split(/\s*,\s*/), `${method} ${p}`).not.toContain(method);
      expect(res.status, `${method} ${p}`).toBeLessThan(500);
      await errorBody(res);
    }
    await expectError(await s.request('/v1/files/count/'), 404, 'invalid_request');
    await expectError(await s.request('/v1/auth/temporary-api-key/', { method: 'POST', headers: json, body: '{}' }), 404, 'invalid_request');
  });

  it('400: validation failure lists the field in validation_errors', async () => {
    const body = await expectError(await s.request('/v1/files?limit=0'), 400, 'invalid_request');
    expect(body.validation_errors).toHaveLength(1);
    expect(Object.keys(body.validation_errors[0]!).sort()).toEqual(['error_type', 'location', 'message']);
  });

  it('request_id is unique per request and equals the x-request-id header, on success too', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const res = await s.request('/v1/files', { key: null });
      const body = await errorBody(res);
      expect(res.headers.get('x-request-id')).toBe(body.request_id);
      ids.add(body.request_id);
    }
    const ok = await Promise.all(Array.from({ length: 10 }, () => s.request('/v1/files/count')));
    for (const r of ok) {
      expect(r.status).toBe(200);
      ids.add(r.headers.get('x-request-id') ?? '');
    }
    expect(ids.size).toBe(20);
  });

  it('a client-sent x-request-id does not become the request id (ids stay unique)', async () => {
    const a = await s.request('/v1/files', { key: null, headers: { 'x-request-id': 'mine' } });
    const b = await s.request('/v1/files', { key: null, headers: { 'x-request-id': 'mine' } });
    const ea = await errorBody(a);
    const eb = await errorBody(b);
    expect(ea.request_id).not.toBe(eb.request_id);
  });

  it('/docs/errors has an anchor for every error type in the catalog, and every more_info link resolves to one', async () => {
    const res = await s.request('/docs/errors', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    const ids = new Set([...html.matchAll(/id="([^"]+)"/g)].map((m) => m[1]));
    for (const type of Object.keys(errorCatalog)) expect(ids.has(hyphenated(type)), type).toBe(true);
    const body = await errorBody(await s.request('/v1/files', { key: null }));
    expect(ids.has(new URL(body.more_info).hash.slice(1))).toBe(true);
  });

  it("the catalog has every error_type of the spec, with the spec's status", () => {
    const spec: Record<string, number> = {
      invalid_request: 400,
      invalid_cursor: 400,
      model_not_available: 400,
      max_concurrent_streams_reached: 400,
      invalid_stream_state: 400,
      invalid_audio_file: 400,
      unauthenticated: 401,
      permission_denied: 403,
      temp_api_key_session_expired: 403,
      organization_balance_exhausted: 402,
      organization_monthly_budget_exhausted: 402,
      project_monthly_budget_exhausted: 402,
      file_not_found: 404,
      transcription_not_found: 404,
      voice_not_found: 404,
      request_timeout: 408,
      voice_name_conflict: 409,
      voice_not_prepared: 409,
      transcription_invalid_state: 409,
      max_duration_reached: 413,
      max_audio_duration_reached: 413,
      limit_exceeded: 429,
      internal_error: 500,
      voice_not_ready: 503,
      voice_failed: 503,
    };
    const catalog = errorCatalog as Record<string, { status: number }>;
    for (const [type, status] of Object.entries(spec)) expect(catalog[type]?.status, type).toBe(status);
    for (const type of ['file_download_blocked', 'file_download_failed', 'transcription_output_too_long', 'voice_audio_too_long', 'voice_invalid_audio'])
      expect(catalog[type], type).toBeDefined();
    // Enrolled speakers (ours; the spec names the endpoints only).
    const speakers = {
      speaker_not_found: 404,
      speaker_sample_not_found: 404,
      speaker_name_conflict: 409,
      speaker_not_ready: 409,
      speaker_audio_too_short: 400,
      speaker_invalid_audio: 400,
    };
    for (const [type, status] of Object.entries(speakers)) expect(catalog[type]?.status, type).toBe(status);
  });
});

describe('request bodies', () => {
  const TEMP = '/v1/auth/temporary-api-key';

  it('malformed JSON is 400 invalid_request', async () => {
    for (const body of ['{', '{"usage_type":', "{'a':1}", '{"a":1}}', 'undefined'])
      await expectError(await s.request(TEMP, { method: 'POST', headers: json, body }), 400, 'invalid_request');
  });

  it('DELETE with Content-Type: application/json and no body works as the SDK sends it (wire-compat: bodyless JSON requests)', async () => {
    const res = await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', headers: json });
    await expectError(res, 404, 'file_not_found');
    const { id } = await upload(s.apiKey, 'to-delete.wav');
    const del = await s.request(`/v1/files/${id}`, { method: 'DELETE', headers: json });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await s.request(`/v1/files/${id}`, { headers: json })).status).toBe(404);
  });

  it('GET with Content-Type: application/json and no body works (wire-compat: bodyless JSON requests)', async () => {
    const list = await s.request('/v1/files', { headers: json });
    expect(list.status).toBe(200);
    expect(await list.json()).toHaveProperty('next_page_cursor');
    expect((await s.request('/v1/files/count', { headers: json })).status).toBe(200);
  });

  it(`a JSON body of exactly PARLANCE_JSON_BODY_LIMIT_BYTES (${BODY_LIMIT}) is accepted, one byte more is 400 invalid_request`, async () => {
    const base = JSON.stringify({ usage_type: 'tts_rt', expires_in_seconds: 60 });
    const atLimit = base.slice(0, -1) + ' '.repeat(BODY_LIMIT - base.length) + '}';
    expect(Buffer.byteLength(atLimit)).toBe(BODY_LIMIT);
    const ok = await s.request(TEMP, { method: 'POST', headers: json, body: atLimit });
    expect(ok.status, await ok.clone().text()).toBe(201);
    const over = `${atLimit} `;
    const body = await expectError(await s.request(TEMP, { method: 'POST', headers: json, body: over }), 400, 'invalid_request');
    expect(body.message).toMatch(/too large/i);
    await expectError(await s.request(TEMP, { method: 'POST', headers: json, body: 'x'.repeat(100_000) }), 400, 'invalid_request');
  });

  it('the JSON body limit does not apply to multipart uploads', async () => {
    expect(wav.length).toBeGreaterThan(BODY_LIMIT * 4);
    await upload(s.apiKey, 'bigger-than-json-limit.wav');
  });
});

describe('list parameters', () => {
  it('limit 0, 1001, -1, 1.5, abc and an empty value are 400 with location "limit"', async () => {
    for (const v of ['0', '1001', '-1', '1.5', 'abc', '']) {
      const body = await expectError(await s.request(`/v1/files?limit=${v}`), 400, 'invalid_request');
      expect(
        body.validation_errors.map((e) => e.location),
        `limit=${v}`,
      ).toEqual(['limit']);
    }
  });

  it('limit 1 and 1000 are accepted', async () => {
    for (const v of ['1', '1000']) {
      const res = await s.request(`/v1/files?limit=${v}`);
      expect(res.status, `limit=${v}`).toBe(200);
    }
  });

  describe('cursors', () => {
    let cursorA: string;
    let cursorB: string;
    let filesA: string[];

    beforeAll(async () => {
      const p1 = await upload(s.apiKey, 'page-1.wav');
      const p2 = await upload(s.apiKey, 'page-2.wav');
      await upload(keyB, 'b-1.wav');
      await upload(keyB, 'b-2.wav');
      filesA = [p1.id, p2.id];
      const a = (await (await s.request('/v1/files?limit=1')).json()) as { files: { id: string }[]; next_page_cursor: string | null };
      const b = (await (await s.request('/v1/files?limit=1', { key: keyB })).json()) as { next_page_cursor: string | null };
      expect(a.files).toHaveLength(1);
      expect(a.next_page_cursor).not.toBeNull();
      expect(b.next_page_cursor).not.toBeNull();
      cursorA = a.next_page_cursor!;
      cursorB = b.next_page_cursor!;
    });

    it('a real cursor pages through every file once, ending with next_page_cursor null', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 20; i++) {
        const qs: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const res = await s.request(`/v1/files?limit=1${qs}`);
        expect(res.status).toBe(200);
        const page = (await res.json()) as { files: { id: string }[]; next_page_cursor: string | null };
        seen.push(...page.files.map((f) => f.id));
        cursor = page.next_page_cursor;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expect.arrayContaining(filesA));
      const all = (await (await s.request('/v1/files')).json()) as { files: { id: string }[] };
      expect(seen).toEqual(all.files.map((f) => f.id));
    });

    it('a cursor with one character changed is 400 invalid_cursor', async () => {
      const positions = [0, Math.floor(cursorA.length / 2), cursorA.length - 1];
      for (const i of positions) {
        const c = cursorA[i] === 'A' ? 'B' : 'A';
        const tampered = cursorA.slice(0, i) + c + cursorA.slice(i + 1);
        await expectError(await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(tampered)}`), 400, 'invalid_cursor');
      }
      // Control: the untouched cursor works.
      expect((await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(cursorA)}`)).status).toBe(200);
    });

    it('a garbage cursor is 400 invalid_cursor', async () => {
      for (const c of ['garbage', 'a.b', '.', '....', 'eyJ9.', '%00', '12345'])
        await expectError(await s.request(`/v1/files?cursor=${encodeURIComponent(c)}`), 400, 'invalid_cursor');
    });

    // Every cursor list: an empty cursor (`?cursor=`, as the official example clients send on their first page)
    // is the first page, the same as no cursor; a garbage one is still 400 invalid_cursor.
    describe.each([
      { list: 'files', path: '/v1/files?limit=1' },
      { list: 'transcriptions', path: '/v1/transcriptions?limit=1' },
      { list: 'cloned voices', path: '/v1/voices?limit=1' },
      { list: 'enrolled speakers', path: '/v1/speakers?limit=1' },
      { list: 'usage logs', path: '/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z&limit=1' },
      { list: 'usage logs, newest first', path: '/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z&limit=1&sort=end_time_desc' },
      { list: 'tts voices', path: '/v1/tts-voices?model=parlance-tts-espeak-v1&limit=1' },
    ])('$list', ({ path: listPath }) => {
      it('?cursor= (empty) gives the first page, exactly as no cursor does', async () => {
        const plain = await s.request(listPath);
        expect(plain.status, await plain.clone().text()).toBe(200);
        const empty = await s.request(`${listPath}&cursor=`);
        expect(empty.status, await empty.clone().text()).toBe(200);
        expect(await empty.json()).toEqual(await plain.json());
      });

      it('a garbage cursor is 400 invalid_cursor', async () => {
        await expectError(await s.request(`${listPath}&cursor=garbage`), 400, 'invalid_cursor');
      });
    });

    it("another project's cursor is 400 invalid_cursor", async () => {
      expect((await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(cursorB)}`, { key: keyB })).status).toBe(200);
      await expectError(await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(cursorB)}`), 400, 'invalid_cursor');
      await expectError(await s.request(`/v1/files?limit=1&cursor=${encodeURIComponent(cursorA)}`, { key: keyB }), 400, 'invalid_cursor');
    });
  });
});

describe('no internals leak', () => {
  it('answers a request the HTTP parser rejects with the REST error body', async () => {
    const { hostname, port } = new URL(s.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(port), hostname, () => sock.write('GET /v1/files HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n'));
      let data = '';
      sock.setEncoding('utf8').on('data', (d: string) => (data += d));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    const parsed = JSON.parse(body!) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['error_type', 'message', 'more_info', 'request_id', 'status_code', 'validation_errors']);
    expect(parsed).toMatchObject({ status_code: 400, error_type: 'invalid_request', validation_errors: [] });
    expect(head).toContain(`x-request-id: ${String(parsed.request_id)}`);
    // The server still serves the next request.
    expect((await s.request('/health', { key: null })).status).toBe(200);
  });

  const stackLike = /\n\s+at |\bat [^\s]+ \(|\.(js|ts|mjs):\d+|node:internal|node_modules/;

  const hostile: { name: string; send: () => Promise<Response> }[] = [
    { name: 'bad percent-encoding in the path', send: () => s.request('/v1/files/%E0%A4%A') },
    { name: 'path parameter over the router limit', send: () => s.request(`/v1/files/${'a'.repeat(300)}`) },
    { name: 'bad percent-encoding in the query', send: () => s.request('/v1/files?cursor=%E0%A4%A') },
    { name: 'repeated limit', send: () => s.request('/v1/files?limit=1&limit=2') },
    { name: 'bracket query', send: () => s.request('/v1/files?limit[$gt]=1') },
    { name: 'cursor of 5000 chars', send: () => s.request(`/v1/files?cursor=${'a'.repeat(5000)}`) },
    { name: 'SQL in a path id', send: () => s.request(`/v1/files/${encodeURIComponent("' OR 1=1 --")}`) },
    { name: '__proto__ JSON', send: () => s.request('/v1/auth/temporary-api-key', { method: 'POST', headers: json, body: '{"__proto__":{"admin":true}}' }) },
    {
      name: 'constructor JSON',
      send: () => s.request('/v1/auth/temporary-api-key', { method: 'POST', headers: json, body: '{"constructor":{"prototype":{"x":1}}}' }),
    },
    {
      name: 'deeply nested JSON',
      send: () => s.request('/v1/auth/temporary-api-key', { method: 'POST', headers: json, body: '['.repeat(1000) + ']'.repeat(1000) }),
    },
    { name: 'XML body', send: () => s.request('/v1/auth/temporary-api-key', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' }) },
    {
      name: 'multipart without boundary',
      send: () => s.request('/v1/files', { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' }),
    },
    {
      name: 'truncated multipart',
      send: () =>
        s.request('/v1/files', {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
          body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nabc',
        }),
    },
    { name: 'JSON body to the upload endpoint', send: () => s.request('/v1/files', { method: 'POST', headers: json, body: '{}' }) },
    {
      name: 'non-audio upload',
      send: async () => {
        const form = new FormData();
        form.append('file', new Blob(['this is not audio']), 'notes.wav');
        return s.request('/v1/files', { method: 'POST', body: form });
      },
    },
    { name: 'huge Authorization header', send: () => s.request('/v1/files', { headers: { authorization: `Bearer ${'x'.repeat(8000)}` } }) },
    { name: 'non-ASCII byte in a key', send: () => s.request('/v1/files', { headers: { authorization: 'Bearer prl_abcdefgh\u00e9ijk' } }) },
    { name: 'key of only the prefix', send: () => s.request('/v1/files', { headers: { authorization: 'Bearer prl_' } }) },
  ];

  for (const h of hostile) {
    it(`${h.name}: never a 5xx or a stack trace; errors carry the REST body`, async () => {
      const res = await h.send();
      const text = await res.clone().text();
      expect(res.status, text).toBeLessThan(500);
      expect(text).not.toMatch(stackLike);
      if (res.status < 400) return;
      const body = await errorBody(res);
      expect(res.headers.get('x-request-id')).toBe(body.request_id);
      expect(body.more_info).toBe(`${s.url}/docs/errors#${hyphenated(body.error_type)}`);
    });
  }

  it('of those, the ones that must be refused are refused', async () => {
    const refused = hostile.filter((h) => !['bracket query'].includes(h.name));
    for (const h of refused) expect((await h.send()).status, h.name).toBeGreaterThanOrEqual(400);
  });

  it('the bad-URL and over-long-parameter cases are 400 invalid_request (not 414 or a framework body)', async () => {
    await expectError(await s.request('/v1/files/%E0%A4%A'), 400, 'invalid_request');
    await expectError(await s.request(`/v1/files/${'a'.repeat(300)}`), 400, 'invalid_request');
  });
});
