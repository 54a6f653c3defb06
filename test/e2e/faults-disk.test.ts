// Fault injection: the data directory's disk fills up under a running server. The data dir is a small tmpfs of its
// own (mounted by the test; CI runs as root), filled to the last byte with a filler file, so every write the server
// makes (blobs, SQLite) meets a real ENOSPC. Uploads, voice creation and speech then fail with 500 internal_error
// and the cause in the log; nothing partial stays; no audio goes out unbilled; once space is back, all works again.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTts } from './tts-helpers.js';
import { errorBody, makeAudio, type Parlance, startParlance, tempDir } from '../harness.js';
import { fillDisk, mountTmpfs, unmount } from '../disk-full.js';

const root = tempDir('parlance-fault-disk-');
const dataDir = path.join(root, 'data');
mkdirSync(dataDir);
const mounted = await mountTmpfs(dataDir, 48);
if (!mounted) console.warn('faults-disk: skipped, this process cannot mount a tmpfs (needs root)');

describe.skipIf(!mounted)('a full disk under a running server', () => {
  let s: Parlance;
  let clip: string;
  const filler = path.join(dataDir, 'filler');

  beforeAll(async () => {
    clip = await makeAudio(path.join(root, 'clip.wav'), { seconds: 2 });
    s = await startParlance({ dataDir, env: { PARLANCE_LOG_LEVEL: 'info' } });
    fillDisk(filler);
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await unmount(dataDir);
    rmSync(root, { recursive: true, force: true });
  });

  const upload = (bytes: Buffer, name = 'clip.wav') => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(bytes)]), name);
    return s.request('/v1/files', { method: 'POST', body: form });
  };
  const speak = (format = 'wav') =>
    s.request('/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tts-rt-v2',
        voice: 'Adrian',
        language: 'en',
        audio_format: format,
        text: 'The disk is full, so this speech cannot be billed.',
      }),
    });
  const tmpLeft = () => readdirSync(path.join(dataDir, 'blobs', 'tmp'));

  it('an upload answers 500 internal_error naming storage, logs the cause, and leaves nothing behind', async () => {
    const res = await upload(readFileSync(clip));
    expect(res.status).toBe(500);
    const body = await errorBody(res);
    expect(body.error_type).toBe('internal_error');
    expect(body.message).toMatch(/could not store the upload/);
    expect(body.message).not.toMatch(/ENOSPC|\/tmp\/|errno/);
    expect(s.stderr()).toMatch(/ENOSPC|no space left/i);
    expect(tmpLeft()).toEqual([]);
  });

  it('creating a cloned voice answers 500 internal_error the same way', async () => {
    const form = new FormData();
    form.set('name', 'Full disk');
    form.set('file', new Blob([readFileSync(clip)]), 'ref.wav');
    const res = await s.request('/v1/voices', { method: 'POST', body: form });
    expect(res.status).toBe(500);
    const body = await errorBody(res);
    expect(body.error_type).toBe('internal_error');
    expect(body.message).toMatch(/could not store the upload/);
    expect(tmpLeft()).toEqual([]);
  });

  it('speech whose usage cannot be recorded fails instead of completing, and the log shows the real cause', async () => {
    const res = await speak();
    // Either the failure came before any audio (500 body) or the response is cut before its end: never a whole 200.
    if (res.status === 200) await expect(res.arrayBuffer()).rejects.toThrow();
    else expect(res.status).toBe(500);
    expect(s.stderr()).toMatch(/tts usage not recorded/);
    expect(s.stderr()).toMatch(/SQLITE_FULL|disk is full/i);
    expect(s.stderr()).not.toMatch(/cannot rollback/);
  });

  it('a WebSocket speech stream whose usage cannot be recorded ends in an internal_error frame, never audio_end', async () => {
    const c = await openTts(s.url);
    try {
      c.send({ api_key: s.apiKey, stream_id: 'full', model: 'tts-rt-v2', voice: 'Adrian', language: 'en', audio_format: 'pcm_s16le' });
      c.send({ stream_id: 'full', text: 'Nothing of this can be billed.', text_end: true });
      const err = await c.next((f) => f.stream_id === 'full' && typeof f.error_type === 'string', 30_000);
      expect(err.error_type).toBe('internal_error');
      await c.next((f) => f.stream_id === 'full' && f.terminated === true);
      expect(c.frames.some((f) => f.audio_end === true)).toBe(false);
    } finally {
      c.close();
    }
  });

  it('the server keeps serving while full, and works again (uploads, metered speech) once space is freed', async () => {
    expect((await s.request('/health')).status).toBe(200);
    expect((await s.request('/v1/files')).status).toBe(200);
    rmSync(filler);
    const res = await upload(readFileSync(clip));
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    expect((await s.request(`/v1/files/${id}`)).status).toBe(200);
    const speech = await speak();
    expect(speech.status).toBe(200);
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    // The one completed request is billed; the failed ones were not delivered whole and are not billed later.
    expect(await waitForTtsUsage(s)).toBe(1);
  });
});

/** Number of usage records once at least one is there (metering is asynchronous to the response's end). */
async function waitForTtsUsage(s: Parlance): Promise<number> {
  const start = new Date(Date.now() - 3600_000).toISOString();
  const end = new Date(Date.now() + 3600_000).toISOString();
  for (let i = 0; i < 50; i++) {
    const res = await s.request(`/v1/usage-logs?start_time=${start}&end_time=${end}`);
    const body = (await res.json()) as { usage_logs: unknown[] };
    const n = body.usage_logs.length;
    if (n > 0) return n;
    await new Promise((r) => setTimeout(r, 100));
  }
  return 0;
}
