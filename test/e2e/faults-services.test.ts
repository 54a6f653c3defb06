// Fault injection: the services a running server depends on go away and come back (issue 22, item 3).
//
// PostgreSQL: a private cluster of this test's own (initdb + pg_ctl on a random port, as the postgres user), never the
// machine's shared one, crashed with `pg_ctl stop -m immediate` while the server works (pg-boss job queue), then
// started again. Requests during the outage, and the one whose query was running when it crashed, get a prompt 500
// internal_error REST body with nothing internal in it (the cause goes to the log); `/health` is a liveness check and
// keeps answering 200; an upload whose row could not be stored keeps no bytes; once the database is back the same
// process serves again, nothing written before is lost, the transcriptions in flight and queued complete, and each
// is billed exactly once.
//
// PostgreSQL under a transcription (local job queue): a backend terminated under the job's write while the database
// answers (57P01, what a failover or a fast shutdown does), and a crash and restart while the job stores its result.
// Either way the job runs again and completes, billed exactly once: a passing database error is never the
// transcription's failure. Then the whole cluster frozen (SIGSTOP, a hung host: connections stay open, nothing
// answers): requests get a 500 internal_error within the query bound instead of hanging, /health answers, the
// transcription in flight is not failed for it, and after SIGCONT the same process serves again at once.
//
// Redis: a private redis-server on a random port shared by two server processes (rate limits and concurrent-stream
// caps), first hung (SIGSTOP: a frozen server or a partition, where the connection stays open and nothing answers),
// then killed and started again empty. Requests never wait more than about a second for it, each node keeps
// enforcing the limits on its own while it is away (counting the sessions it already holds), a real-time session can
// be opened meanwhile, and once Redis is back the nodes count together again, the sessions opened during the outage
// included.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createPgDatabase,
  errorBody,
  gatedAudioServer,
  type GatedAudioServer,
  makeAudio,
  makeSpeech,
  type Parlance,
  startParlance,
  streamRealtime,
  tempDir,
  uploadFile,
  waitFor,
} from '../harness.js';

const execFileP = promisify(execFile);

/** Where `name` is: on PATH, in /usr/local/bin (where this machine links PostgreSQL's tools) or PostgreSQL's own bin. */
function findBinary(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/local/bin', '/usr/lib/postgresql/15/bin']) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Text of a response body meant for a client: nothing of the server's internals may show in it. */
function expectNoInternalDetail(text: string, extra: string[] = []): void {
  for (const needle of ['ECONNREFUSED', 'ECONNRESET', 'postgres://', 'redis://', 'pg-pool', 'node_modules', 'Connection terminated', '    at ', ...extra])
    expect(text, `response leaks ${JSON.stringify(needle)}: ${text}`).not.toContain(needle);
}

// ---------------------------------------------------------------------------------------------------------------
// A private PostgreSQL cluster.

const initdb = findBinary('initdb');
const pgCtl = findBinary('pg_ctl');
const isRoot = process.getuid?.() === 0;
let postgresUser: { uid: number; gid: number } | null = null;
try {
  postgresUser = { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
} catch {
  postgresUser = null;
}
const pgAvailable = Boolean(initdb && pgCtl && (!isRoot || (postgresUser && findBinary('runuser'))));
// `make test` installs PostgreSQL (scripts/debian-packages.txt) and puts its tools on PATH: missing, the scenarios fail.
const requirePostgres = (): void => {
  if (!pgAvailable) throw new Error('PostgreSQL scenarios need initdb, pg_ctl, and as root runuser and a postgres user: run `make setup` (package postgresql)');
};

class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** initdb refuses to run as root: as root, the tools run as the postgres user. */
  private static run(bin: string, args: string[]): Promise<unknown> {
    return isRoot ? execFileP('runuser', ['-u', 'postgres', '--', bin, ...args]) : execFileP(bin, args);
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = tempDir('parlance-fault-pg-');
    if (isRoot) chownSync(dir, postgresUser!.uid, postgresUser!.gid);
    const cluster = new PrivatePostgres(dir, await freePort());
    try {
      await PrivatePostgres.run(initdb!, ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
      await cluster.start();
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
    return cluster;
  }

  /** Start and wait until it accepts connections. fsync is off: only PostgreSQL crashes here, never the machine. */
  async start(): Promise<void> {
    const opts = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dir} -c fsync=off`;
    await PrivatePostgres.run(pgCtl!, ['-D', path.join(this.dir, 'data'), '-l', path.join(this.dir, 'log'), '-w', '-t', '30', '-o', opts, 'start']);
  }

  /** A crash: every backend dies at once, nothing is shut down cleanly (recovery runs at the next start). */
  async crash(): Promise<void> {
    await PrivatePostgres.run(pgCtl!, ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  }

  /** The postmaster and its children (backends, checkpointer, ...): every process of the cluster. */
  private processes(): number[] {
    const postmaster = Number(readFileSync(path.join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc').filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return /^\d+$/.test(name) && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    });
    return [postmaster, ...children.map(Number)];
  }

  private frozen = false;

  /** Hung, not crashed (SIGSTOP, the postmaster first so it starts no one new): connections stay open, nothing answers. */
  freeze(): void {
    for (const pid of this.processes()) process.kill(pid, 'SIGSTOP');
    this.frozen = true;
  }

  thaw(): void {
    if (!this.frozen) return;
    for (const pid of this.processes().reverse()) process.kill(pid, 'SIGCONT');
    this.frozen = false;
  }

  async destroy(): Promise<void> {
    this.thaw();
    await this.crash().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A private Redis.

const redisServer = findBinary('redis-server');
const requireRedis = (): void => {
  if (!redisServer) throw new Error('Redis scenarios need redis-server: run `make setup` (package redis-server)');
};

class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  /** Start (again, on the same port, empty) and wait for its ready line. */
  async start(): Promise<void> {
    const child = spawn(redisServer!, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${out}`));
      });
    });
  }

  /** Hung: the process and its connections stay, nothing is answered. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Gone: SIGKILL, connections reset. Resolves once the process is reaped. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Clients.

const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Time a request; `signal` bounds it so a hang fails the test instead of stalling it. */
async function timed(run: (signal: AbortSignal) => Promise<Response>, boundMs = 10_000): Promise<{ res: Response; ms: number }> {
  const t0 = performance.now();
  const res = await run(AbortSignal.timeout(boundMs));
  return { res, ms: performance.now() - t0 };
}

/** A multipart upload sent in two halves: the second one only when the test says so. */
function splitUpload(s: Parlance, wav: Buffer, filename: string): { finish(): Promise<{ status: number; text: string }> } {
  const boundary = `fault${Date.now()}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: audio/wav\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = new URL(`${s.url}/v1/files`);
  const req = httpRequest({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: {
      authorization: `Bearer ${s.apiKey}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': head.length + wav.length + tail.length,
    },
  });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  response.catch(() => undefined); // a test that fails before finish() must not leave an unhandled rejection
  const half = Math.floor(wav.length / 2);
  req.write(Buffer.concat([head, wav.subarray(0, half)]));
  return {
    finish() {
      req.end(Buffer.concat([wav.subarray(half), tail]));
      return response;
    },
  };
}

interface Session {
  /** End of audio; resolves with the last frame (finished, or an error). */
  finish(): Promise<Record<string, unknown>>;
  stop(): void;
}

/** A real-time session that holds its concurrency slot: configuration, 100 ms of silence, keepalives until ended. */
async function holdSession(s: Parlance): Promise<Session> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: Record<string, unknown>[] = [];
  const listeners: ((f: Record<string, unknown>) => void)[] = [];
  ws.on('message', (d) => {
    const f = JSON.parse(String(d)) as Record<string, unknown>;
    frames.push(f);
    for (const l of listeners) l(f);
  });
  const next = (pred: (f: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const hit = frames.find(pred);
      if (hit) return resolve(hit);
      listeners.push((f) => pred(f) && resolve(f));
    });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.on('error', () => undefined); // a server that went away closes the socket; the test's checks say what failed
  ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
  ws.send(Buffer.alloc(3200));
  const timer = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'keepalive' })), 1000);
  ws.on('close', () => clearInterval(timer));
  return {
    finish() {
      clearInterval(timer);
      ws.send(Buffer.alloc(3200));
      ws.send('');
      return next((f) => f.finished === true || typeof f.error_type === 'string');
    },
    stop() {
      clearInterval(timer);
      ws.terminate();
    },
  };
}

/** The first frame of a session that should be refused at once (it never reaches a decoder). */
async function refusedSession(s: Parlance): Promise<Record<string, unknown>> {
  const frames = await streamRealtime(s, Buffer.alloc(3200));
  return frames[0] as unknown as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------------------------

describe('PostgreSQL crashing and restarting under a running server (pg-boss queue)', () => {
  beforeAll(requirePostgres);
  let cluster: PrivatePostgres;
  let s: Parlance;
  let gate: GatedAudioServer;
  let work: string;
  let clip: Buffer;
  let exited = false;
  const ids: { kept?: string; lockedDelete?: string; inFlight?: string; queued?: string } = {};

  beforeAll(async () => {
    work = tempDir('parlance-fault-pg-audio-');
    clip = readFileSync(await makeAudio(path.join(work, 'tone.wav'), { seconds: 2 }));
    gate = await gatedAudioServer(clip, { held: true });
    cluster = await PrivatePostgres.create();
    s = await startParlance({
      env: {
        DATABASE_URL: cluster.url,
        PARLANCE_JOB_QUEUE: 'pg-boss',
        // A short lease: a job whose handler met the outage runs again soon after (plus pg-boss's 30 s maintenance).
        PARLANCE_JOB_LEASE_SECONDS: '3',
        // One job at a time: the second transcription stays queued behind the first through the outage.
        PARLANCE_TRANSCRIPTION_CONCURRENCY: '1',
        PARLANCE_STT_WORKERS: '1',
        PARLANCE_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
        PARLANCE_LOG_LEVEL: 'info',
      },
    });
    void s.exited.then(() => (exited = true));
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await gate?.close();
    await cluster?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const filesOnDisk = () => {
    const dir = path.join(s.dataDir, 'blobs', 'files', s.projectId);
    return existsSync(dir) ? readdirSync(dir).sort() : [];
  };
  const tmpOnDisk = () => readdirSync(path.join(s.dataDir, 'blobs', 'tmp'));
  const status = async (id: string) => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_type?: string | null };

  it('the request whose query runs when the database crashes, and every request during the outage, get a prompt 500 internal_error with nothing internal in it', async () => {
    // Before the crash: a file, a transcription held mid-download (its job is running), one queued behind it.
    ids.kept = await uploadFile(s, path.join(work, 'tone.wav'), 'kept.wav');
    ids.lockedDelete = await uploadFile(s, path.join(work, 'tone.wav'), 'locked.wav');
    const t1 = await s.request('/v1/transcriptions', json({ model: 'stt-async-v4', audio_url: `${gate.url}/a.wav`, client_reference_id: 'in-flight' }));
    expect(t1.status).toBe(201);
    ids.inFlight = ((await t1.json()) as { id: string }).id;
    await waitFor(
      () => status(ids.inFlight!),
      (r) => r.status === 'downloading',
      10_000,
      50,
    );
    const t2 = await s.request('/v1/transcriptions', json({ model: 'stt-async-v4', file_id: ids.kept, client_reference_id: 'queued' }));
    expect(t2.status).toBe(201);
    ids.queued = ((await t2.json()) as { id: string }).id;
    expect((await status(ids.queued)).status).toBe('queued');

    // A query under way at the crash: a delete waiting on a row lock this test holds.
    const locker = new pg.Client({ connectionString: cluster.url });
    locker.on('error', () => undefined); // it dies with the cluster
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM files WHERE id = $1 FOR UPDATE', [ids.lockedDelete]);
    const deleting = s.request(`/v1/files/${ids.lockedDelete}`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
    await waitFor(
      async () => (await locker.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`)).rows[0] as { n: number },
      (r) => r.n > 0,
      10_000,
      20,
    );
    // The held download stages its bytes in the same temp directory (they move into place once fetched and probed).
    const downloading = await waitFor(
      async () => tmpOnDisk(),
      (names) => names.length > 0,
      10_000,
      20,
    );
    const uploadTemps = () => tmpOnDisk().filter((name) => !downloading.includes(name));
    // An upload whose bytes are on their way: its checks passed, its row is not written yet.
    const upload = splitUpload(s, clip, 'during-outage.wav');
    await waitFor(
      async () => uploadTemps().length,
      (n) => n > 0,
      10_000,
      20,
    );

    const crashedAt = performance.now();
    await cluster.crash();
    void locker.end().catch(() => undefined);

    // The delete's connection died under it: an error while the database is still down (it comes back only in the
    // next test), and the process lives on (it used to crash here: the dead connection's 'error' event had no
    // listener). Every request in this test is answered during the outage, none waits for the database's return.
    const deleted = await deleting;
    const deleteMs = performance.now() - crashedAt;
    expect(deleted.status).toBe(500);
    const deleteBody = await errorBody(deleted);
    expect(deleteBody.error_type).toBe('internal_error');
    expectNoInternalDetail(JSON.stringify(deleteBody), [`:${cluster.port}`]);

    // The upload's row cannot be written: 500, and none of its bytes are kept.
    const up = await upload.finish();
    expect(up.status).toBe(500);
    expect(JSON.parse(up.text)).toMatchObject({ status_code: 500, error_type: 'internal_error' });
    expectNoInternalDetail(up.text, [`:${cluster.port}`]);
    expect(uploadTemps()).toEqual([]);
    expect(filesOnDisk()).toEqual([ids.kept, ids.lockedDelete].sort());

    // The held download finishes now: its job meets the outage.
    gate.release();

    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(clip)]), 'new.wav');
    const outage: [string, (signal: AbortSignal) => Promise<Response>][] = [
      ['list files', (signal) => s.request('/v1/files', { signal })],
      ['get file', (signal) => s.request(`/v1/files/${ids.kept}`, { signal })],
      ['upload', (signal) => s.request('/v1/files', { method: 'POST', body: form, signal })],
      ['create transcription', (signal) => s.request('/v1/transcriptions', { ...json({ model: 'stt-async-v4', file_id: ids.kept }), signal })],
      ['get transcription', (signal) => s.request(`/v1/transcriptions/${ids.inFlight}`, { signal })],
      ['usage logs', (signal) => s.request(`/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z`, { signal })],
    ];
    const slowest: number[] = [];
    const requestIds: string[] = [];
    for (const [name, run] of outage) {
      const { res, ms } = await timed(run);
      slowest.push(ms);
      expect(res.status, name).toBe(500);
      const body = await errorBody(res);
      expect(body.error_type, name).toBe('internal_error');
      expect(body.message, name).toBe('Internal server error.');
      expectNoInternalDetail(JSON.stringify(body), [`:${cluster.port}`]);
      requestIds.push(body.request_id);
    }
    // The cause is in the log, under the request id the client was given.
    await waitFor(
      async () => s.stderr(),
      (log) => requestIds.every((id) => log.includes(id)),
      5000,
      20,
    );
    expect(s.stderr()).toMatch(/ECONNREFUSED/);
    // Speech over HTTP has its own error body; the same rules hold.
    const tts = await timed((signal) =>
      s.request('/tts', { ...json({ model: 'tts-rt-v2', voice: 'Adrian', language: 'en', audio_format: 'wav', text: 'Nobody hears this.' }), signal }),
    );
    expect(tts.res.status).toBe(500);
    const ttsText = await tts.res.text();
    expect(JSON.parse(ttsText)).toMatchObject({ error_code: 500, error_type: 'internal_error' });
    expectNoInternalDetail(ttsText, [`:${cluster.port}`]);
    // A real-time session cannot authenticate either: an internal_error frame, then the socket closes.
    const rtStart = performance.now();
    const frame = (await streamRealtime(s, Buffer.alloc(3200)))[0];
    slowest.push(performance.now() - rtStart);
    expect(frame).toMatchObject({ tokens: [], error_code: 500, error_type: 'internal_error' });
    expectNoInternalDetail(JSON.stringify(frame), [`:${cluster.port}`]);
    slowest.push(tts.ms);
    // How fast is for the machine to say, not this test: logged only.
    console.info(
      `faults-services: during the PostgreSQL outage errors came in ${Math.round(Math.max(...slowest))} ms at most (in-flight delete: ${Math.round(deleteMs)} ms)`,
    );

    // The released download has finished by now and its job met the outage: it could not move the transcription on,
    // took the outage for what it is (no failure of the transcription's), could not record a retry either, and left
    // the job to its lease. Which of its steps meets the outage first is a race: the handler's own query (it says
    // "interrupted") or the runner's lease renewal (it aborts the handler, "job lease lost"); both leave the job to
    // its lease.
    await waitFor(
      async () => s.stderr().split('\n'),
      (lines) =>
        lines.some(
          (l) =>
            (l.includes('transcription interrupted: the database was unavailable') && l.includes(ids.inFlight!)) ||
            (l.includes('job lease lost') && l.includes('transcription.process')),
        ) && lines.some((l) => l.includes('could not record a job outcome')),
      20_000,
      50,
    );
    expect(s.stderr()).not.toContain('transcription failed unexpectedly');

    // /health is a liveness check: it does not consult the database, so it keeps answering ok.
    const health = await s.request('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(exited).toBe(false);
  }, 60_000);

  it('once PostgreSQL is back, the same process serves again at once; nothing written before the outage is lost', async () => {
    const startedAt = performance.now();
    await cluster.start();
    const back = performance.now();
    await waitFor(
      () => s.request('/v1/files'),
      (r) => r.status === 200,
      15_000,
      25,
    );
    console.info(
      `faults-services: PostgreSQL restart took ${Math.round(back - startedAt)} ms; the server served again ${Math.round(performance.now() - back)} ms later`,
    );
    expect(exited).toBe(false);

    const list = (await (await s.request('/v1/files')).json()) as { files: { id: string; filename: string }[] };
    // The delete that was under way at the crash never committed; the upload that met the outage left nothing.
    expect(list.files.map((f) => f.filename).sort()).toEqual(['kept.wav', 'locked.wav']);
    expect((await s.request(`/v1/files/${ids.lockedDelete}`)).status).toBe(200);
    expect(filesOnDisk()).toEqual([ids.kept, ids.lockedDelete].sort());
    expect(tmpOnDisk()).toEqual([]);

    // Writes work again.
    const id = await uploadFile(s, path.join(work, 'tone.wav'), 'after.wav');
    expect((await s.request(`/v1/files/${id}`)).status).toBe(200);
    expect((await s.request(`/v1/files/${ids.lockedDelete}`, { method: 'DELETE' })).status).toBe(204);
  }, 30_000);

  it('the transcription whose job met the outage and the one queued behind it complete, each billed exactly once', async () => {
    const t0 = performance.now();
    // The job that met the outage could not record its outcome: it runs again once its lease has expired, which
    // pg-boss's maintenance (every 30 s) notices. Neither transcription is failed by the outage.
    const ended = await waitFor(
      async () => Promise.all([status(ids.inFlight!), status(ids.queued!)]),
      (rs) => rs.every((r) => r.status === 'completed' || r.status === 'error'),
      75_000,
      250,
    );
    console.info(`faults-services: the transcriptions completed ${Math.round((performance.now() - t0) / 1000)} s after PostgreSQL came back`);
    expect(ended.map((r) => r.status)).toEqual(['completed', 'completed']);

    const usage = (await (await s.request(`/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z`)).json()) as {
      usage_logs: { client_reference_id: string | null; model: string }[];
    };
    // Two transcriptions, one record each; the failed speech request and real-time session were not billed.
    expect(usage.usage_logs.map((u) => u.client_reference_id).sort()).toEqual(['in-flight', 'queued']);
    expect(exited).toBe(false);
  }, 90_000);
});

// ---------------------------------------------------------------------------------------------------------------

describe('PostgreSQL failing over, restarting and freezing under transcriptions (local job queue)', () => {
  beforeAll(requirePostgres);
  let cluster: PrivatePostgres;
  let s: Parlance;
  let work: string;
  let paddedId: string;
  let exited = false;

  beforeAll(async () => {
    work = tempDir('parlance-fault-pg-jobs-');
    // Speech, then silence: each decode and recognition of it lasts a few seconds, long enough to act on the job.
    const padded = await makeSpeech(path.join(work, 'padded.wav'), 'the quick brown fox jumps over the lazy dog', { padSeconds: 30 });
    cluster = await PrivatePostgres.create();
    s = await startParlance({
      env: {
        DATABASE_URL: cluster.url,
        // A short lease: a run that lost the database is taken over soon after it is back.
        PARLANCE_JOB_LEASE_SECONDS: '3',
        PARLANCE_STT_WORKERS: '1',
        PARLANCE_LOG_LEVEL: 'info',
      },
    });
    void s.exited.then(() => (exited = true));
    paddedId = await uploadFile(s, padded);
  }, 60_000);

  afterAll(async () => {
    cluster?.thaw();
    await s?.stop();
    await cluster?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  type Rec = { status: string; error_type: string | null; error_message: string | null };
  const get = async (id: string) => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as Rec;
  const ended = (id: string, timeoutMs = 120_000) =>
    waitFor(
      () => get(id),
      (r) => ['completed', 'failed', 'error'].includes(r.status),
      timeoutMs,
      100,
    );
  const create = async (ref: string) => {
    const res = await s.request('/v1/transcriptions', json({ model: 'stt-async-v4', file_id: paddedId, client_reference_id: ref }));
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const usageOf = async (ref: string) => {
    const res = await s.request('/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z&limit=1000');
    expect(res.status).toBe(200);
    return ((await res.json()) as { usage_logs: { client_reference_id: string | null }[] }).usage_logs.filter((u) => u.client_reference_id === ref);
  };
  const logged = (msg: string, id: string) =>
    s
      .stderr()
      .split('\n')
      .filter((l) => l.includes(msg) && l.includes(id)).length;
  /** A transaction of this test's own holding `lock` (a SELECT ... FOR UPDATE). */
  const holdLock = async (lock: string, params: unknown[]) => {
    const client = new pg.Client({ connectionString: cluster.url });
    client.on('error', () => undefined); // it may die with the cluster
    await client.connect();
    await client.query('BEGIN');
    await client.query(lock, params);
    return client;
  };
  /**
   * The backend of the server's that waits on a lock with a statement matching `like`. Asked on a connection of its
   * own: inside a transaction (the locker's) pg_stat_activity is a snapshot taken once.
   */
  const waiting = async (like: string): Promise<number> => {
    const watcher = new pg.Client({ connectionString: cluster.url });
    await watcher.connect();
    try {
      const find = async () =>
        (await watcher.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE $1`, [like])).rows[0]?.pid;
      return (await waitFor(find, (pid) => pid !== undefined, 120_000, 20))!;
    } finally {
      await watcher.end();
    }
  };

  it('a backend terminated under the job while the database answers (a failover): the job runs again and completes, billed once', async () => {
    // The job's metering write waits on the organization row this test holds.
    const locker = await holdLock('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [s.organizationId]);
    const id = await create('terminated');
    try {
      const pid = await waiting('%organizations%');
      await locker.query('SELECT pg_terminate_backend($1)', [pid]);
      // The job meets 57P01 and the database answers meanwhile: a failure written now would be final.
      await waitFor(
        async () => logged('transcription interrupted: the database was unavailable', id) + logged('transcription failed unexpectedly', id),
        (n) => n > 0,
        10_000,
        20,
      );
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end().catch(() => undefined);
    }
    const rec = await ended(id);
    expect(rec).toMatchObject({ status: 'completed', error_type: null });
    expect(logged('transcription failed unexpectedly', id)).toBe(0);
    expect(logged('transcription interrupted: the database was unavailable', id)).toBe(1);
    expect(await usageOf('terminated')).toHaveLength(1);
  }, 180_000);

  it('PostgreSQL crashing and restarting while the job stores its result: the job runs again and completes, billed once', async () => {
    const id = await create('crashed');
    await waitFor(
      () => get(id),
      (r) => r.status === 'transcribing',
      60_000,
      20,
    );
    // Recognition under way; its result's write waits on the transcription row this test holds.
    const locker = await holdLock('SELECT 1 FROM transcriptions WHERE id = $1 FOR UPDATE', [id]);
    await waiting('%transcript%');
    // Metered already (before completion, under the transcription's id).
    expect(await usageOf('crashed')).toHaveLength(1);
    await cluster.crash();
    void locker.end().catch(() => undefined);
    await waitFor(
      async () => logged('transcription interrupted: the database was unavailable', id),
      (n) => n > 0,
      10_000,
      20,
    );
    await cluster.start();
    const rec = await ended(id);
    expect(rec).toMatchObject({ status: 'completed', error_type: null });
    expect(logged('transcription failed unexpectedly', id)).toBe(0);
    // Metered again by the re-run: the record already there is kept, nothing is drawn twice.
    expect(await usageOf('crashed')).toHaveLength(1);
    expect(exited).toBe(false);
  }, 180_000);

  it('PostgreSQL frozen: requests get a 500 internal_error within the query bound, /health answers; after SIGCONT the server serves at once', async () => {
    expect((await s.request('/v1/files')).status).toBe(200); // pooled connections, idle when the host freezes
    const id = await create('frozen');
    await waitFor(
      () => get(id),
      (r) => r.status === 'transcribing',
      60_000,
      20,
    );
    cluster.freeze();
    const requestIds: string[] = [];
    try {
      const form = new FormData();
      form.set('file', new Blob([new Uint8Array(readFileSync(path.join(work, 'padded.wav')))]), 'frozen.wav');
      // More at once than the pool has connections: some wait for one, and that wait is bounded too.
      const requests: [string, (signal: AbortSignal) => Promise<Response>][] = [
        ...Array.from({ length: 8 }, (_, i): [string, (signal: AbortSignal) => Promise<Response>] => [
          `list files ${i}`,
          (signal) => s.request('/v1/files', { signal }),
        ]),
        ['get file', (signal) => s.request(`/v1/files/${paddedId}`, { signal })],
        ['upload', (signal) => s.request('/v1/files', { method: 'POST', body: form, signal })],
        ['create transcription', (signal) => s.request('/v1/transcriptions', { ...json({ model: 'stt-async-v4', file_id: paddedId }), signal })],
        ['get transcription', (signal) => s.request(`/v1/transcriptions/${id}`, { signal })],
        ['usage logs', (signal) => s.request('/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=2100-01-01T00:00:00Z', { signal })],
      ];
      const answered = new Set<string>();
      const pending = requests.map(([name, run]) => timed(run, 60_000).finally(() => answered.add(name)));
      // /health does not touch the database: it answers while every request that needs the database still waits
      // (the first of them can give up only at the pool's 5 s connection bound).
      const health = await s.request('/health', { signal: AbortSignal.timeout(10_000) });
      expect(health.status).toBe(200);
      expect([...answered]).toEqual([]);
      const results = await Promise.all(pending);
      const slowest = Math.max(...results.map((r) => r.ms));
      console.info(`faults-services: with PostgreSQL frozen, requests failed within ${Math.round(slowest)} ms`);
      for (const [i, { res }] of results.entries()) {
        const name = requests[i]![0];
        expect(res.status, name).toBe(500);
        const body = await errorBody(res);
        expect(body.error_type, name).toBe('internal_error');
        expect(body.message, name).toBe('Internal server error.');
        expectNoInternalDetail(JSON.stringify(body), [`:${cluster.port}`, 'timeout']);
        requestIds.push(body.request_id);
      }
      // Never a hang: each was answered while the database was still frozen (it is thawed below), and the log names
      // the bound that ended it (checked below).
    } finally {
      cluster.thaw();
    }
    // The causes are in the log, under the request ids the clients were given.
    await waitFor(
      async () => s.stderr(),
      (log) => requestIds.every((r) => log.includes(r)),
      5000,
      20,
    );
    expect(s.stderr()).toMatch(
      /the database did not answer within \d+ ms|Connection terminated due to connection timeout|timeout exceeded when trying to connect/,
    );
    const thawed = performance.now();
    await waitFor(
      () => s.request('/v1/files'),
      (r) => r.status === 200,
      5000,
      25,
    );
    console.info(`faults-services: the server served again ${Math.round(performance.now() - thawed)} ms after PostgreSQL was resumed`);
    expect((await s.request(`/v1/transcriptions/${id}`)).status).toBe(200);
    // The transcription in flight is not failed for the freeze: it completes, billed once.
    expect(await ended(id)).toMatchObject({ status: 'completed', error_type: null });
    expect(logged('transcription failed unexpectedly', id)).toBe(0);
    expect(await usageOf('frozen')).toHaveLength(1);
    expect(exited).toBe(false);
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------------------------

describe('Redis going away and coming back under two server processes', () => {
  beforeAll(requireRedis);
  const FILES_PER_MIN = 6;
  let redis: PrivateRedis;
  let db: { url: string; drop(): Promise<void> };
  let a: Parlance;
  let b: Parlance;
  const sessions: Session[] = [];
  let heldOnA: Session | undefined;
  let openedDuringOutage: Session | undefined;

  beforeAll(async () => {
    redis = await PrivateRedis.create();
    db = await createPgDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      PARLANCE_RATE_FILES_PROJECT_PER_MIN: String(FILES_PER_MIN),
      PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '1',
      PARLANCE_CONCURRENCY_LEASE_SECONDS: '3',
      // CPU: each node loads one streaming decoder for its sessions, none kept warm beside it.
      PARLANCE_REALTIME_WARM_DECODERS: '0',
      PARLANCE_STT_WORKERS: '1',
      PARLANCE_LOG_LEVEL: 'info',
    };
    a = await startParlance({ env });
    b = await startParlance({ env });
  }, 60_000);

  afterAll(async () => {
    for (const x of sessions) x.stop();
    await a?.stop();
    await b?.stop();
    await redis?.kill();
    await db?.drop();
  });

  const count = (s: Parlance, signal?: AbortSignal) => s.request('/v1/files/count', { signal });
  const remaining = (res: Response) => Number(res.headers.get('ratelimit-remaining'));
  const liveStreams = async (s: Parlance) =>
    ((await (await s.request('/v1/concurrency-limits')).json()) as { project: { current: { transcribe_concurrent: number } } }).project.current
      .transcribe_concurrent;
  const hold = async (s: Parlance) => {
    const x = await holdSession(s);
    sessions.push(x);
    return x;
  };

  it('with Redis up, both nodes count requests against one counter and share the stream cap', async () => {
    const seen = [remaining(await count(a)), remaining(await count(b)), remaining(await count(a))];
    expect(seen).toEqual([FILES_PER_MIN - 1, FILES_PER_MIN - 2, FILES_PER_MIN - 3]);
    heldOnA = await hold(a);
    await waitFor(
      () => liveStreams(b),
      (n) => n === 1,
      10_000,
      50,
    );
    expect(await refusedSession(b)).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
  }, 30_000);

  it('a Redis that stops answering (hung, or a partition) never hangs requests: they are answered while it is still hung', async () => {
    redis.pause();
    try {
      // Counted against the project and the organization: two Redis commands, each given up after 500 ms.
      const { res, ms } = await timed((signal) => count(a, signal));
      expect(res.status).toBe(200);
      // Reporting streams asks Redis for the counts too (given up after 1 s), besides counting the request.
      const report = await timed((signal) => a.request('/v1/concurrency-limits', { signal }));
      expect(report.res.status).toBe(200);
      // A session start counts the request and asks Redis for a slot: both given up, A's own count refuses it.
      const sessionStart = performance.now();
      expect(await refusedSession(a)).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
      const sessionMs = performance.now() - sessionStart;
      // Each gave up on Redis (500 ms a command for counting, 1 s for the slots) and answered before Redis was resumed
      // below. The times are logged only: how long is for the machine to say, not this test.
      console.info(
        `faults-services: with Redis hung a counted request took ${Math.round(ms)} ms, the concurrency report ${Math.round(report.ms)} ms, a session start ${Math.round(sessionMs)} ms`,
      );
    } finally {
      redis.resume();
    }
  }, 30_000);

  it('with Redis gone, requests are served and each node enforces the limits on its own, counting the sessions it holds', async () => {
    await redis.kill();
    const first = await count(b, AbortSignal.timeout(10_000));
    expect(first.status).toBe(200);
    // Node A's own count: at most the per-minute limit passes, then 429 (its earlier insurance counts included).
    let passed = 0;
    let last: Response;
    for (;;) {
      last = (await timed((signal) => count(a, signal))).res;
      if (last.status !== 200) break;
      passed++;
      expect(passed).toBeLessThanOrEqual(FILES_PER_MIN);
    }
    expect(last.status).toBe(429);
    const body = await errorBody(last);
    expect(body.error_type).toBe('limit_exceeded');
    expect(body.message).toContain(`${FILES_PER_MIN} requests per minute`);
    // Node B counts on its own meanwhile.
    expect((await count(b)).status).toBe(200);

    // A holds a session taken in Redis before the outage: it still counts against the cap of 1 on A.
    expect(await refusedSession(a)).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
    // B knows of no session: it opens one, a real one that decodes audio.
    openedDuringOutage = await hold(b);
    await waitFor(
      () => liveStreams(b),
      (n) => n === 1,
      10_000,
      50,
    );
    // ...and its own cap holds there too.
    expect(await refusedSession(b)).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });
    // A's session ends while Redis is away: A's slot is free again.
    heldOnA!.stop();
    await waitFor(
      () => liveStreams(a),
      (n) => n === 0,
      10_000,
      50,
    );
  }, 40_000);

  it('once Redis is back, the nodes count together again, the session opened during the outage included', async () => {
    await redis.start();
    const back = performance.now();
    // Each node's Redis client reconnects on its own schedule (backing off up to 2 s): until it has, that node counts
    // on its own. Three requests in turn, A, B, A, that see one counter go down by one each time show that both
    // count in Redis again. Model listings are counted apart from the file counts below, with room to spare.
    const models = async (s: Parlance) => remaining(await s.request('/v1/models'));
    await waitFor(
      async () => [await models(a), await models(b), await models(a)],
      ([x, y, z]) => y === x! - 1 && z === x! - 2,
      15_000,
      50,
    );
    console.info(`faults-services: shared rate counting resumed ${Math.round(performance.now() - back)} ms after Redis came back`);
    // A had used up its own file count: these pass, counted afresh in Redis (restarted empty: a new window).
    expect([remaining(await count(a)), remaining(await count(b)), remaining(await count(a))]).toEqual([
      FILES_PER_MIN - 1,
      FILES_PER_MIN - 2,
      FILES_PER_MIN - 3,
    ]);

    // The session B opened while Redis was away is counted in Redis now: A sees it, and refuses a second one.
    await waitFor(
      () => liveStreams(a),
      (n) => n === 1,
      10_000,
      50,
    );
    console.info(
      `faults-services: the session opened during the outage counted on every node ${Math.round(performance.now() - back)} ms after Redis came back`,
    );
    expect(await refusedSession(a)).toMatchObject({ error_type: 'limit_exceeded', error_code: 429 });

    // It ends normally, and its slot frees on every node.
    expect(openedDuringOutage).toBeDefined();
    const last = await openedDuringOutage!.finish();
    expect(last).toMatchObject({ finished: true });
    await waitFor(
      () => liveStreams(a),
      (n) => n === 0,
      10_000,
      50,
    );
    const frames = await streamRealtime(a, Buffer.alloc(16000));
    expect(frames.some((f) => f.error_type)).toBe(false);
    expect(frames.at(-1)?.finished).toBe(true);
  }, 40_000);
});
