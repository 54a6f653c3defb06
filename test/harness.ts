// Test harness: real server processes, real data dirs, real databases. Nothing here mocks a component.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import type { SttReceivedFrame } from '../src/wire/stt-frames.js';

const execFileP = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '..');
export const CLI = path.join(ROOT, 'bin', 'parlance.js');

export interface Parlance {
  url: string;
  /** The separate TTS interface's base URL, when started with PARLANCE_TTS_PORT. */
  ttsUrl?: string;
  apiKey: string;
  organizationId: string;
  projectId: string;
  dataDir: string;
  /** Run `parlance admin <args> --data-dir D --json` against this server's data dir. */
  admin<T = Record<string, unknown>>(...args: string[]): Promise<T>;
  /** fetch() against the server with the bootstrap key unless `headers.authorization` is given. */
  request(pathname: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  stop(): Promise<void>;
  /** SIGKILL the server (a crash: no shutdown hooks run); the data dir is kept. */
  kill9(): Promise<void>;
  pid: number;
  stderr(): string;
  /** Resolves with the exit code (null after a signal) once the server process ended. */
  exited: Promise<number | null>;
}

/** The server's JSON log lines so far (stderr; other lines skipped). */
export function logLines(s: Pick<Parlance, 'stderr'>): Record<string, unknown>[] {
  return s
    .stderr()
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

export function tempDir(prefix = 'parlance-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export async function runCli(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const r = await execFileP(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
    return { stdout: r.stdout, stderr: r.stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 };
  }
}

/** How long a server may take to listen: ~2 s idle, 25-50 s on a 2-core machine shared by several test runs (PARLANCE_TEST_START_TIMEOUT_MS). */
const START_TIMEOUT_MS = Number(process.env.PARLANCE_TEST_START_TIMEOUT_MS) || 60_000;

/** Start `parlance serve --port 0` on a fresh (or given) data dir and wait until it listens. */
export async function startParlance(
  opts: { env?: Record<string, string>; dataDir?: string; keepDataDir?: boolean; startTimeoutMs?: number } = {},
): Promise<Parlance> {
  const dataDir = opts.dataDir ?? tempDir();
  // Test servers load speech models on first use (PARLANCE_STT_PRELOAD off): most never use them, and each load is
  // several CPU-seconds the other test files share. The preload test turns it on.
  // A short drain: stop() gives the server 5 s before SIGKILL, and a test that left a session open should not cost more.
  const env = {
    ...process.env,
    PARLANCE_LOG_LEVEL: 'warn',
    PARLANCE_HOST: '127.0.0.1',
    PARLANCE_STT_PRELOAD: '0',
    PARLANCE_SHUTDOWN_DRAIN_SECONDS: '2',
    ...opts.env,
  };
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir], { env });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const info = await new Promise<{ url: string; ttsUrl?: string; apiKey?: string; organizationId?: string; projectId?: string }>((resolve, reject) => {
    const startMs = opts.startTimeoutMs ?? START_TIMEOUT_MS;
    const timer = setTimeout(() => reject(new Error(`server did not start in ${startMs / 1000} s\nstdout: ${stdout}\nstderr: ${stderr}`)), startMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const m = /Parlance listening on (http:\/\/\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          ttsUrl: /Parlance TTS listening on (http:\/\/\S+)/.exec(stdout)?.[1],
          apiKey: /api_key:\s+(\S+)/.exec(stdout)?.[1],
          organizationId: /organization_id:\s+(\S+)/.exec(stdout)?.[1],
          projectId: /project_id:\s+(\S+)/.exec(stdout)?.[1],
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const admin = async <T>(...args: string[]): Promise<T> => {
    const r = await runCli(['admin', ...args, '--data-dir', dataDir, '--json'], opts.env ?? {});
    if (r.code !== 0) throw new Error(`admin ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  let creds = info;
  if (!creds.apiKey) {
    const b = await admin<{ organization_id: string; project_id: string; api_key: string }>('bootstrap');
    creds = { ...info, apiKey: b.api_key, organizationId: b.organization_id, projectId: b.project_id };
  }
  const server: Parlance = {
    url: info.url,
    ttsUrl: info.ttsUrl,
    apiKey: creds.apiKey!,
    organizationId: creds.organizationId!,
    projectId: creds.projectId!,
    dataDir,
    admin,
    request(pathname, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key === undefined ? server.apiKey : init.key;
      if (key !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
      return fetch(server.url + pathname, { ...init, headers });
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      if (!opts.keepDataDir && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
    pid: child.pid!,
    stderr: () => stderr,
    exited,
  };
  return server;
}

/** Synthesize a short audio file with ffmpeg (a tone: the files API only needs decodable audio). */
export async function makeAudio(file: string, opts: { seconds?: number; format?: string } = {}): Promise<string> {
  const args = ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${opts.seconds ?? 1}`, '-ar', '16000', '-ac', '1'];
  if (opts.format) args.push('-f', opts.format);
  await execFileP('ffmpeg', [...args, '-y', file]);
  return file;
}

export const PG_ADMIN_URL = process.env.PARLANCE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_TEST_URL = process.env.PARLANCE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh PostgreSQL database for one test file; drop() removes it. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `parlance_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Read a REST error body and check its exact shape. */
export async function errorBody(res: Response): Promise<{
  status_code: number;
  error_type: string;
  message: string;
  validation_errors: { error_type: string; location: string; message: string }[];
  request_id: string;
  more_info: string;
}> {
  const body = (await res.json()) as Record<string, unknown>;
  const keys = Object.keys(body).sort();
  const expected = ['error_type', 'message', 'more_info', 'request_id', 'status_code', 'validation_errors'];
  if (JSON.stringify(keys) !== JSON.stringify(expected)) throw new Error(`error body keys ${keys.join(',')} != ${expected.join(',')}`);
  if (body.status_code !== res.status) throw new Error(`status_code ${String(body.status_code)} != HTTP ${res.status}`);
  return body as never;
}

/** Synthesize English speech with flite (16 kHz mono WAV unless `format` says otherwise). */
export async function makeSpeech(file: string, text: string, opts: { voice?: string; format?: string; padSeconds?: number } = {}): Promise<string> {
  const raw = `${file}.flite.wav`;
  await execFileP('flite', ['-voice', opts.voice ?? 'slt', '-t', text, '-o', raw]);
  const args = ['-nostdin', '-v', 'error', '-i', raw];
  if (opts.padSeconds) args.push('-af', `apad=pad_dur=${opts.padSeconds}`);
  args.push('-ar', '16000', '-ac', '1');
  if (opts.format) args.push('-f', opts.format);
  await execFileP('ffmpeg', [...args, '-y', file]);
  rmSync(raw, { force: true });
  return file;
}

/** Poll `fn` until `done(value)` or the timeout; returns the last value. */
export async function waitFor<T>(fn: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await fn();
  while (!done(v)) {
    if (Date.now() > deadline) throw new Error(`waitFor timed out after ${timeoutMs} ms; last value: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
    v = await fn();
  }
  return v;
}

/** Upload a file through POST /v1/files with the server's bootstrap key; its id. Anything but 201 throws. */
export async function uploadFile(s: Parlance, file: string, name = path.basename(file)): Promise<string> {
  const form = new FormData();
  form.set('file', new Blob([readFileSync(file)]), name);
  const res = await s.request('/v1/files', { method: 'POST', body: form });
  if (res.status !== 201) throw new Error(`upload of ${file}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

export interface GatedAudioServer {
  url: string;
  /** From now on, downloads send their first 100 bytes and then wait for release(). */
  hold(): void;
  /** Finish the waiting downloads and serve new ones at once. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server for `audio_url` downloads of `wav` that can hold them open, so an async job stays in
 * `downloading` (and, with one job slot, the jobs behind it stay `queued`) for as long as a test needs.
 */
export async function gatedAudioServer(wav: Buffer, opts: { held?: boolean } = {}): Promise<GatedAudioServer> {
  const waiting: (() => void)[] = [];
  let open = !opts.held;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length });
    res.write(wav.subarray(0, 100));
    const finish = () => res.end(wav.subarray(100));
    if (open) finish();
    else waiting.push(finish);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: () => void (open = false),
    release: () => {
      open = true;
      for (const f of waiting.splice(0)) f();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A /transcribe-websocket server frame as the tests read it (src/wire/stt-frames.ts). */
export type RealtimeFrame = SttReceivedFrame;

/**
 * One real-time session over /transcribe-websocket: the configuration (raw 16 kHz mono PCM unless `config` says
 * otherwise, plus `config`), `pcm` in 100 ms messages as fast as the socket takes them, then the end of audio; resolves
 * with every frame once the finished (or an error) frame came.
 */
export async function streamRealtime(s: Parlance, pcm: Buffer, config: Record<string, unknown> = {}): Promise<RealtimeFrame[]> {
  const { default: WebSocket } = await import('ws');
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: RealtimeFrame[] = [];
  const done = new Promise<void>((resolve) =>
    ws.on('message', (m) => {
      const f = JSON.parse(m.toString()) as RealtimeFrame;
      frames.push(f);
      if (f.finished || f.error_type) resolve();
    }),
  );
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1, ...config }));
  for (let off = 0; off < pcm.length; off += 3200) ws.send(pcm.subarray(off, off + 3200));
  ws.send('');
  await done;
  ws.close();
  return frames;
}

export interface TranscriptBody {
  /** The transcription's id. */
  id: string;
  text: string;
  tokens: { text: string; start_ms: number; end_ms: number; confidence: number; speaker?: string }[];
}

/**
 * Upload `file`, create a transcription of it (model stt-async-v4 unless `body` names another, plus `body`), wait
 * for it to end and return its transcript; throws with the status and error when it does not complete.
 */
export interface TranscriptionRecord {
  id: string;
  status: string;
  model: string;
  audio_duration_ms: number | null;
  error_type: string | null;
  error_message: string | null;
}

/** The transcription's record once it ended (completed, or failed: `error` in the soniox-sdk profile). */
export async function settledTranscription(s: Parlance, id: string, timeoutMs = 120_000): Promise<TranscriptionRecord> {
  return waitFor(
    async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as TranscriptionRecord,
    (r) => r.status === 'completed' || r.status === 'error' || r.status === 'failed',
    timeoutMs,
  );
}

export async function transcribeFile(s: Parlance, file: string, body: Record<string, unknown> = {}, timeoutMs = 120_000): Promise<TranscriptBody> {
  const fileId = await uploadFile(s, file);
  const res = await s.request('/v1/transcriptions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'stt-async-v4', file_id: fileId, ...body }),
  });
  if (res.status !== 201) throw new Error(`create transcription: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const rec = await settledTranscription(s, id, timeoutMs);
  if (rec.status !== 'completed') throw new Error(`transcription ${id} ended ${rec.status}: ${rec.error_type} ${rec.error_message}`);
  return (await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as TranscriptBody;
}

/** CPU time (ms) the main thread (the event loop) has used so far: the kernel's count (Linux /proc, 10 ms ticks). */
function mainThreadCpuMs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in ticks of 10 ms (USER_HZ = 100)
}

/**
 * Run `work` and say where this process spent CPU meanwhile: on the main thread, which runs the event loop, or on its
 * other threads (workers, engines' own threads, including those that ended meanwhile). Unlike a timer's lateness, CPU
 * time does not grow when a busy machine makes the work wait, so tests show with it that work stays off the event
 * loop. Linux only (/proc).
 */
export async function cpuWhile(work: () => Promise<unknown>): Promise<{ mainMs: number; otherMs: number }> {
  const process0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  await work();
  const used = process.cpuUsage(process0);
  const mainMs = mainThreadCpuMs() - main0;
  return { mainMs, otherMs: Math.max(0, (used.user + used.system) / 1000 - mainMs) };
}
