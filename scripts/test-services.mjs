// The PostgreSQL and Redis the test suite uses (scripts/run-tests.mjs, run by `make test`, starts them first).
//
// For each service: when PARLANCE_TEST_PG_URL / PARLANCE_TEST_REDIS_URL is set, the tests use that and nothing starts.
// Otherwise the port (PARLANCE_TEST_PG_PORT, default 5432; PARLANCE_TEST_REDIS_PORT, default 6379) is probed on
// 127.0.0.1: when something listens there (the machine's own service, as on CI) the tests use it and nothing starts;
// when nothing does, a private instance starts on that port for the run and stops afterwards. Private PostgreSQL is a
// fresh cluster (initdb, trust auth, TCP on 127.0.0.1 only, fsync off) in build/test-services/postgres-<port>/, run as
// the postgres user (or nobody) when we are root, since initdb and postgres refuse root; private Redis keeps nothing
// on disk (no RDB snapshots, no AOF). Their logs stay in build/test-services/ after the run.
//
// The binaries come from the Debian packages postgresql and redis-server (scripts/debian-packages.txt, installed by
// `make setup`); PostgreSQL's live in /usr/lib/postgresql/<version>/bin, which the returned PATH includes.
//
// Usage as a script: node scripts/test-services.mjs [-- command args...]
//   with a command: start what is missing, run the command with PARLANCE_TEST_* set, stop, exit with its code;
//   without: start what is missing, print the settings, and keep the services until interrupted (Ctrl-C).
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Whether something accepts TCP connections on 127.0.0.1:`port` (a probe that hangs counts as taken). */
export function isListening(port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (listening) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(timeoutMs, () => done(true));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Start the services the tests need and nothing listens for. `env` supplies the PARLANCE_TEST_* settings (default
 * process.env), `root` the project (data under <root>/build/test-services). Returns the environment to run the tests
 * with, the names of what it started, and stop(), which stops them (safe to call twice).
 */
export async function startTestServices({ env = process.env, root = ROOT, log = (line) => console.log(`test-services: ${line}`) } = {}) {
  const dir = path.join(root, 'build', 'test-services');
  const started = [];
  const out = {};
  const pgBin = findPostgresBin(env.PATH);
  if (pgBin && !(env.PATH ?? '').split(':').includes(pgBin)) out.PATH = [env.PATH, pgBin].filter(Boolean).join(':');

  try {
    if (env.PARLANCE_TEST_PG_URL) out.PARLANCE_TEST_PG_URL = env.PARLANCE_TEST_PG_URL;
    else {
      const port = parsePort(env.PARLANCE_TEST_PG_PORT, 5432, 'PARLANCE_TEST_PG_PORT');
      out.PARLANCE_TEST_PG_URL = `postgres://postgres@127.0.0.1:${port}/postgres`;
      if (await isListening(port)) log(`PostgreSQL: using what listens on 127.0.0.1:${port}`);
      else {
        if (!pgBin)
          throw new Error(
            `nothing listens on 127.0.0.1:${port} and PostgreSQL's initdb and postgres are not installed: run \`make setup\` (Debian package postgresql)`,
          );
        started.push(await startPostgres(pgBin, port, dir, log));
      }
    }
    if (env.PARLANCE_TEST_REDIS_URL) out.PARLANCE_TEST_REDIS_URL = env.PARLANCE_TEST_REDIS_URL;
    else {
      const port = parsePort(env.PARLANCE_TEST_REDIS_PORT, 6379, 'PARLANCE_TEST_REDIS_PORT');
      out.PARLANCE_TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
      if (await isListening(port)) log(`Redis: using what listens on 127.0.0.1:${port}`);
      else {
        const redis = findExecutable('redis-server', env.PATH);
        if (!redis) throw new Error(`nothing listens on 127.0.0.1:${port} and redis-server is not installed: run \`make setup\` (Debian package redis-server)`);
        started.push(await startRedis(redis, port, dir, log));
      }
    }
  } catch (err) {
    for (const service of started.reverse()) await service.stop();
    throw err;
  }

  let stopping;
  return {
    env: out,
    started: started.map((s) => s.name),
    stop: () =>
      (stopping ??= (async () => {
        for (const service of [...started].reverse()) await service.stop();
      })()),
  };
}

function parsePort(value, fallback, name) {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name}=${value} is not a TCP port`);
  return port;
}

function findExecutable(name, searchPath = process.env.PATH, extra = ['/usr/local/bin', '/usr/bin', '/usr/sbin']) {
  for (const d of [...(searchPath ?? '').split(':'), ...extra]) if (d && existsSync(path.join(d, name))) return path.join(d, name);
  return null;
}

/** The directory with initdb and postgres: on PATH, else Debian's /usr/lib/postgresql/<version>/bin, newest first. */
function findPostgresBin(searchPath) {
  for (const d of (searchPath ?? '').split(':')) if (d && existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'postgres'))) return d;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => /^\d+(\.\d+)?$/.test(v)) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const d = path.join(base, v, 'bin');
    if (existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'postgres'))) return d;
  }
  return null;
}

/** The user PostgreSQL runs as: ourselves, or when we are root the postgres user (Debian's package makes it), else nobody. */
function postgresUser() {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (uid.status === 0 && gid.status === 0) return { name, uid: Number(uid.stdout), gid: Number(gid.stdout) };
  }
  throw new Error('running as root and there is no postgres or nobody user to run PostgreSQL as (initdb refuses root)');
}

async function startPostgres(bin, port, dir, log) {
  const user = postgresUser();
  const ids = user ? { uid: user.uid, gid: user.gid } : {};
  mkdirSync(dir, { recursive: true });
  let home = path.join(dir, `postgres-${port}`);
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home);
  if (user) {
    chownSync(home, user.uid, user.gid);
    // That user must reach the folder (a checkout under /root is closed to it): else a private temporary one.
    if (spawnSync('test', ['-w', home, '-a', '-x', home], ids).status !== 0) {
      rmSync(home, { recursive: true, force: true });
      home = mkdtempSync(path.join(tmpdir(), `parlance-test-postgres-${port}-`));
      chownSync(home, user.uid, user.gid);
    }
  }
  const data = path.join(home, 'data');
  const logFile = path.join(dir, `postgres-${port}.log`);
  log(
    `PostgreSQL: nothing listens on 127.0.0.1:${port}; starting a private cluster in ${shown(data)}${user ? ` as ${user.name}` : ''} (log ${shown(logFile)})`,
  );
  const init = spawnSync(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    ...ids,
    encoding: 'utf8',
  });
  if (init.status !== 0) {
    rmSync(home, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.error?.message ?? `exit ${init.status}`}): ${(init.stderr ?? '').trim()}`);
  }
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    fsync: 'off',
    full_page_writes: 'off',
    synchronous_commit: 'off',
    max_connections: '200',
  };
  const args = ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const child = spawnLogged(path.join(bin, 'postgres'), args, logFile, ids);
  const service = childService('PostgreSQL', child, 'SIGINT', () => rmSync(home, { recursive: true, force: true }));
  try {
    await waitReady(child, logFile, () => pgReady(port));
  } catch (err) {
    await service.stop();
    throw err;
  }
  return service;
}

async function startRedis(bin, port, dir, log) {
  const home = path.join(dir, `redis-${port}`);
  mkdirSync(home, { recursive: true });
  const logFile = path.join(dir, `redis-${port}.log`);
  log(`Redis: nothing listens on 127.0.0.1:${port}; starting a private redis-server without persistence (log ${shown(logFile)})`);
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', home, '--logfile', ''];
  const child = spawnLogged(bin, args, logFile, {});
  const service = childService('Redis', child, 'SIGTERM', () => rmSync(home, { recursive: true, force: true }));
  try {
    await waitReady(child, logFile, () => redisReady(port));
  } catch (err) {
    await service.stop();
    throw err;
  }
  return service;
}

/** A path as the log shows it: relative under the working directory, else absolute. */
const shown = (p) => (p.startsWith(process.cwd() + path.sep) ? path.relative(process.cwd(), p) : p);

// Children still running when this process exits (an error, process.exit) are told to shut down all the same.
const running = new Map();
process.on('exit', () => {
  for (const [child, signal] of running) child.kill(signal);
});

function spawnLogged(bin, args, logFile, ids) {
  const fd = openSync(logFile, 'w');
  try {
    return spawn(bin, args, { stdio: ['ignore', fd, fd], ...ids });
  } finally {
    closeSync(fd);
  }
}

/** stop() sends `signal` (PostgreSQL: SIGINT, a fast shutdown), waits for the exit (SIGKILL after 20 s), then cleans up. */
function childService(name, child, signal, cleanup) {
  const exited = new Promise((resolve) => {
    child.once('exit', resolve);
    child.once('error', resolve);
  });
  running.set(child, signal);
  exited.then(() => running.delete(child));
  let stopping;
  return {
    name,
    child,
    exited,
    stop: () =>
      (stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
          child.kill(signal);
          const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
          await exited;
          clearTimeout(timer);
        }
        cleanup();
      })()),
  };
}

/** Poll `ready` until it answers true; fail with the log's end when the child exits or 30 s pass. */
async function waitReady(child, logFile, ready) {
  let failure;
  child.once('error', (err) => (failure = err.message));
  child.once('exit', (code, signal) => (failure = `exited (${signal ?? `code ${code}`})`));
  const deadline = Date.now() + 30_000;
  while (!failure && Date.now() < deadline) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').slice(-10).join('\n') : '';
  throw new Error(`${path.basename(child.spawnfile)} ${failure ?? 'did not get ready within 30 s'}${tail ? `:\n${tail}` : ''}`);
}

async function pgReady(port) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redisReady(port) {
  return new Promise((resolve) => {
    let reply = '';
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      reply += d.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dash = process.argv.indexOf('--');
  const command = dash === -1 ? [] : process.argv.slice(dash + 1);
  let services;
  let child;
  let interrupted;
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.on(signal, () => {
      interrupted = signal;
      if (child) child.kill(signal);
      else if (services) void services.stop().then(() => process.exit(130));
    });
  try {
    services = await startTestServices();
  } catch (err) {
    console.error(`test-services: ${err.message}`);
    process.exit(1);
  }
  if (interrupted) {
    await services.stop();
    process.exit(130);
  }
  if (!command.length) {
    for (const [k, v] of Object.entries(services.env)) console.log(`${k}=${v}`);
    if (!services.started.length) process.exit(0);
    console.log('test-services: running until interrupted (Ctrl-C)');
    await new Promise(() => undefined);
  }
  child = spawn(command[0], command.slice(1), { stdio: 'inherit', env: { ...process.env, ...services.env } });
  const code = await new Promise((resolve) => {
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    child.on('error', (err) => {
      console.error(`test-services: could not start ${command[0]}: ${err.message}`);
      resolve(1);
    });
  });
  await services.stop();
  process.exit(code);
}
