// Conformance with the official Node SDK (@soniox/node) for files (docs/wire-compat.md, "REST conventions").
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SonioxHttpError, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudio, startParlance, tempDir, type Parlance } from '../harness.js';

let s: Parlance;
let work: string;
let wav: Buffer;
let client: SonioxNodeClient;

const sdk = (api_key: string) => new SonioxNodeClient({ api_key, base_url: s.url, tts_api_url: s.url });

beforeAll(async () => {
  work = tempDir('parlance-sdk-audio-');
  [s, wav] = await Promise.all([startParlance(), makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }).then((f) => readFileSync(f))]);
  client = sdk(s.apiKey);
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('@soniox/node files API against Parlance', () => {
  it('files.upload(buffer, {filename, client_reference_id}) echoes the File', async () => {
    const file = await client.files.upload(wav, { filename: 'meeting.wav', client_reference_id: 'order-1' });
    expect(file.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(file.filename).toBe('meeting.wav');
    expect(file.size).toBe(wav.length);
    expect(file.client_reference_id).toBe('order-1');
    expect(Number.isNaN(Date.parse(file.created_at))).toBe(false);
    expect(existsSync(path.join(s.dataDir, 'blobs', 'files', s.projectId, file.id))).toBe(true);
  });

  it('uploads a Blob and a Uint8Array too', async () => {
    const fromBlob = await client.files.upload(new Blob([new Uint8Array(wav)]), { filename: 'blob.wav' });
    expect(fromBlob.size).toBe(wav.length);
    const fromBytes = await client.files.upload(new Uint8Array(wav));
    expect(fromBytes.size).toBe(wav.length);
    expect(fromBytes.filename).toBe('file'); // the SDK's default part filename
  });

  it('files.get(id) returns the file; an unknown id gives null', async () => {
    const up = await client.files.upload(wav, { filename: 'get.wav', client_reference_id: 'ref-get' });
    const got = await client.files.get(up.id);
    expect(got).not.toBeNull();
    expect(got!.toJSON()).toEqual(up.toJSON());
    expect(await client.files.get(randomUUID())).toBeNull();
  });

  it('list({limit: 1}) iterated with for-await yields every file once and terminates', async () => {
    const p = await s.admin<{ id: string }>('create-project', '--name', 'sdk-list');
    const listClient = sdk((await s.admin<{ api_key: string }>('create-key', '--project', p.id)).api_key);
    const uploaded: string[] = [];
    for (const name of ['1.wav', '2.wav', '3.wav']) uploaded.push((await listClient.files.upload(wav, { filename: name })).id);

    const result = await listClient.files.list({ limit: 1 });
    expect(result.files).toHaveLength(1);
    expect(result.isPaged()).toBe(true);
    const seen: string[] = [];
    for await (const f of result) {
      seen.push(f.id);
      if (seen.length > 10) break; // a missing next_page_cursor would loop forever
    }
    expect(seen).toEqual([...uploaded].reverse());

    const all = await listClient.files.list();
    expect(all.isPaged()).toBe(false);
    expect(all.next_page_cursor).toBeNull();
    expect(all.files.map((f) => f.filename)).toEqual(['3.wav', '2.wav', '1.wav']);
  });

  it('files.count() returns {playground, public_api, total}', async () => {
    const before = await client.files.count();
    expect(Object.keys(before).sort()).toEqual(['playground', 'public_api', 'total']);
    expect(before.total).toBe(before.playground + before.public_api);
    await client.files.upload(wav);
    const after = await client.files.count();
    expect(after).toEqual({ playground: before.playground, public_api: before.public_api + 1, total: before.total + 1 });
  });

  it('files.delete(id) twice (404 swallowed), then files.get gives null', async () => {
    const up = await client.files.upload(wav, { filename: 'delete-me.wav' });
    await client.files.delete(up.id);
    expect(existsSync(path.join(s.dataDir, 'blobs', 'files', s.projectId, up.id))).toBe(false);
    await expect(client.files.delete(up.id)).resolves.toBeUndefined();
    expect(await client.files.get(up.id)).toBeNull();
    // The SonioxFile helper deletes too.
    const other = await client.files.upload(wav);
    await other.delete();
    expect(await client.files.get(other.id)).toBeNull();
  });

  it('a bad API key makes the SDK throw SonioxHttpError with statusCode 401', async () => {
    const bad = sdk('prl_this_key_does_not_exist');
    const err = await bad.files.count().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SonioxHttpError);
    expect((err as SonioxHttpError).statusCode).toBe(401);
    expect((err as SonioxHttpError).code).toBe('http_error');
    expect(JSON.parse((err as SonioxHttpError).bodyText!)).toMatchObject({ error_type: 'unauthenticated', status_code: 401 });
    const upErr = await bad.files.upload(wav).catch((e: unknown) => e);
    expect((upErr as SonioxHttpError).statusCode).toBe(401);
    // get() swallows only 404: a 401 still throws.
    await expect(bad.files.get(randomUUID())).rejects.toMatchObject({ statusCode: 401 });
  });

  it('an invalid upload surfaces as a 400 SonioxHttpError', async () => {
    const err = await client.files.upload(Buffer.from('not audio at all'.repeat(100)), { filename: 'x.wav' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SonioxHttpError);
    expect((err as SonioxHttpError).statusCode).toBe(400);
    expect(JSON.parse((err as SonioxHttpError).bodyText!)).toMatchObject({ error_type: 'invalid_audio_file' });
  });
});
