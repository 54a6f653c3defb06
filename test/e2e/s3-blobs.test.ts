// PARLANCE_BLOB_STORE=s3 through the real HTTP API against a real S3-compatible server (s3rver): uploads, transcriptions
// (of uploads and of audio_url), cloned voices, deletes and large files keep their bytes in the bucket, none under the
// data directory; the store going away answers 500 internal_error without detail and loses nothing stored.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeAudio, makeSpeech, runCli, startParlance, tempDir, transcribeFile, uploadFile, waitFor, type Parlance } from '../harness.js';
import { startS3, type LocalS3 } from '../s3.js';

const PREFIX = 'e2e/';
const ESPEAK = 'parlance-tts-espeak-v1';

let s3: LocalS3;
let s: Parlance;
let work: string;
let speech: string;

beforeAll(async () => {
  work = tempDir('parlance-s3-e2e-');
  s3 = await startS3();
  [s, speech] = await Promise.all([
    startParlance({
      env: {
        ...s3.env(PREFIX),
        PARLANCE_TTS_MODELS: ESPEAK,
        PARLANCE_VOICE_PROFILE_CACHE_DIR: path.join(tmpdir(), 'parlance-test-voice-profiles'),
        PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      },
    }),
    makeSpeech(path.join(work, 'hello.wav'), 'hello world'),
  ]);
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await s3?.close();
  rmSync(work, { recursive: true, force: true });
});

const objects = () => s3.objects(PREFIX);
/** Files under the node's own blob directory other than its (empty) temp dir. */
const localBlobs = () => readdirSync(path.join(s.dataDir, 'blobs'), { recursive: true }).filter((n) => !String(n).startsWith('tmp'));
const tempFiles = () => readdirSync(path.join(s.dataDir, 'blobs', 'tmp'));

describe('with PARLANCE_BLOB_STORE=s3', () => {
  it('an upload is stored in the bucket under the prefix and its delete removes it', async () => {
    const id = await uploadFile(s, speech);
    const key = `${PREFIX}files/${s.projectId}/${id}`;
    expect(objects().get(key)).toBe(readFileSync(speech).length);
    expect(localBlobs()).toEqual([]);
    expect(tempFiles()).toEqual([]);
    const del = await s.request(`/v1/files/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(objects().has(key)).toBe(false);
  });

  it('a transcription of an upload completes from the bucket and leaves no audio copy behind', async () => {
    const transcript = await transcribeFile(s, speech);
    expect(transcript.text.toLowerCase()).toContain('hello');
    // The audio copy is removed right after the job is marked completed, so the client may read the transcript first.
    const copies = async () => [...objects().keys()].filter((k) => k.startsWith(`${PREFIX}transcriptions/`));
    expect(await waitFor(copies, (keys) => keys.length === 0)).toEqual([]);
    expect(tempFiles()).toEqual([]);
  }, 120_000);

  it('a transcription of an audio_url completes', async () => {
    const wav = readFileSync(speech);
    const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await s.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stt-async-v4', audio_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/a.wav` }),
      });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      const done = await waitFor(
        async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string },
        (r) => r.status !== 'queued' && r.status !== 'downloading' && r.status !== 'transcribing',
        120_000,
      );
      expect(done.status).toBe('completed');
      const t = (await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { text: string };
      expect(t.text.toLowerCase()).toContain('hello');
      expect(tempFiles()).toEqual([]);
    } finally {
      server.close();
    }
  }, 120_000);

  it('a large upload (40 MB, several multipart parts) is stored whole', async () => {
    const big = await makeAudio(path.join(work, 'big.wav'), { seconds: 1300 });
    const size = readFileSync(big).length;
    expect(size).toBeGreaterThan(40_000_000);
    const id = await uploadFile(s, big);
    expect(objects().get(`${PREFIX}files/${s.projectId}/${id}`)).toBe(size);
    const rec = (await (await s.request(`/v1/files/${id}`)).json()) as { size: number };
    expect(rec.size).toBe(size);
    // GET .../content streams it back from the bucket, whole or a range (issue 18).
    const whole = await s.request(`/v1/files/${id}/content`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe(String(size));
    expect(Buffer.from(await whole.arrayBuffer()).equals(readFileSync(big))).toBe(true);
    const tail = await s.request(`/v1/files/${id}/content`, { headers: { range: `bytes=${size - 1000}-` } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(`bytes ${size - 1000}-${size - 1}/${size}`);
    expect(Buffer.from(await tail.arrayBuffer()).equals(readFileSync(big).subarray(size - 1000))).toBe(true);
    expect((await s.request(`/v1/files/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(objects().has(`${PREFIX}files/${s.projectId}/${id}`)).toBe(false);
  }, 120_000);

  it('a cloned voice keeps its clip in the bucket, becomes ready, speaks, and its delete removes the clip', async () => {
    const form = new FormData();
    form.append('name', 'bucket voice');
    form.append('file', new Blob([readFileSync(speech)]), 'ref.wav');
    const res = await s.request('/v1/voices', { method: 'POST', body: form });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const key = `${PREFIX}voices/${s.projectId}/${id}`;
    expect(objects().get(key)).toBe(readFileSync(speech).length);
    const voice = await waitFor(
      async () => (await (await s.request(`/v1/voices/${id}`)).json()) as { models: { model: string; status: string }[] },
      (v) => v.models.every((m) => m.status !== 'processing'),
      120_000,
      250,
    );
    expect(voice.models.find((m) => m.model === ESPEAK)?.status).toBe('ready');
    const tts = await s.request('/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: ESPEAK, language: 'en', voice: id, audio_format: 'wav', text: 'Hello from the bucket.' }),
    });
    expect(tts.status).toBe(200);
    expect((await tts.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect((await s.request(`/v1/voices/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(objects().has(key)).toBe(false);
    expect(tempFiles()).toEqual([]);
  }, 150_000);

  it('with the store unreachable, uploads and voices answer 500 internal_error without detail; nothing stored is lost', async () => {
    const kept = await uploadFile(s, speech);
    await s3.stop();
    try {
      const form = new FormData();
      form.set('file', new Blob([readFileSync(speech)]), 'down.wav');
      const res = await s.request('/v1/files', { method: 'POST', body: form });
      expect(res.status).toBe(500);
      const body = await errorBody(res);
      expect(body.error_type).toBe('internal_error');
      expect(body.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|S3RVER|s3|bucket/i);
      const vform = new FormData();
      vform.append('name', 'down voice');
      vform.append('file', new Blob([readFileSync(speech)]), 'ref.wav');
      const vres = await s.request('/v1/voices', { method: 'POST', body: vform });
      expect(vres.status).toBe(500);
      expect((await errorBody(vres)).error_type).toBe('internal_error');
      // Refused uploads left no row and no temp file.
      const list = (await (await s.request('/v1/files')).json()) as { files: { id: string; filename: string }[] };
      expect(list.files.map((f) => f.filename)).not.toContain('down.wav');
      expect((await (await s.request('/v1/voices')).json()) as { voices: unknown[] }).toMatchObject({ voices: [] });
      expect(tempFiles()).toEqual([]);
    } finally {
      await s3.start();
    }
    // The file stored before the outage is still there and transcribes.
    const res = await s.request('/v1/transcriptions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stt-async-v4', file_id: kept }),
    });
    const { id } = (await res.json()) as { id: string };
    const done = await waitFor(
      async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string },
      (r) => ['completed', 'error'].includes(r.status),
      120_000,
    );
    expect(done.status).toBe('completed');
  }, 150_000);
});

describe('deletes while the store is down (issue 17)', () => {
  it('answer 204 at once, keep the removal, and remove the object once the store is back', async () => {
    const fileId = await uploadFile(s, speech);
    const fileKey = `${PREFIX}files/${s.projectId}/${fileId}`;
    const form = new FormData();
    form.append('name', 'outage voice');
    form.append('file', new Blob([readFileSync(speech)]), 'ref.wav');
    const vres = await s.request('/v1/voices', { method: 'POST', body: form });
    expect(vres.status).toBe(201);
    const voiceId = ((await vres.json()) as { id: string }).id;
    const voiceKey = `${PREFIX}voices/${s.projectId}/${voiceId}`;
    expect(objects().has(fileKey) && objects().has(voiceKey)).toBe(true);
    await s3.stop();
    try {
      expect((await s.request(`/v1/files/${fileId}`, { method: 'DELETE' })).status).toBe(204);
      expect((await s.request(`/v1/voices/${voiceId}`, { method: 'DELETE' })).status).toBe(204);
      // Gone from the API at once, although the store still holds the bytes.
      expect((await errorBody(await s.request(`/v1/files/${fileId}`))).error_type).toBe('file_not_found');
      expect((await s.request(`/v1/voices/${voiceId}`)).status).toBe(404);
      expect(objects().has(fileKey)).toBe(true);
      expect(objects().has(voiceKey)).toBe(true);
      // The record is gone for good: deleting again finds nothing.
      expect((await s.request(`/v1/files/${fileId}`, { method: 'DELETE' })).status).toBe(404);
    } finally {
      await s3.start();
    }
    // The sweeper's next retry (backoff from 1 s) removes both; a deadline, not a fixed wait.
    await waitFor(
      async () => objects(),
      (o) => !o.has(fileKey) && !o.has(voiceKey),
      60_000,
      250,
    );
  }, 120_000);
});

describe('parlance serve with an S3 store it cannot use', () => {
  it('stops with one line and exit 2 before creating anything', async () => {
    const dataDir = path.join(work, 'never');
    for (const [env, why] of [
      [{ PARLANCE_S3_BUCKET: 'no-such-bucket' }, 'no such bucket'],
      [{ PARLANCE_S3_ENDPOINT: 'http://127.0.0.1:9' }, 'ECONNREFUSED'],
    ] as const) {
      const r = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { ...s3.env(PREFIX), ...env });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(why);
      expect(r.stderr).toMatch(/^parlance: S3 bucket "[^"]+" at http:\/\/127\.0\.0\.1:\d+ is not usable/);
      expect(r.stderr).not.toContain('S3RVER');
      expect(r.stdout).not.toContain('api_key');
    }
    // No database was created: the first start that succeeds creates the key.
    expect(existsSync(path.join(dataDir, 'parlance.db'))).toBe(false);
  }, 60_000);
});
