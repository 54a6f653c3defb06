// Fault injection on async jobs, black-box: real server processes, real child processes killed with SIGKILL, real
// webhook receivers that hang, a real disk filling up. Every scenario ends with the job completed (billed once) or
// failed with a worded message (not billed), nothing stuck, and the server still serving.
//
// - ffmpeg killed mid-decode: the job runs again (the audio is not at fault) and completes, billed once; killed on
//   every attempt, it fails with internal_error after the queue's three attempts.
// - An engine process killed mid-job: the second ffmpeg decode that feeds speaker diarization (it runs after
//   recognition, so it is reachable by waiting for the job's second decoder). The apertium translation process is
//   not reachable mid-job from outside: a transcript's translation is one write to an already loaded process that
//   answers within milliseconds. What is reachable is its loaded spare dying while idle (the next job starts a fresh
//   one) and, below, its process group dying with the spawner.
// - The spawner process (src/lib/spawner) killed: idle, later uploads, transcriptions and speech start a new one;
//   mid-job, its ffmpeg and apertium children are killed with it (no orphans) and the job runs again.
// - Webhook receivers that never answer, answer after the timeout, answer 503, or hang once: the transcript is
//   readable at once, attempts time out and are retried up to the maximum, the record keeps the last status code,
//   other jobs' webhooks go out meanwhile, and a shutdown does not wait for a hung receiver (the delivery is given
//   back and made after the restart).
// - The upload's audio check (ffprobe, then an ffmpeg decode of its first seconds) killed mid-check: the server's
//   failure, not the file's: 500 internal_error in words, nothing of the upload kept, the cause in the log; the same
//   file uploads once the checker is back. The server runs with wrapper scripts named ffprobe and ffmpeg first on its
//   PATH that hold the check while the test says so, so it is killed while running, not before or after.
// - The data directory's disk filling while a transcription decodes (a tmpfs, as in faults-disk: needs root): the
//   job cannot record anything while full, stays unfinished and unbilled, and once space is back it completes,
//   billed once; the upload is intact and new jobs work.
//
// Processes are found as descendants of the server: /proc/<pid>/stat ppid links (the spawner is the server's
// child, every ffmpeg and synthesizer the spawner's).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, logLines, makeAudio, makeSpeech, startParlance, tempDir, uploadFile, waitFor, type Parlance } from '../harness.js';
import { canMountTmpfs, fillDisk, mountTmpfs, unmount } from '../disk-full.js';

const SENTENCE = 'the quick brown fox jumps over the lazy dog';
let work: string;
/** Two sentences, then a minute of silence: recognition is cheap, each ffmpeg decode of it lives a while. */
let paddedWav: string;
/** The sentence once. */
let foxWav: string;
/** One second of tone: a transcription that completes at once (no speech). */
let toneWav: string;
/** The tone as FLAC: its upload is checked by ffprobe and ffmpeg (a plain WAV is checked in-process). */
let toneFlac: string;

beforeAll(async () => {
  work = tempDir('parlance-fault-jobs-');
  [paddedWav, foxWav, toneWav, toneFlac] = await Promise.all([
    makeSpeech(path.join(work, 'padded.wav'), `${SENTENCE}. ${SENTENCE}.`, { padSeconds: 60 }),
    makeSpeech(path.join(work, 'fox.wav'), SENTENCE),
    makeAudio(path.join(work, 'tone.wav'), { seconds: 1 }),
    makeAudio(path.join(work, 'tone.flac'), { seconds: 1 }),
  ]);
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

// ---- processes ---------------------------------------------------------------------------------------------------

interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  comm: string;
  args: string[];
}

/** Every process, from /proc. */
function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid, pgrp] = stat.slice(close + 2).split(' ');
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(name), ppid: Number(ppid), pgrp: Number(pgrp), state: state!, comm: stat.slice(stat.indexOf('(') + 1, close), args });
    } catch {
      // Exited meanwhile.
    }
  }
  return out;
}

/** The live (not zombie) descendants of `root`. */
function descendants(root: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  let frontier = new Set([root]);
  while (frontier.size > 0) {
    const next = all.filter((p) => frontier.has(p.ppid));
    found.push(...next);
    frontier = new Set(next.map((p) => p.pid));
  }
  return found.filter((p) => p.state !== 'Z');
}

const alive = (pid: number) => processes().some((p) => p.pid === pid && p.state !== 'Z');
const spawnerOf = (s: Parlance) => descendants(s.pid).find((p) => p.ppid === s.pid && p.args.some((a) => a.endsWith('spawner-process.js')));
/** The ffmpeg processes decoding transcription `id` (its audio path holds the id). */
const decodersOf = (s: Parlance, id: string) => descendants(s.pid).filter((p) => p.comm === 'ffmpeg' && p.args.some((a) => a.includes(id)));
/** The loaded apertium processes (group leaders: `sh -c 'cat | apertium ...'`). */
const apertiumOf = (s: Parlance) => descendants(s.pid).filter((p) => p.comm === 'sh' && p.args.includes('apertium') && p.pgrp === p.pid);

function kill9(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** Poll fast (every 10 ms) for the first process `find` returns. */
async function processFound(find: () => Proc | undefined, timeoutMs = 120_000): Promise<Proc> {
  return (await waitFor(
    async () => find(),
    (p) => p !== undefined,
    timeoutMs,
    10,
  ))!;
}

// ---- jobs --------------------------------------------------------------------------------------------------------

interface Rec {
  id: string;
  status: string;
  error_type: string | null;
  error_message: string | null;
  webhook_status_code: number | null;
  audio_duration_ms: number;
}
interface Tok {
  text: string;
  speaker?: string;
  translation_status?: string;
}

async function create(s: Parlance, body: Record<string, unknown>): Promise<string> {
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'stt-async-v4', ...body }),
  });
  if (res.status !== 201) throw new Error(`create transcription: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}
const get = async (s: Parlance, id: string) => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as Rec;
// `failed` in the spec profile, `error` in the SDK one.
const terminal = (r: Rec) => ['completed', 'failed', 'error'].includes(r.status);
// Generous: the machine may be busy with other work; a job that ends does so long before.
const finished = (s: Parlance, id: string, timeoutMs = 120_000) => waitFor(() => get(s, id), terminal, timeoutMs, 100);
async function transcript(s: Parlance, id: string): Promise<{ text: string; tokens: Tok[] }> {
  const res = await s.request(`/v1/transcriptions/${id}/transcript`);
  expect(res.status).toBe(200);
  return (await res.json()) as { text: string; tokens: Tok[] };
}

/** Usage records of transcriptions created with `clientReferenceId`. */
async function usageOf(s: Parlance, clientReferenceId: string): Promise<{ input_audio_duration_ms: number }[]> {
  const start = new Date(Date.now() - 3600_000).toISOString();
  const end = new Date(Date.now() + 3600_000).toISOString();
  const res = await s.request(`/v1/usage-logs?start_time=${start}&end_time=${end}&limit=1000`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { usage_logs: { client_reference_id: string | null; input_audio_duration_ms: number }[] };
  return body.usage_logs.filter((u) => u.client_reference_id === clientReferenceId);
}

const interruptedRuns = (s: Parlance, id: string) => logLines(s).filter((l) => l.id === id && String(l.msg).startsWith('transcription interrupted')).length;

/** What a client may read: words, no heap addresses, paths, signals or process names. */
function expectWorded(message: string | null): void {
  expect(message).toMatch(/^[A-Z].{10,}/);
  expect(message).not.toMatch(/0x[0-9a-f]{4,}|\/|SIG[A-Z]+|ffmpeg|errno|E[A-Z]{3,}/);
}

async function expectServing(s: Parlance): Promise<void> {
  expect((await s.request('/health')).status).toBe(200);
  expect((await s.request('/v1/transcriptions')).status).toBe(200);
}

// ---- decoders, engines and the spawner -------------------------------------------------------------------------

describe('processes dying under async jobs', () => {
  let s: Parlance;
  let paddedId: string;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_STT_WORKERS: '1' } });
    paddedId = await uploadFile(s, paddedWav);
  });
  afterAll(async () => s?.stop());

  it('ffmpeg killed mid-decode: the job runs again and completes, billed once', async () => {
    const id = await create(s, { file_id: paddedId, client_reference_id: 'ffmpeg-once' });
    const ffmpeg = await processFound(() => decodersOf(s, id)[0]);
    kill9(ffmpeg.pid);
    const rec = await finished(s, id);
    expect(rec).toMatchObject({ status: 'completed', error_type: null });
    expect((await transcript(s, id)).text).toMatch(/fox/i);
    expect(interruptedRuns(s, id)).toBe(1);
    const usage = await usageOf(s, 'ffmpeg-once');
    expect(usage).toHaveLength(1);
    expect(usage[0]!.input_audio_duration_ms).toBe(rec.audio_duration_ms);
    await expectServing(s);
  }, 180_000);

  it('ffmpeg killed on every attempt: the job fails with a worded message after three attempts, not billed', async () => {
    const id = await create(s, { file_id: paddedId, client_reference_id: 'ffmpeg-always' });
    const killed = new Set<number>();
    const rec = await waitFor(
      async () => {
        for (const p of decodersOf(s, id)) {
          kill9(p.pid);
          killed.add(p.pid);
        }
        return get(s, id);
      },
      terminal,
      120_000,
      10,
    );
    expect(rec).toMatchObject({ status: 'failed', error_type: 'internal_error' });
    expect(rec.error_message).toMatch(/decoder stopped unexpectedly/);
    expectWorded(rec.error_message);
    expect(killed.size).toBe(3);
    expect(await usageOf(s, 'ffmpeg-always')).toEqual([]);
    expect((await s.request(`/v1/transcriptions/${id}/transcript`)).status).toBe(409);
    // The uploaded file is untouched.
    expect((await s.request(`/v1/files/${paddedId}`)).status).toBe(200);
    await expectServing(s);
  }, 180_000);

  it('the diarization decoder killed after recognition: the job runs again and completes with speakers, billed once', async () => {
    const id = await create(s, { file_id: paddedId, enable_speaker_diarization: true, client_reference_id: 'diarize' });
    const recognition = await processFound(() => decodersOf(s, id)[0]);
    const diarization = await processFound(() => decodersOf(s, id).find((p) => p.pid !== recognition.pid), 120_000);
    kill9(diarization.pid);
    const rec = await finished(s, id);
    expect(rec).toMatchObject({ status: 'completed', error_type: null });
    const t = await transcript(s, id);
    expect(t.tokens.length).toBeGreaterThan(5);
    expect(t.tokens.every((tok) => typeof tok.speaker === 'string')).toBe(true);
    expect(interruptedRuns(s, id)).toBe(1);
    expect(await usageOf(s, 'diarize')).toHaveLength(1);
  }, 180_000);

  it('the loaded apertium process killed while idle: the next translated job starts a fresh one', async () => {
    const foxId = await uploadFile(s, foxWav);
    const translation = { type: 'one_way', target_language: 'es' };
    const first = await create(s, { file_id: foxId, translation });
    expect(await finished(s, first)).toMatchObject({ status: 'completed' });
    // The spare left loaded for the next call; kill its whole pipeline.
    const spare = await processFound(() => apertiumOf(s)[0], 10_000);
    process.kill(-spare.pgrp, 'SIGKILL');
    await waitFor(
      async () => processes().some((p) => p.pgrp === spare.pgrp && p.state !== 'Z'),
      (x) => !x,
      10_000,
      20,
    );
    const second = await create(s, { file_id: foxId, translation, client_reference_id: 'translate-after-kill' });
    expect(await finished(s, second)).toMatchObject({ status: 'completed', error_type: null });
    const tokens = (await transcript(s, second)).tokens;
    expect(tokens.some((t) => t.translation_status === 'translation')).toBe(true);
    expect(await usageOf(s, 'translate-after-kill')).toHaveLength(1);
  }, 180_000);

  it('the spawner killed mid-job: its ffmpeg and apertium children die with it, the job runs again and completes', async () => {
    const translation = { type: 'one_way', target_language: 'es' };
    // A loaded apertium spare (a process group of its own) waiting: left by the test above, or by a translated job now.
    if (apertiumOf(s).length === 0) {
      const warm = await create(s, { file_id: await uploadFile(s, foxWav), translation });
      expect(await finished(s, warm)).toMatchObject({ status: 'completed' });
    }
    const spare = await processFound(() => apertiumOf(s)[0], 10_000);
    const id = await create(s, { file_id: paddedId, translation, client_reference_id: 'spawner-mid-job' });
    const ffmpeg = await processFound(() => decodersOf(s, id)[0]);
    const old = spawnerOf(s)!;
    kill9(old.pid);
    // Nothing it started outlives it: the decoder, and every process of the spare's group.
    await waitFor(
      async () => alive(ffmpeg.pid) || processes().some((p) => p.pgrp === spare.pgrp && p.state !== 'Z'),
      (x) => !x,
      10_000,
      20,
    );
    const rec = await finished(s, id);
    expect(rec).toMatchObject({ status: 'completed', error_type: null });
    const tokens = (await transcript(s, id)).tokens;
    expect(tokens.some((t) => t.translation_status === 'translation')).toBe(true);
    expect(interruptedRuns(s, id)).toBe(1);
    expect(await usageOf(s, 'spawner-mid-job')).toHaveLength(1);
    expect(spawnerOf(s)!.pid).not.toBe(old.pid);
    await expectServing(s);
  }, 180_000);

  it('the spawner killed while idle: uploads, transcriptions and speech start a new one and work', async () => {
    const old = spawnerOf(s)!;
    expect(old).toBeDefined();
    kill9(old.pid);
    await waitFor(
      async () => alive(old.pid),
      (x) => !x,
      10_000,
      20,
    );
    // A FLAC upload is checked with ffprobe and ffmpeg: children again.
    await uploadFile(s, toneFlac);
    const replacement = spawnerOf(s);
    expect(replacement?.pid).toBeGreaterThan(0);
    expect(replacement!.pid).not.toBe(old.pid);
    const id = await create(s, { file_id: await uploadFile(s, foxWav) });
    expect(await finished(s, id)).toMatchObject({ status: 'completed' });
    expect((await transcript(s, id)).text).toMatch(/fox/i);
    const speech = await s.request('/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-rt-v2', voice: 'Adrian', language: 'en', audio_format: 'wav', text: 'The spawner came back.' }),
    });
    expect(speech.status).toBe(200);
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(4000);
    expect(spawnerOf(s)?.pid).toBe(replacement!.pid);
  }, 180_000);
});

// ---- the upload's audio check ------------------------------------------------------------------------------------

describe("the upload's audio check killed mid-check", () => {
  let s: Parlance;
  let bin: string;
  const hold = (name: string) => path.join(bin, `hold-${name}`);
  beforeAll(async () => {
    bin = tempDir('parlance-fault-jobs-bin-');
    const real = (name: string) => execFileSync('which', [name]).toString().trim();
    // Each waits while its hold file exists, then runs the real tool; ffmpeg only for the check's decode (-xerror).
    writeFileSync(path.join(bin, 'ffprobe'), `#!/bin/sh\nwhile [ -e '${hold('ffprobe')}' ]; do sleep 0.05; done\nexec '${real('ffprobe')}' "$@"\n`, {
      mode: 0o755,
    });
    writeFileSync(
      path.join(bin, 'ffmpeg'),
      `#!/bin/sh\ncase " $* " in *" -xerror "*) while [ -e '${hold('ffmpeg')}' ]; do sleep 0.05; done ;; esac\nexec '${real('ffmpeg')}' "$@"\n`,
      { mode: 0o755 },
    );
    s = await startParlance({ env: { PATH: `${bin}:${process.env.PATH ?? ''}`, PARLANCE_LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await s?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  const filesDir = () => path.join(s.dataDir, 'blobs', 'files', s.projectId);
  const kept = () => ({
    files: existsSync(filesDir()) ? readdirSync(filesDir()) : [],
    tmp: readdirSync(path.join(s.dataDir, 'blobs', 'tmp')),
  });

  it.each([
    ['ffprobe', 'ffprobe'],
    ['ffmpeg', 'the decode check (ffmpeg)'],
  ])(
    '%s killed: 500 internal_error in words, nothing kept, the cause logged; the file uploads once it is back',
    async (name) => {
      writeFileSync(hold(name), '');
      let res: Response;
      try {
        const form = new FormData();
        form.set('file', new Blob([readFileSync(toneFlac)]), 'checked.flac');
        const upload = s.request('/v1/files', { method: 'POST', body: form, signal: AbortSignal.timeout(60_000) });
        const checker = await processFound(
          () => descendants(s.pid).find((p) => p.comm === name && p.args[1] === path.join(bin, name) && (name !== 'ffmpeg' || p.args.includes('-xerror'))),
          30_000,
        );
        kill9(checker.pid);
        res = await upload;
      } finally {
        rmSync(hold(name), { force: true });
      }
      expect(res.status).toBe(500);
      const body = await errorBody(res);
      expect(body.error_type).toBe('internal_error');
      expect(body.message).toMatch(/could not check the audio file/);
      expectWorded(body.message);
      // Nothing of it kept: no row, no bytes, no temp file.
      expect(((await (await s.request('/v1/files')).json()) as { files: unknown[] }).files).toEqual([]);
      expect(kept()).toEqual({ files: [], tmp: [] });
      // The cause is in the log, under the request id the client was given.
      const line = logLines(s).find((l) => l.request_id === body.request_id && l.msg === 'request failed');
      expect(JSON.stringify(line?.err)).toMatch(new RegExp(`${name} was killed by SIGKILL`));
      // The checker is back: the same file is accepted.
      const id = await uploadFile(s, toneFlac, 'checked.flac');
      expect((await s.request(`/v1/files/${id}`, { method: 'DELETE' })).status).toBe(204);
    },
    60_000,
  );
});

// ---- webhook receivers -------------------------------------------------------------------------------------------

interface Delivery {
  route: string;
  id: string;
  at: number;
  /** Requests of other deliveries the receiver held unanswered when this one arrived. */
  heldAtArrival: number;
}

/**
 * One loopback receiver with a route per behaviour: /ok answers 204 at once, /hung never answers, /slow answers
 * after `slowMs`, /unavailable answers 503, /once-hung hangs the first delivery of a job and answers the later ones,
 * /hold hangs while `holding` is set.
 */
async function webhookReceiver(slowMs: number) {
  const deliveries: Delivery[] = [];
  /** Unanswered requests and the transcription each is about. */
  const held = new Map<ServerResponse, string>();
  const state = { holding: true };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = req.url ?? '';
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
      const before = deliveries.filter((d) => d.id === id).length;
      deliveries.push({ route, id, at: Date.now(), heldAtArrival: held.size });
      const hold = () => {
        held.set(res, id);
        res.once('close', () => held.delete(res));
      };
      if (route === '/ok' || (route === '/once-hung' && before > 0) || (route === '/hold' && !state.holding)) res.writeHead(204).end();
      else if (route === '/unavailable') res.writeHead(503).end();
      else if (route === '/slow') {
        hold();
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(200).end();
        }, slowMs);
      } else hold(); // /hung, the first /once-hung, /hold while holding
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    held,
    state,
    of: (id: string) => deliveries.filter((d) => d.id === id),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// Long enough that another job's webhook (a second of tone, transcribed at once) goes out within a first attempt.
const WEBHOOK_TIMEOUT_MS = 4000;
const WEBHOOK_ENV = {
  PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
  PARLANCE_STT_WORKERS: '1',
  PARLANCE_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
  PARLANCE_WEBHOOK_MAX_ATTEMPTS: '3',
  PARLANCE_WEBHOOK_RETRY_BASE_SECONDS: '0.2',
};

describe('webhook receivers that hang or answer late', () => {
  let s: Parlance;
  /** A second server whose attempts would wait a minute, for the shutdown; restarted on its data dir. */
  let stopping: Parlance | undefined;
  let stoppingDir: string;
  const stoppingEnv = { ...WEBHOOK_ENV, PARLANCE_WEBHOOK_TIMEOUT_MS: '60000' };
  let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
  beforeAll(async () => {
    stoppingDir = tempDir('parlance-fault-jobs-hook-');
    [s, stopping, hooks] = await Promise.all([
      startParlance({ env: WEBHOOK_ENV }),
      startParlance({ dataDir: stoppingDir, env: stoppingEnv }),
      webhookReceiver(WEBHOOK_TIMEOUT_MS + 1500),
    ]);
  });
  afterAll(async () => {
    await Promise.all([s?.stop(), stopping?.stop()]);
    await hooks?.close();
    if (stoppingDir) rmSync(stoppingDir, { recursive: true, force: true });
  });

  /** The webhook job of transcription `id` gave up (its last attempt failed). */
  const gaveUp = (id: string) => logLines(s).some((l) => l.msg === 'job failed' && l.kind === 'transcription.webhook' && String(l.error).includes(id));

  it('jobs complete and are readable at once; attempts time out and are retried up to the maximum; other webhooks go out meanwhile', async () => {
    const fileId = await uploadFile(s, toneWav);
    const job = (route: string) => create(s, { file_id: fileId, webhook_url: `${hooks.url}${route}` });
    const [hung1, hung2, onceHung, slow, unavailable] = await Promise.all(['/hung', '/hung', '/once-hung', '/slow', '/unavailable'].map(job));
    // Four receivers hold a first delivery each, unanswered.
    await waitFor(
      async () => hooks.held.size,
      (n) => n >= 4,
      60_000,
      20,
    );
    // The webhook does not hold the job: completed, transcript readable, while its receiver still has the request.
    expect(await get(s, hung1!)).toMatchObject({ status: 'completed', webhook_status_code: null });
    expect((await s.request(`/v1/transcriptions/${hung1}/transcript`)).status).toBe(200);
    await expectServing(s);
    // Another job's webhook goes out while all four are held.
    const ok = await create(s, { file_id: fileId, webhook_url: `${hooks.url}/ok` });
    await waitFor(
      async () => hooks.of(ok),
      (d) => d.length === 1,
      30_000,
      20,
    );
    expect(hooks.of(ok)[0]!.heldAtArrival).toBeGreaterThanOrEqual(4);
    expect(
      (
        await waitFor(
          () => get(s, ok),
          (r) => r.webhook_status_code !== null,
          10_000,
        )
      ).webhook_status_code,
    ).toBe(204);

    // Every failing delivery is tried exactly three times, each hung attempt cut at the timeout.
    for (const id of [hung1!, hung2!, slow!, unavailable!]) await waitFor(async () => gaveUp(id), Boolean, 60_000, 100);
    for (const id of [hung1!, hung2!, slow!]) {
      const times = hooks.of(id).map((d) => d.at);
      expect(times).toHaveLength(3);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(WEBHOOK_TIMEOUT_MS);
      expect(await get(s, id)).toMatchObject({ status: 'completed', webhook_status_code: null });
    }
    expect(hooks.of(unavailable!)).toHaveLength(3);
    expect(await get(s, unavailable!)).toMatchObject({ status: 'completed', webhook_status_code: 503 });
    // Hung once, then answered: delivered on the second attempt, and the record says so.
    expect(
      (
        await waitFor(
          () => get(s, onceHung!),
          (r) => r.webhook_status_code !== null,
          20_000,
        )
      ).webhook_status_code,
    ).toBe(204);
    expect(hooks.of(onceHung!)).toHaveLength(2);
    expect([...hooks.held.values()].filter((id) => [hung1, hung2, onceHung, slow].includes(id))).toEqual([]);
    await expectServing(s);
  }, 180_000);

  it('a shutdown does not wait for a hung receiver: the delivery is given back and made after the restart', async () => {
    const id = await create(stopping!, { file_id: await uploadFile(stopping!, toneWav), webhook_url: `${hooks.url}/hold` });
    await waitFor(async () => [...hooks.held.values()].includes(id), Boolean, 30_000, 20);
    await stopping!.stop(); // SIGTERM, then SIGKILL after 5 s: a clean exit means it did not wait for the receiver
    expect(await stopping!.exited).toBe(0);
    expect([...hooks.held.values()]).not.toContain(id);
    hooks.state.holding = false;
    stopping = await startParlance({ dataDir: stoppingDir, env: stoppingEnv });
    const rec = await waitFor(
      () => get(stopping!, id),
      (r) => r.webhook_status_code !== null,
      20_000,
    );
    expect(rec).toMatchObject({ status: 'completed', webhook_status_code: 204 });
    expect(hooks.of(id)).toHaveLength(2);
  }, 180_000);
});

// ---- a full disk -------------------------------------------------------------------------------------------------

const mountable = await canMountTmpfs();
if (!mountable) console.warn('faults-jobs: the full-disk scenario is skipped, this process cannot mount a tmpfs (needs root)');

describe.skipIf(!mountable)('the disk filling while a transcription runs', () => {
  let s: Parlance;
  let diskRoot: string;
  let diskData: string;
  let filler: string;
  beforeAll(async () => {
    diskRoot = tempDir('parlance-fault-jobs-disk-');
    diskData = path.join(diskRoot, 'data');
    filler = path.join(diskData, 'filler');
    mkdirSync(diskData);
    // A data dir of its own, 48 MiB.
    if (!(await mountTmpfs(diskData, 48))) throw new Error(`could not mount a tmpfs at ${diskData}`);
    // A lease longer than the recognition, so the job reaches its first write (the usage record) while full; short
    // enough that the run lost with the disk is taken over soon after space is back.
    s = await startParlance({ dataDir: diskData, env: { PARLANCE_STT_WORKERS: '1', PARLANCE_JOB_LEASE_SECONDS: '6' } });
  });
  afterAll(async () => {
    await s?.stop();
    if (diskData) await unmount(diskData);
    if (diskRoot) rmSync(diskRoot, { recursive: true, force: true });
  });

  it('the job records nothing unbilled while full, completes once space is back, billed once; uploads and new jobs work', async () => {
    const fileId = await uploadFile(s, paddedWav);
    const size = readFileSync(paddedWav).length;
    const id = await create(s, { file_id: fileId, client_reference_id: 'disk-full' });
    await processFound(() => decodersOf(s, id)[0]);
    fillDisk(filler);
    try {
      // The recognition ends and its result cannot be stored (or the run loses its lease first, on a slow machine).
      const stuck = (l: Record<string, unknown>) =>
        (l.msg === 'transcription failed unexpectedly' && l.id === id) || l.msg === 'job lease lost; aborting its handler';
      await waitFor(async () => logLines(s).some(stuck), Boolean, 60_000, 100);
      expect(s.stderr()).toMatch(/SQLITE_FULL|disk is full/i);
      // Reads still answer; the job is not completed (nor billed) behind the full disk, nor failed for it.
      expect((await s.request('/health')).status).toBe(200);
      expect(await get(s, id)).toMatchObject({ status: 'transcribing' });
      expect(await usageOf(s, 'disk-full')).toEqual([]);
    } finally {
      rmSync(filler, { force: true });
    }
    const rec = await finished(s, id);
    if (rec.status === 'completed') {
      expect((await transcript(s, id)).text).toMatch(/fox/i);
      expect(await usageOf(s, 'disk-full')).toHaveLength(1);
    } else {
      expectWorded(rec.error_message);
      expect(await usageOf(s, 'disk-full')).toEqual([]);
    }
    // The upload is intact, bytes and all, and new work goes through.
    const file = (await (await s.request(`/v1/files/${fileId}`)).json()) as { size: number };
    expect(file.size).toBe(size);
    expect(existsSync(path.join(diskData, 'blobs', 'files', s.projectId, fileId))).toBe(true);
    const again = await create(s, { file_id: await uploadFile(s, foxWav), client_reference_id: 'disk-after' });
    expect(await finished(s, again)).toMatchObject({ status: 'completed' });
    expect(await usageOf(s, 'disk-after')).toHaveLength(1);
  }, 180_000);
});
