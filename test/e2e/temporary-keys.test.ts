// POST /v1/auth/temporary-api-key against a real server: the spec's field table, its boundaries and the
// permission rules. Using the keys on WebSocket/TTS is covered in src/modules/auth/service.test.ts until
// those endpoints exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startParlance, type Parlance } from '../harness.js';

let s: Parlance;
beforeAll(async () => {
  s = await startParlance();
});
afterAll(async () => s?.stop());

const PATH = '/v1/auth/temporary-api-key';

function create(body: unknown, opts: { key?: string | null; headers?: Record<string, string> } = {}): Promise<Response> {
  return s.request(PATH, {
    method: 'POST',
    key: opts.key,
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const valid = { usage_type: 'transcribe_websocket', expires_in_seconds: 60 };

async function expectCreated(res: Response): Promise<{ api_key: string; expires_at: string }> {
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const body = JSON.parse(text) as { api_key: string; expires_at: string };
  expect(Object.keys(body).sort()).toEqual(['api_key', 'expires_at']);
  expect(body.api_key).toMatch(/^temp:[A-Za-z0-9_-]+$/);
  expect(body.api_key.length).toBeLessThanOrEqual(256);
  return body;
}

/** 400 invalid_request whose validation_errors name exactly `locations` (in any order). */
async function expectInvalid(res: Response, locations: string[]): Promise<void> {
  expect(res.status).toBe(400);
  const body = await errorBody(res);
  expect(body.error_type).toBe('invalid_request');
  expect(body.more_info).toBe(`${s.url}/docs/errors#invalid-request`);
  expect(body.validation_errors.map((v) => v.location).sort()).toEqual([...locations].sort());
  for (const v of body.validation_errors) {
    expect(typeof v.error_type).toBe('string');
    expect(v.message.length).toBeGreaterThan(0);
  }
}

async function expectDenied(res: Response, message?: RegExp): Promise<void> {
  expect(res.status).toBe(403);
  const body = await errorBody(res);
  expect(body.error_type).toBe('permission_denied');
  if (message) expect(body.message).toMatch(message);
}

describe('POST /v1/auth/temporary-api-key: success', () => {
  it('returns 201 {api_key, expires_at} with expires_at = now + expires_in_seconds', async () => {
    const before = Date.now();
    const body = await expectCreated(await create({ usage_type: 'transcribe_websocket', expires_in_seconds: 300 }));
    const after = Date.now();
    const at = Date.parse(body.expires_at);
    expect(body.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    // The server stamps "now" between our send and receive; allow 1 s of rounding either way.
    expect(at).toBeGreaterThanOrEqual(before + 300_000 - 1000);
    expect(at).toBeLessThanOrEqual(after + 300_000 + 1000);
  });

  it('issues a distinct key each time', async () => {
    const a = await expectCreated(await create(valid));
    const b = await expectCreated(await create(valid));
    expect(a.api_key).not.toBe(b.api_key);
  });

  it('accepts every optional field together (the SDK example)', async () => {
    await expectCreated(
      await create({ usage_type: 'tts_rt', expires_in_seconds: 300, client_reference_id: 'u-1', single_use: true, max_session_duration_seconds: 600 }),
    );
  });
});

describe('POST /v1/auth/temporary-api-key: field rules', () => {
  it('expires_in_seconds: 1 and 3600 accepted; 0, 3601, -1, 1.5, null and missing refused', async () => {
    await expectCreated(await create({ ...valid, expires_in_seconds: 1 }));
    const long = await expectCreated(await create({ ...valid, expires_in_seconds: 3600 }));
    expect(Date.parse(long.expires_at) - Date.now()).toBeGreaterThan(3590_000);
    for (const bad of [0, 3601, -1, 1.5, 1e9]) await expectInvalid(await create({ ...valid, expires_in_seconds: bad }), ['expires_in_seconds']);
    await expectInvalid(await create({ usage_type: 'tts_rt' }), ['expires_in_seconds']);
    await expectInvalid(await create({ ...valid, expires_in_seconds: null }), ['expires_in_seconds']);
  });

  it('max_session_duration_seconds: 1 and 18000 accepted; 0, 18001 and 2.5 refused', async () => {
    await expectCreated(await create({ ...valid, max_session_duration_seconds: 1 }));
    await expectCreated(await create({ ...valid, max_session_duration_seconds: 18000 }));
    for (const bad of [0, 18001, 2.5, -5]) await expectInvalid(await create({ ...valid, max_session_duration_seconds: bad }), ['max_session_duration_seconds']);
  });

  it('client_reference_id: 256 characters accepted, 257 refused; it need not be unique', async () => {
    const ref = 'r'.repeat(256);
    await expectCreated(await create({ ...valid, client_reference_id: ref }));
    await expectCreated(await create({ ...valid, client_reference_id: ref }));
    await expectInvalid(await create({ ...valid, client_reference_id: `${ref}r` }), ['client_reference_id']);
  });

  it('usage_type: missing or unknown refused', async () => {
    await expectInvalid(await create({ expires_in_seconds: 60 }), ['usage_type']);
    for (const bad of ['transcribe_async', 'TTS_RT', '', 'stt_rt', 1])
      await expectInvalid(await create({ usage_type: bad, expires_in_seconds: 60 }), ['usage_type']);
  });

  it('single_use must be a boolean', async () => {
    await expectCreated(await create({ ...valid, single_use: false }));
    await expectInvalid(await create({ ...valid, single_use: 'yes' }), ['single_use']);
  });

  it('reports every bad field at once', async () => {
    await expectInvalid(
      await create({ usage_type: 'nope', expires_in_seconds: 0, max_session_duration_seconds: 99999, client_reference_id: 'x'.repeat(300) }),
      ['usage_type', 'expires_in_seconds', 'max_session_duration_seconds', 'client_reference_id'],
    );
  });

  it('refuses an empty object with both required fields named', async () => {
    await expectInvalid(await create({}), ['usage_type', 'expires_in_seconds']);
  });

  it('a missing body is 400 invalid_request, not 500: JSON content-type with no body', async () => {
    await expectInvalid(await s.request(PATH, { method: 'POST', headers: { 'content-type': 'application/json' } }), ['usage_type', 'expires_in_seconds']);
    await expectInvalid(await s.request(PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' }), [
      'usage_type',
      'expires_in_seconds',
    ]);
  });

  it('a missing body is 400 invalid_request, not 500: no content-type at all', async () => {
    await expectInvalid(await s.request(PATH, { method: 'POST' }), ['usage_type', 'expires_in_seconds']);
  });

  it('a JSON body that is not an object is 400 invalid_request', async () => {
    for (const body of ['null', '[]', '"x"', '42', 'true']) {
      const res = await create(body);
      expect(res.status, body).toBe(400);
      expect((await errorBody(res)).error_type).toBe('invalid_request');
    }
  });

  it('malformed JSON and a non-JSON content type are 400 invalid_request', async () => {
    const bad = await create('{"usage_type": "tts_rt",');
    expect(bad.status).toBe(400);
    expect((await errorBody(bad)).error_type).toBe('invalid_request');
    const text = await s.request(PATH, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(valid) });
    expect(text.status).toBe(400);
    expect((await errorBody(text)).error_type).toBe('invalid_request');
  });
});

describe('POST /v1/auth/temporary-api-key: authentication and permissions', () => {
  const key = async (...perm: string[]) =>
    (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, ...(perm.length ? ['--permission', ...perm] : []))).api_key;

  it('needs a key', async () => {
    const res = await create(valid, { key: null });
    expect(res.status).toBe(401);
    expect((await errorBody(res)).error_type).toBe('unauthenticated');
  });

  it('authenticates before validating: a bad key with a bad body is 401, not 400', async () => {
    const res = await create({ usage_type: 'nope' }, { key: 'prl_wrongwrongwrong' });
    expect(res.status).toBe(401);
  });

  it('refuses a key lacking temporary_api_keys:write (403)', async () => {
    const k = await key('stt_rt:write', 'tts_rt:write', 'temporary_api_keys:read');
    await expectDenied(await create(valid, { key: k }), /temporary_api_keys:write/);
    await expectDenied(await create({ ...valid, usage_type: 'tts_rt' }, { key: k }));
  });

  it('needs the permission of the service in usage_type: tts_rt refused without tts_rt:write, transcribe_websocket allowed with stt_rt:write', async () => {
    const k = await key('temporary_api_keys:write', 'stt_rt:write');
    await expectDenied(await create({ ...valid, usage_type: 'tts_rt' }, { key: k }), /tts_rt:write/);
    await expectCreated(await create({ ...valid, usage_type: 'transcribe_websocket' }, { key: k }));
  });

  it('and the mirror case: transcribe_websocket refused without stt_rt:write', async () => {
    const k = await key('temporary_api_keys:write', 'tts_rt:write');
    await expectDenied(await create({ ...valid, usage_type: 'transcribe_websocket' }, { key: k }), /stt_rt:write/);
    await expectCreated(await create({ ...valid, usage_type: 'tts_rt' }, { key: k }));
  });

  it('refuses a read-only key (403)', async () => {
    const ro = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--read-only')).api_key;
    await expectDenied(await create(valid, { key: ro }));
  });
});
