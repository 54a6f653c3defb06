// A cluster on one machine, as on several: PostgreSQL with the pg-boss queue, Redis counters, blobs in a real
// S3-compatible server; 2 API nodes and 2 worker nodes, each with its own data directory. Work spread across the API
// nodes; limits hold cluster-wide; a worker killed with -9 mid-job leaves the job to the other; an API node killed
// leaves clients the other one, with nothing stored lost.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPgDatabase,
  errorBody,
  logLines,
  makeSpeech,
  REDIS_TEST_URL,
  startParlance,
  streamRealtime,
  tempDir,
  uploadFile,
  waitFor,
  type Parlance,
} from '../harness.js';
import { startS3, type LocalS3 } from '../s3.js';
import { expectRefused, holdStt, type Session } from './stt-helpers.js';

const SENTENCE = 'the quick brown fox jumps over the lazy dog';
const PREFIX = 'cluster/';
/** Four server processes and their models on a small shared machine: starts can take a while. */
const START_MS = 90_000;
const TTS_BODY = { model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav', text: 'Hello from the cluster.' };

let work: string;
let s3: LocalS3;
let db: { url: string; drop(): Promise<void> };
let env: Record<string, string>;
let api: Parlance[] = [];
let workers: Parlance[] = [];
const extra: Parlance[] = [];
const sessions: Session[] = [];
let speech: string;
let longSpeech: string;
let pcm: Buffer;

beforeAll(async () => {
  work = tempDir('parlance-multi-node-');
  [s3, db] = await Promise.all([startS3(), createPgDatabase()]);
  env = {
    ...s3.env(PREFIX),
    DATABASE_URL: db.url,
    REDIS_URL: REDIS_TEST_URL,
    PARLANCE_JOB_QUEUE: 'pg-boss',
    // Short enough to notice a killed worker soon, long enough that a busy machine's renewals keep up.
    PARLANCE_JOB_LEASE_SECONDS: '5',
    PARLANCE_RATE_MODELS_PROJECT_PER_MIN: '4',
    PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '2',
    PARLANCE_CONCURRENCY_LEASE_SECONDS: '3',
    PARLANCE_CONCURRENCY_SAMPLE_SECONDS: '0.5',
  };
  // The first API node creates the schema and the first key; the others join the same database.
  const [first, wav, long, raw] = await Promise.all([
    startParlance({ env: { ...env, PARLANCE_ROLE: 'api' }, startTimeoutMs: START_MS }),
    makeSpeech(path.join(work, 'fox.wav'), SENTENCE, { padSeconds: 1 }),
    makeSpeech(path.join(work, 'long.wav'), Array.from({ length: 6 }, () => `${SENTENCE}.`).join(' ')),
    makeSpeech(path.join(work, 'fox.pcm'), SENTENCE, { padSeconds: 1.5, format: 's16le' }),
  ]);
  [speech, longSpeech, pcm] = [wav, long, readFileSync(raw)];
  // One at a time: each start is CPU-bound for seconds, and parallel starts on a small machine only queue.
  const role = (r: string) =>
    startParlance({ env: { ...env, PARLANCE_ROLE: r, ...(r === 'worker' ? { PARLANCE_LOG_LEVEL: 'info' } : {}) }, startTimeoutMs: START_MS });
  api = [first, await role('api')];
  workers = [await role('worker'), await role('worker')];
}, 400_000);

afterAll(async () => {
  for (const x of sessions) x.stop();
  await Promise.all([...api, ...workers, ...extra].map((n) => n.stop()));
  await db?.drop();
  await s3?.close();
  for (const n of [...api, ...workers]) rmSync(n.dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const json = <T>(res: Response) => res.json() as Promise<T>;
const tmpOf = (n: Parlance) => readdirSync(path.join(n.dataDir, 'blobs', 'tmp'));

async function createTranscription(n: Parlance, fileId: string): Promise<string> {
  const res = await n.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'stt-async-v4', file_id: fileId }),
  });
  expect(res.status).toBe(201);
  return (await json<{ id: string }>(res)).id;
}

const statusOf = async (n: Parlance, id: string) => json<{ status: string; error_type: string | null }>(await n.request(`/v1/transcriptions/${id}`));

async function transcriptOf(n: Parlance, id: string, timeoutMs = 240_000): Promise<string> {
  const rec = await waitFor(
    () => statusOf(n, id),
    (r) => ['completed', 'error', 'failed'].includes(r.status),
    timeoutMs,
    250,
  );
  expect(rec).toMatchObject({ status: 'completed' });
  return (await json<{ text: string }>(await n.request(`/v1/transcriptions/${id}/transcript`))).text.toLowerCase();
}

/** The project's live real-time sessions, as a node counts them (across the cluster, in Redis). */
const liveSessions = async (n: Parlance) =>
  (await json<{ project: { current: { transcribe_concurrent: number } } }>(await n.request('/v1/concurrency-limits'))).project.current.transcribe_concurrent;

const tts = (n: Parlance, key?: string) =>
  n.request('/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(TTS_BODY), key });

const words = (frames: Awaited<ReturnType<typeof streamRealtime>>) =>
  frames
    .flatMap((f) => f.tokens.filter((t) => t.is_final).map((t) => t.text))
    .join('')
    .toLowerCase();

describe('2 API nodes and 2 workers on PostgreSQL, pg-boss, Redis and S3', () => {
  it('serves concurrent uploads, transcriptions, TTS and real-time sessions spread over both API nodes', async () => {
    const fileIds = await Promise.all([0, 1, 2, 3].map((i) => uploadFile(api[i % 2]!, speech, `fox-${i}.wav`)));
    // Each upload is in the bucket and listed by both nodes; no node keeps it on its own disk.
    for (const id of fileIds) expect(s3.objects(PREFIX).get(`${PREFIX}files/${api[0]!.projectId}/${id}`)).toBe(readFileSync(speech).length);
    for (const n of api)
      expect((await json<{ files: { id: string }[] }>(await n.request('/v1/files?limit=100'))).files.map((f) => f.id).sort()).toEqual([...fileIds].sort());
    // A file uploaded through one node is transcribed through the other, while TTS and live sessions run on both.
    const ids = await Promise.all(fileIds.slice(0, 2).map((f, i) => createTranscription(api[(i + 1) % 2]!, f)));
    const [texts, speeches, live] = await Promise.all([
      Promise.all(ids.map((id, i) => transcriptOf(api[i % 2]!, id))),
      Promise.all(api.map((n) => tts(n))),
      Promise.all(api.map((n) => streamRealtime(n, pcm))),
    ]);
    for (const t of texts) expect(t).toContain('fox');
    for (const res of speeches) {
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).toString('ascii', 0, 4)).toBe('RIFF');
    }
    for (const frames of live) {
      expect(frames.filter((f) => f.error_type)).toEqual([]);
      expect(words(frames)).toContain('fox');
    }
    // The jobs' audio copies were removed from the bucket; no node holds a temp file.
    expect([...s3.objects(`${PREFIX}transcriptions/`).keys()]).toEqual([]);
    for (const n of [...api, ...workers]) expect(tmpOf(n)).toEqual([]);
  }, 300_000);

  it('holds rate limits, concurrency caps and single-use temporary keys across the API nodes', async () => {
    // 4 requests per minute for the project, counted in Redis: two through each node, then both refuse.
    for (let i = 0; i < 4; i++) expect((await api[i % 2]!.request('/v1/models')).status).toBe(200);
    for (const n of api) {
      const res = await n.request('/v1/models');
      expect(res.status).toBe(429);
      expect((await errorBody(res)).error_type).toBe('limit_exceeded');
    }
    // 2 live sessions for the project: one on each node, and a third is refused on either.
    sessions.push(await holdStt(api[0]!.url, api[0]!.apiKey), await holdStt(api[1]!.url, api[1]!.apiKey));
    for (const n of api)
      await waitFor(
        () => liveSessions(n),
        (c) => c === 2,
        30_000,
      );
    for (const n of api) await expectRefused(await holdStt(n.url, n.apiKey), /limit exceeded for the project \(2\)/);
    for (const x of sessions.splice(0)) x.stop();
    // A single-use key presented to both nodes at once is accepted by exactly one.
    const minted = await api[0]!.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'tts_rt', expires_in_seconds: 60, single_use: true }),
    });
    const { api_key: once } = await json<{ api_key: string }>(minted);
    const both = await Promise.all(api.map((n) => tts(n, once)));
    expect(both.map((r) => r.status).sort()).toEqual([200, 401]);
    await Promise.all(both.map((r) => r.arrayBuffer()));
  }, 120_000);

  it('a worker killed with -9 mid-job: the job completes on the other worker', async () => {
    const fileId = await uploadFile(api[0]!, longSpeech);
    const id = await createTranscription(api[1]!, fileId);
    // The worker transcribing holds a local copy of the audio in its temp dir while it decodes.
    await waitFor(
      async () => ({ status: (await statusOf(api[0]!, id)).status, holders: workers.filter((w) => tmpOf(w).length > 0) }),
      (r) => r.status === 'transcribing' && r.holders.length === 1,
      120_000,
      50,
    );
    const victim = workers.find((w) => tmpOf(w).length > 0)!;
    const survivor = workers.find((w) => w !== victim)!;
    await victim.kill9();
    expect((await statusOf(api[0]!, id)).status).toBe('transcribing');
    expect(await transcriptOf(api[1]!, id)).toContain('fox');
    const completedBy = (w: Parlance) => logLines(w).some((l) => l.msg === 'transcription completed' && l.id === id);
    // Logged just after the record is stored.
    await waitFor(async () => completedBy(survivor), Boolean, 10_000);
    expect(completedBy(victim)).toBe(false);
    // Restarted on its data dir, the killed worker drops the copy it left behind.
    const again = await startParlance({ dataDir: victim.dataDir, env: { ...env, PARLANCE_ROLE: 'worker' }, startTimeoutMs: START_MS });
    extra.push(again);
    expect(tmpOf(again)).toEqual([]);
  }, 360_000);

  it('an API node killed: clients carry on through the other and nothing stored is lost', async () => {
    const [a, b] = api as [Parlance, Parlance];
    const fileId = await uploadFile(a, speech, 'before-the-crash.wav');
    const id = await createTranscription(a, fileId);
    const live = await holdStt(a.url, a.apiKey);
    sessions.push(live);
    await waitFor(
      () => liveSessions(b),
      (c) => c === 1,
      30_000,
    );
    await a.kill9();
    // The live session drops without a close frame; the client reconnects to the other node.
    expect(await live.closed).toBe(1006);
    const frames = await streamRealtime(b, pcm);
    expect(frames.filter((f) => f.error_type)).toEqual([]);
    expect(words(frames)).toContain('fox');
    // What the dead node acknowledged is all there: the file, its bytes, and the transcription it accepted.
    const files = (await json<{ files: { id: string; filename: string }[] }>(await b.request('/v1/files?limit=100'))).files;
    expect(files.find((f) => f.id === fileId)?.filename).toBe('before-the-crash.wav');
    expect(await transcriptOf(b, id)).toContain('fox');
    expect(await transcriptOf(b, await createTranscription(b, fileId))).toContain('fox');
  }, 360_000);
});
