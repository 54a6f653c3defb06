// Authentication and authorization over HTTP, black-box: a real server process, keys made with the admin CLI.
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { errorBody, makeAudio, startParlance, tempDir, type Parlance } from '../harness.js';

interface IssuedKey {
  id: string;
  api_key: string;
  key_prefix: string;
}

let s: Parlance;
let audioDir: string;
let wav: Buffer;

beforeAll(async () => {
  audioDir = tempDir('parlance-audio-');
  const [server] = await Promise.all([startParlance(), makeAudio(path.join(audioDir, 'tone.wav'), { seconds: 1 })]);
  s = server;
  wav = readFileSync(path.join(audioDir, 'tone.wav'));
});
afterAll(async () => {
  await s?.stop();
  if (audioDir) rmSync(audioDir, { recursive: true, force: true });
});

async function upload(key: string, name = 'tone.wav'): Promise<{ id: string; filename: string }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), name);
  const res = await s.request('/v1/files', { method: 'POST', body: form, key });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; filename: string };
}

/** Expect a 401 with the exact REST error body. */
async function expect401(res: Response, message?: RegExp): Promise<void> {
  expect(res.status).toBe(401);
  const body = await errorBody(res);
  expect(body.error_type).toBe('unauthenticated');
  expect(body.validation_errors).toEqual([]);
  expect(body.more_info).toBe(`${s.url}/docs/errors#unauthenticated`);
  expect(body.request_id).toBe(res.headers.get('x-request-id'));
  if (message) expect(body.message).toMatch(message);
}

async function expect403(res: Response, message?: RegExp): Promise<void> {
  expect(res.status).toBe(403);
  const body = await errorBody(res);
  expect(body.error_type).toBe('permission_denied');
  expect(body.more_info).toBe(`${s.url}/docs/errors#permission-denied`);
  if (message) expect(body.message).toMatch(message);
}

const createKey = (...args: string[]) => s.admin<IssuedKey>('create-key', '--project', s.projectId, ...args);

describe('authentication', () => {
  it('the bootstrap key works (control for every 401 below)', async () => {
    const res = await s.request('/v1/files/count');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ playground: expect.any(Number), public_api: expect.any(Number), total: expect.any(Number) });
  });

  it('refuses a request without an Authorization header', async () => {
    await expect401(await s.request('/v1/files/count', { key: null }), /missing/i);
    await expect401(await s.request('/v1/files/count', { headers: { authorization: '' } }));
  });

  it('refuses a non-Bearer or malformed Authorization header', async () => {
    const basic = `Basic ${Buffer.from(`user:${s.apiKey}`).toString('base64')}`;
    for (const header of [basic, `Token ${s.apiKey}`, 'Bearer', 'Bearer ', `Bearer ${s.apiKey} extra`, s.apiKey, `Bearer: ${s.apiKey}`])
      await expect401(await s.request('/v1/files/count', { headers: { authorization: header } }), undefined);
  });

  it('accepts the Bearer scheme case-insensitively (RFC 7235)', async () => {
    expect((await s.request('/v1/files/count', { headers: { authorization: `bearer ${s.apiKey}` } })).status).toBe(200);
    expect((await s.request('/v1/files/count', { headers: { authorization: `BEARER ${s.apiKey}` } })).status).toBe(200);
  });

  it('refuses an unknown key, including one that shares the shape of ours', async () => {
    await expect401(await s.request('/v1/files/count', { key: 'not-a-key' }), /invalid/i);
    await expect401(await s.request('/v1/files/count', { key: `prl_${randomUUID().replace(/-/g, '')}` }), /invalid/i);
    // The real key with its last character changed: same lookup prefix, wrong secret.
    const last = s.apiKey.at(-1) === 'A' ? 'B' : 'A';
    await expect401(await s.request('/v1/files/count', { key: s.apiKey.slice(0, -1) + last }), /invalid/i);
  });

  it('refuses a 256-character key as invalid and a 257-character key as over-long', async () => {
    const k256 = `prl_${'a'.repeat(252)}`;
    expect(k256).toHaveLength(256);
    await expect401(await s.request('/v1/files/count', { key: k256 }), /^Invalid API key/);
    await expect401(await s.request('/v1/files/count', { key: `${k256}a` }), /longer than 256/);
    // The bootstrap key padded to 257: still refused for length, not looked up.
    const padded = s.apiKey + 'a'.repeat(257 - s.apiKey.length);
    await expect401(await s.request('/v1/files/count', { key: padded }), /longer than 256/);
  });

  it('revocation through the admin CLI while the server runs takes effect on the next request', async () => {
    const k = await createKey('--name', 'to-revoke');
    expect((await s.request('/v1/files/count', { key: k.api_key })).status).toBe(200);
    const r = await s.admin<{ id: string; revoked: boolean }>('revoke-key', k.id);
    expect(r).toEqual({ id: k.id, revoked: true });
    await expect401(await s.request('/v1/files/count', { key: k.api_key }), /revoked/);
    // Other keys are unaffected.
    expect((await s.request('/v1/files/count')).status).toBe(200);
  });

  it('refuses a key issued for another environment', async () => {
    const k = await createKey('--environment', 'staging');
    await expect401(await s.request('/v1/files/count', { key: k.api_key }), /staging/);
    const prod = await createKey('--environment', 'production');
    expect((await s.request('/v1/files/count', { key: prod.api_key })).status).toBe(200);
  });

  it('refuses a temporary key on a REST endpoint', async () => {
    for (const usage_type of ['transcribe_websocket', 'tts_rt']) {
      const res = await s.request('/v1/auth/temporary-api-key', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ usage_type, expires_in_seconds: 60 }),
      });
      expect(res.status).toBe(201);
      const { api_key } = (await res.json()) as { api_key: string };
      expect(api_key).toMatch(/^temp:/);
      await expect401(await s.request('/v1/files/count', { key: api_key }), /temporary/i);
      await expect401(await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', key: api_key }));
      // A temporary key cannot mint further temporary keys.
      await expect401(
        await s.request('/v1/auth/temporary-api-key', {
          method: 'POST',
          key: api_key,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ usage_type, expires_in_seconds: 60 }),
        }),
      );
    }
  });

  it('guards the automatic HEAD routes like their GET routes', async () => {
    expect((await s.request('/v1/files/count', { method: 'HEAD', key: null })).status).toBe(401);
    expect((await s.request(`/v1/files/${randomUUID()}`, { method: 'HEAD', key: null })).status).toBe(401);
    expect((await s.request('/v1/files/count', { method: 'HEAD' })).status).toBe(200);
    const k = await createKey('--permission', 'stt_rt:write');
    expect((await s.request('/v1/files', { method: 'HEAD', key: k.api_key })).status).toBe(403);
  });

  it('every error for a request that fails authentication is a 401, on every /v1 route and method', async () => {
    const routes: [string, string][] = [
      ['GET', '/v1/files'],
      ['POST', '/v1/files'],
      ['GET', '/v1/files/count'],
      ['GET', `/v1/files/${randomUUID()}`],
      ['DELETE', `/v1/files/${randomUUID()}`],
      ['POST', '/v1/auth/temporary-api-key'],
    ];
    for (const [method, p] of routes) {
      await expect401(await s.request(p, { method, key: null }));
      await expect401(await s.request(p, { method, key: 'prl_bogusbogusbogus', headers: { 'content-type': 'application/json' } }));
    }
  });

  it('refuses a key of a deleted project on every surface, and temporary keys it issued', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'doomed');
    const k = await s.admin<IssuedKey>('create-key', '--project', p.id);
    const temp = await s.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      key: k.api_key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'tts_rt', expires_in_seconds: 600 }),
    });
    expect(temp.status).toBe(201);
    const tempKey = ((await temp.json()) as { api_key: string }).api_key;
    expect((await s.request('/v1/files/count', { key: k.api_key })).status).toBe(200);
    await s.admin('delete-project', p.id);
    await expect401(await s.request('/v1/files/count', { key: k.api_key }), /deleted project/);
    await expect401(await s.request('/v1/organization', { key: k.api_key }), /deleted project/);
    const tts = (key: string) =>
      s.request('/tts', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav', text: 'Hi.' }),
      });
    for (const key of [k.api_key, tempKey]) {
      const res = await tts(key);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error_type: string }).error_type).toBe('unauthenticated');
    }
    // The real-time WebSocket refuses it in its error frame.
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
    const frame = new Promise<Record<string, unknown>>((resolve) => ws.on('message', (d) => resolve(JSON.parse(String(d)) as Record<string, unknown>)));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ api_key: k.api_key, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
    expect(await frame).toMatchObject({ error_type: 'unauthenticated', error_code: 401, tokens: [] });
    ws.close();
  });
});

describe('permissions', () => {
  it('a full key may read and write files (control)', async () => {
    expect((await s.request('/v1/files/count')).status).toBe(200);
    const res = await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect((await errorBody(res)).error_type).toBe('file_not_found');
  });

  it('a read-only key may read but not delete, upload or issue temporary keys', async () => {
    const ro = await createKey('--read-only');
    expect((await s.request('/v1/files/count', { key: ro.api_key })).status).toBe(200);
    expect((await s.request('/v1/files', { key: ro.api_key })).status).toBe(200);
    await expect403(await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', key: ro.api_key }), /files:write/);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(wav)]), 'x.wav');
    await expect403(await s.request('/v1/files', { method: 'POST', body: form, key: ro.api_key }));
    await expect403(
      await s.request('/v1/auth/temporary-api-key', {
        method: 'POST',
        key: ro.api_key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ usage_type: 'transcribe_websocket', expires_in_seconds: 60 }),
      }),
    );
  });

  it('a key with only stt_rt:write cannot read files', async () => {
    const k = await createKey('--permission', 'stt_rt:write');
    await expect403(await s.request('/v1/files/count', { key: k.api_key }), /files:read/);
    await expect403(await s.request('/v1/files', { key: k.api_key }));
    await expect403(await s.request(`/v1/files/${randomUUID()}`, { key: k.api_key }));
  });

  it('a files:read key is refused for writes, a files:write key may do both', async () => {
    const r = await createKey('--permission', 'files:read');
    const w = await createKey('--permission', 'files:write');
    await expect403(await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', key: r.api_key }));
    expect((await s.request('/v1/files/count', { key: w.api_key })).status).toBe(200);
    expect((await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', key: w.api_key })).status).toBe(404);
  });

  it('authentication comes before the permission check: a bad key is 401 even where no key would be allowed', async () => {
    await expect401(await s.request(`/v1/files/${randomUUID()}`, { method: 'DELETE', key: 'prl_bogusbogusbogus' }));
  });
});

describe('project isolation', () => {
  let keyB: string;
  let fileA: { id: string; filename: string };

  beforeAll(async () => {
    const project = await s.admin<{ id: string; name: string }>('create-project', '--name', 'Project B');
    expect(project.id).not.toBe(s.projectId);
    keyB = (await s.admin<IssuedKey>('create-key', '--project', project.id)).api_key;
    fileA = await upload(s.apiKey, 'only-in-a.wav');
  });

  it("another project's file is not found, and cannot be deleted, with that project's key", async () => {
    const get = await s.request(`/v1/files/${fileA.id}`, { key: keyB });
    expect(get.status).toBe(404);
    const body = await errorBody(get);
    expect(body.error_type).toBe('file_not_found');
    const del = await s.request(`/v1/files/${fileA.id}`, { method: 'DELETE', key: keyB });
    expect(del.status).toBe(404);
    expect((await errorBody(del)).error_type).toBe('file_not_found');
  });

  it("another project's file is absent from the list and the count", async () => {
    const list = (await (await s.request('/v1/files', { key: keyB })).json()) as { files: { id: string }[]; next_page_cursor: string | null };
    expect(list.files.map((f) => f.id)).not.toContain(fileA.id);
    expect(list).toEqual({ files: [], next_page_cursor: null });
    expect(await (await s.request('/v1/files/count', { key: keyB })).json()).toEqual({ playground: 0, public_api: 0, total: 0 });
  });

  it('the file is still there for its own project after the other project tried to delete it', async () => {
    const get = await s.request(`/v1/files/${fileA.id}`);
    expect(get.status).toBe(200);
    expect(((await get.json()) as { filename: string }).filename).toBe('only-in-a.wav');
    const list = (await (await s.request('/v1/files')).json()) as { files: { id: string }[] };
    expect(list.files.map((f) => f.id)).toContain(fileA.id);
    const count = (await (await s.request('/v1/files/count')).json()) as { total: number };
    expect(count.total).toBeGreaterThanOrEqual(1);
  });

  it("project B's own upload is visible to B only", async () => {
    const fileB = await upload(keyB, 'only-in-b.wav');
    expect((await s.request(`/v1/files/${fileB.id}`, { key: keyB })).status).toBe(200);
    expect((await s.request(`/v1/files/${fileB.id}`)).status).toBe(404);
    expect(((await (await s.request('/v1/files/count', { key: keyB })).json()) as { total: number }).total).toBe(1);
  });
});
