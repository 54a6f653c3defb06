// kill -9 during downloading and during transcribing: a restarted server on the same data dir finishes
// every job (none stuck), and no uploaded file is lost.
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';

const work = tempDir('parlance-durability-');
const dataDir = tempDir('parlance-durability-data-');
const ENV = { PARLANCE_JOB_LEASE_SECONDS: '2', PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1' };
let longWav: string;
let slow: { url: string; release(): void; close(): Promise<void> };

interface Rec {
  id: string;
  status: string;
  error_type: string | null;
}

beforeAll(async () => {
  longWav = await makeSpeech(path.join(work, 'long.wav'), Array.from({ length: 10 }, () => 'the quick brown fox jumps over the lazy dog.').join(' '));
  // Serves the audio slowly until released, so a job can be caught in `downloading`.
  const body = readFileSync(longWav);
  let released = false;
  const waiting: (() => void)[] = [];
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': body.length });
    res.write(body.subarray(0, 1024));
    const finish = () => res.end(body.subarray(1024));
    if (released) finish();
    else waiting.push(finish);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  slow = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/long.wav`,
    release: () => {
      released = true;
      for (const f of waiting.splice(0)) f();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
});
afterAll(async () => {
  await slow?.close();
  rmSync(work, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

describe('crash recovery', () => {
  let first: Parlance | undefined;
  let second: Parlance | undefined;
  afterAll(async () => {
    await first?.kill9();
    await second?.stop();
  });

  it('finishes jobs caught downloading and transcribing by a kill -9, and keeps uploads', async () => {
    first = await startParlance({ dataDir, env: ENV });
    const form = new FormData();
    form.set('file', new Blob([readFileSync(longWav)]), 'long.wav');
    const upload = (await (await first.request('/v1/files', { method: 'POST', body: form })).json()) as { id: string; size: number };
    const post = (body: object) =>
      first!.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const transcribing = (await (await post({ model: 'parlance-async-en-v1', file_id: upload.id })).json()) as Rec;
    const downloading = (await (await post({ model: 'parlance-async-en-v1', audio_url: slow.url })).json()) as Rec;
    const get = (s: Parlance, id: string) => s.request(`/v1/transcriptions/${id}`).then((r) => r.json() as Promise<Rec>);
    await waitFor(
      () => get(first!, transcribing.id),
      (r) => r.status === 'transcribing',
      30_000,
      20,
    );
    await waitFor(
      () => get(first!, downloading.id),
      (r) => r.status === 'downloading',
      30_000,
      20,
    );

    await first.kill9();
    slow.release();
    second = await startParlance({ dataDir, env: ENV });
    for (const id of [transcribing.id, downloading.id]) {
      const r = await waitFor(
        () => get(second!, id),
        (x) => x.status === 'completed' || x.status === 'failed',
        120_000,
      );
      expect(r, id).toMatchObject({ status: 'completed', error_type: null });
      const t = await second.request(`/v1/transcriptions/${id}/transcript`);
      expect(t.status).toBe(200);
      expect(((await t.json()) as { text: string }).text.length).toBeGreaterThan(10);
    }
    // The upload survived the crash, bytes and all.
    const file = (await (await second.request(`/v1/files/${upload.id}`)).json()) as { id: string; size: number };
    expect(file).toMatchObject({ id: upload.id, size: upload.size });
    expect(existsSync(path.join(dataDir, 'blobs', 'files', second.projectId, upload.id))).toBe(true);
  }, 180_000);
});
