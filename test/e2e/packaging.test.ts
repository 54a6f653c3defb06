// Packaging as text (Dockerfile, deploy/): what can be checked on a machine without Docker Hub. The real tools check
// the files (systemd-analyze, docker-compose, nginx, caddy; `make setup` installs them), and deploy/nginx.conf and
// deploy/Caddyfile run as reverse proxies in front of a real server: an upload, an upload over the server's limit, a
// real-time session with real speech, a streamed POST /tts and a /tts-websocket stream all pass through them.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingDefs } from '../../src/config/setting-defs.js';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import { errorBody, makeAudio, ROOT, startParlance, streamRealtime, tempDir, waitFor, type Parlance, type RealtimeFrame } from '../harness.js';
import { testdataClips } from '../real-speech.js';
import { openTts, probeAudio, startMsg, streamAudio } from './tts-helpers.js';

const execFileP = promisify(execFile);
const deploy = (name: string) => path.join(ROOT, 'deploy', name);
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const HAS = { nginx: has('nginx'), caddy: has('caddy'), compose: has('docker-compose'), systemd: has('systemd-analyze') };
/** A test title that says why it is skipped when its tool is missing. */
const needs = (title: string, available: boolean, tool: string) => (available ? title : `${title} (skipped: ${tool} is not installed; make setup installs it)`);

/** Run a tool; its exit code and both outputs (never throws on a non-zero exit). */
async function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(cmd, args, { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

/** `text` with `from` replaced once; throws when the file no longer has it (the test would check nothing). */
function replaceOnce(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`deploy file no longer contains ${String(from)}`);
  return out;
}

describe('Dockerfile and the install script', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const selected = async (...args: string[]) => (await run('bash', ['scripts/install-debian-packages.sh', '--list', ...args])).stdout.trim().split('\n');

  it('copies and runs only scripts that exist, on a Debian bookworm base with Node.js 20', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    const named = [...dockerfile.matchAll(/scripts\/[\w.-]+/g)].map((m) => m[0]);
    expect(new Set(named)).toEqual(new Set(['scripts/install-debian-packages.sh', 'scripts/debian-packages.txt', 'scripts/install-node-modules.sh']));
    for (const f of named) expect(existsSync(path.join(ROOT, f)), f).toBe(true);
    // The make targets and variables it uses exist in the Makefile.
    const makefile = readFileSync(path.join(ROOT, 'Makefile'), 'utf8');
    expect(dockerfile).toContain('make setup DEBIAN_WITHOUT=test');
    expect(makefile).toMatch(/^setup:/m);
    expect(makefile).toMatch(/^DEBIAN_WITHOUT \?=/m);
    // What the runtime stage copies is what `make setup` builds here.
    for (const from of ['bin', 'dist/cli/main.js', 'native/pocketsphinx/build/Release']) expect(existsSync(path.join(ROOT, from)), from).toBe(true);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/health/m);
    expect(dockerfile).toMatch(/^USER parlance$/m);
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const local of ['node_modules', 'dist', 'native/*/build', '.data']) expect(ignored).toContain(local);
  });

  it('gives the runtime image the run-time packages and leaves out build and test ones', async () => {
    const all = await selected();
    const runtime = await selected('--without', 'build,test');
    expect(runtime.length).toBeGreaterThan(10);
    expect(runtime.every((p) => all.includes(p))).toBe(true);
    for (const p of ['ffmpeg', 'espeak-ng', 'flite', 'festival', 'pocketsphinx-en-us', 'apertium']) expect(runtime).toContain(p);
    for (const p of ['g++', 'make', 'libpocketsphinx-dev', 'pocketsphinx-testdata', 'nginx-light', 'docker-compose']) {
      expect(all).toContain(p);
      expect(runtime).not.toContain(p);
    }
    // The libraries the built addon links are owned by packages of the runtime list.
    const addon = path.join(ROOT, 'native/pocketsphinx/build/Release/pocketsphinx.node');
    const libs = [...(await run('ldd', [addon])).stdout.matchAll(/=> (\/\S+(?:pocketsphinx|sphinxbase)\S*)/g)].map((m) => m[1]!);
    expect(libs).toHaveLength(2);
    for (const lib of libs) {
      // dpkg knows the /usr paths of a merged-/usr system.
      const owner = (await run('dpkg', ['-S', lib.replace(/^\/lib\//, '/usr/lib/')])).stdout.split(':')[0]!;
      expect(runtime, lib).toContain(owner);
    }
    const bad = await run('bash', ['scripts/install-debian-packages.sh', '--frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/usage: .*--without/);
  });
});

describe('systemd unit', () => {
  it.skipIf(!HAS.systemd)(needs('passes systemd-analyze verify without a warning', HAS.systemd, 'systemd-analyze'), async () => {
    // ExecStart must name an executable node: this machine's when it is not /usr/bin/node.
    const dir = tempDir('parlance-unit-');
    const unit = path.join(dir, 'parlance.service');
    writeFileSync(unit, readFileSync(deploy('parlance.service'), 'utf8').replace('/usr/bin/node ', `${process.execPath} `));
    const r = await run('systemd-analyze', ['verify', unit]);
    rmSync(dir, { recursive: true, force: true });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const text = readFileSync(deploy('parlance.service'), 'utf8');
    for (const line of [
      'User=parlance',
      'StateDirectory=parlance',
      'Restart=on-failure',
      'EnvironmentFile=-/etc/parlance/parlance.env',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
    ]) {
      expect(text.split('\n')).toContain(line);
    }
  });
});

describe('compose files', () => {
  const secrets = { POSTGRES_PASSWORD: 'pg-secret', MINIO_ROOT_PASSWORD: 'minio-secret' };

  it.skipIf(!HAS.compose)(needs('validate with docker-compose config', HAS.compose, 'docker-compose'), async () => {
    const one = await run('docker-compose', ['-f', deploy('compose.yaml'), 'config', '--services']);
    expect(one.stderr).toBe('');
    expect(one.stdout.trim().split('\n')).toEqual(['parlance']);
    const cluster = await run('docker-compose', ['-f', deploy('compose.cluster.yaml'), 'config', '--services'], secrets);
    expect(cluster.code, cluster.stderr).toBe(0);
    expect(cluster.stdout.trim().split('\n').sort()).toEqual(['api-1', 'api-2', 'minio', 'minio-bucket', 'postgres', 'proxy', 'redis', 'worker-1', 'worker-2']);
    // The secrets are required, not defaulted.
    const missing = await run('docker-compose', ['-f', deploy('compose.cluster.yaml'), 'config', '-q'], { POSTGRES_PASSWORD: '', MINIO_ROOT_PASSWORD: '' });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/set (POSTGRES_PASSWORD|MINIO_ROOT_PASSWORD)/);
    const resolved = (await run('docker-compose', ['-f', deploy('compose.cluster.yaml'), 'config'], secrets)).stdout;
    expect(resolved).toContain('DATABASE_URL: postgres://parlance:pg-secret@postgres:5432/parlance');
    for (const role of ['api', 'worker']) expect(resolved).toMatch(new RegExp(`- --role\\n\\s+- ${role}\\n`));
  });

  it('set only settings Parlance knows', () => {
    const known = new Set<string>(Object.values(settingDefs).map((d) => d.env));
    for (const file of ['compose.yaml', 'compose.cluster.yaml', 'parlance.service']) {
      const names = [...readFileSync(deploy(file), 'utf8').matchAll(/\b((?:PARLANCE|DATABASE|REDIS)_[A-Z0-9_]+)\b/g)].map((m) => m[1]!);
      expect(names.length, file).toBeGreaterThan(1);
      for (const n of names) {
        expect(known.has(n) || n === 'PARLANCE_CONFIG', `${file}: ${n}`).toBe(true);
      }
    }
  });
});

interface Proxy {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

/** Start `cmd` and wait until GET /health answers through it. */
async function startProxy(cmd: string, args: string[], url: string, dir: string, env: Record<string, string> = {}): Promise<Proxy> {
  const child: ChildProcess = spawn(cmd, args, { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proxy: Proxy = {
    url,
    output: () => output + (existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : ''),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${cmd} exited ${child.exitCode}: ${proxy.output()}`);
        return fetch(`${url}/health`).then(
          (r) => r.status,
          () => 0,
        );
      },
      (status) => status === 200,
      15_000,
      50,
    );
  } catch (err) {
    await proxy.stop();
    throw err;
  }
  return proxy;
}

/** deploy/nginx.conf as it is, its listen and upstream lines pointed at test ports, run by a non-daemon nginx. */
async function startNginx(upstream: URL): Promise<Proxy> {
  const dir = tempDir('parlance-nginx-');
  chmodSync(dir, 0o755); // nginx workers run as nobody when the tests run as root
  const port = await freePort();
  let site = readFileSync(deploy('nginx.conf'), 'utf8');
  site = replaceOnce(site, /^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`);
  site = replaceOnce(site, /^(\s*)server 127\.0\.0\.1:8080;$/m, `$1server ${upstream.host};`);
  writeFileSync(path.join(dir, 'parlance.conf'), site);
  const at = (f: string) => path.join(dir, f);
  writeFileSync(
    at('nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${at('nginx.pid')};`,
      `error_log ${at('error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${at('access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${at(t)};`),
      `  include ${at('parlance.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  return startProxy('nginx', ['-p', dir, '-c', at('nginx.conf'), '-e', at('error.log'), '-g', 'daemon off;'], `http://127.0.0.1:${port}`, dir);
}

/** deploy/Caddyfile as it is, its site address and upstream pointed at test ports, without its admin endpoint. */
async function startCaddy(upstream: URL): Promise<Proxy> {
  const dir = tempDir('parlance-caddy-');
  const port = await freePort();
  let site = readFileSync(deploy('Caddyfile'), 'utf8');
  site = replaceOnce(site, /^parlance\.example\.com \{$/m, `{\n\tadmin off\n}\n\nhttp://127.0.0.1:${port} {`);
  site = replaceOnce(site, 'reverse_proxy 127.0.0.1:8080 {', `reverse_proxy ${upstream.host} {`);
  writeFileSync(path.join(dir, 'Caddyfile'), site);
  return startProxy('caddy', ['run', '--adapter', 'caddyfile', '--config', path.join(dir, 'Caddyfile')], `http://127.0.0.1:${port}`, dir, {
    HOME: dir,
    XDG_CONFIG_HOME: dir,
    XDG_DATA_HOME: dir,
  });
}

describe('configuration files pass their tools', () => {
  it.skipIf(!HAS.nginx)(needs('nginx -t accepts deploy/nginx.conf', HAS.nginx, 'nginx'), async () => {
    const dir = tempDir('parlance-nginx-t-');
    writeFileSync(path.join(dir, 'main.conf'), `pid ${dir}/nginx.pid;\nevents {}\nhttp { include ${deploy('nginx.conf')}; }\n`);
    const r = await run('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'main.conf'), '-e', path.join(dir, 'error.log')]);
    rmSync(dir, { recursive: true, force: true });
    expect(r.stderr).toContain('syntax is ok');
    expect(r.code).toBe(0);
  });

  it.skipIf(!HAS.caddy)(needs('caddy validate accepts deploy/Caddyfile, formatted as caddy fmt writes it', HAS.caddy, 'caddy'), async () => {
    const r = await run('caddy', ['validate', '--adapter', 'caddyfile', '--config', deploy('Caddyfile')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Valid configuration');
    expect((await run('caddy', ['fmt', deploy('Caddyfile')])).stdout).toBe(readFileSync(deploy('Caddyfile'), 'utf8'));
  });
});

const MAX_FILE_BYTES = 2_000_000;
// One server behind both proxies (its speech models load once).
let s: Parlance;
const work = tempDir('parlance-proxy-');
/** The real-speech session sent straight to the server, once. */
let direct: RealtimeFrame[] | undefined;
beforeAll(async () => {
  if (!HAS.nginx && !HAS.caddy) return;
  // Final tokens from the second pass however loaded the machine is: words are checked, not timing.
  s = await startParlance({
    env: { PARLANCE_MAX_FILE_SIZE_BYTES: String(MAX_FILE_BYTES), PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000', PARLANCE_TRUST_PROXY: 'true' },
  });
}, 60_000);
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe.each([
  { name: 'nginx', start: startNginx, available: HAS.nginx },
  { name: 'caddy', start: startCaddy, available: HAS.caddy },
])('Parlance behind $name with the repository config', ({ name, start, available }) => {
  let proxy: Proxy;
  beforeAll(async () => {
    if (available) proxy = await start(new URL(s.url));
  }, 30_000);
  afterAll(async () => proxy?.stop());
  const auth = () => ({ authorization: `Bearer ${s.apiKey}` });

  it.skipIf(!available)(
    needs("streams an upload through, and passes the server's own error for one over its limit", available, name),
    async () => {
      const clip = testdataClips()[0]!.file;
      const form = new FormData();
      form.set('file', new Blob([readFileSync(clip)]), 'speech.wav');
      const res = await fetch(`${proxy.url}/v1/files`, { method: 'POST', headers: auth(), body: form });
      expect(res.status, proxy.output()).toBe(201);
      const file = (await res.json()) as { id: string; size: number };
      expect(file.size).toBe(readFileSync(clip).length);
      const got = await fetch(`${proxy.url}/v1/files/${file.id}`, { headers: auth() });
      expect(((await got.json()) as { id: string }).id).toBe(file.id);

      const big = await makeAudio(path.join(work, 'big.wav'), { seconds: 70 }); // 2.24 MB > the 2 MB limit
      const bigForm = new FormData();
      bigForm.set('file', new Blob([readFileSync(big)]), 'big.wav');
      const refused = await fetch(`${proxy.url}/v1/files`, { method: 'POST', headers: auth(), body: bigForm });
      expect(refused.status).toBe(400);
      const body = await errorBody(refused);
      expect(body.validation_errors.map((v) => v.error_type)).toContain('file_too_large');
    },
    60_000,
  );

  it.skipIf(!available)(
    needs('carries a /transcribe-websocket session with real speech to its finished frame', available, name),
    async () => {
      const clip = testdataClips().find((c) => c.file.endsWith('0890.wav'))!;
      const pcm = (
        await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', clip.file, '-f', 's16le', '-ar', '16000', '-ac', '1', 'pipe:1'], {
          encoding: 'buffer',
          maxBuffer: 64 << 20,
        })
      ).stdout;
      const audio = Buffer.concat([pcm, Buffer.alloc(32_000)]); // and 1 s of silence
      const finalText = (frames: RealtimeFrame[]) =>
        frames.flatMap((f) => f.tokens.filter((t) => t.is_final && t.text !== '<end>').map((t) => t.text)).join('');
      // The whole 5.3 s clip may stay non-final: a finalization forced mid-sentence gives words that depend on the
      // machine's load (the second pass is only waited for while the session keeps up), which is not what this tests.
      const config = { max_non_final_tokens_duration_ms: 6000 };
      const frames = await streamRealtime({ ...s, url: proxy.url }, audio, config);
      expect(frames.at(-1)).toMatchObject({ finished: true });
      const text = finalText(frames);
      expect(wordErrorRate(clip.reference, text.toLowerCase().replace(/[^a-z' ]/g, ' ')).wer, text).toBeLessThan(0.5);
      // What a proxy could change: every audio byte reaches the server (the same audio time as a session straight
      // to it) and every frame comes back in order. The words themselves vary from run to run with the machine's
      // load (the second pass), so they are held to the reference above, not to another run's.
      const audioMs = (f: RealtimeFrame) => [f.final_audio_proc_ms, f.total_audio_proc_ms];
      direct ??= await streamRealtime(s, audio, config);
      expect(audioMs(frames.at(-1)!)).toEqual(audioMs(direct.at(-1)!));
      expect(frames.at(-1)!.total_audio_proc_ms).toBeGreaterThanOrEqual(Math.floor(audio.length / 32) - 20);
      const starts = frames.flatMap((f) => f.tokens.filter((t) => t.is_final && t.text !== '<end>').map((t) => t.start_ms ?? 0));
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
    },
    120_000,
  );

  it.skipIf(!available)(
    needs('streams POST /tts audio as it is made, the same bytes as without the proxy', available, name),
    async () => {
      const body = JSON.stringify({
        model: 'tts-rt-v2',
        language: 'en',
        voice: 'Adrian',
        audio_format: 'pcm_s16le',
        sample_rate: 16000,
        text: 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well. These days a chicken leg is a rare dish.',
      });
      const post = (base: string) => fetch(`${base}/tts`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body });
      const viaProxy = await post(proxy.url);
      expect(viaProxy.status).toBe(200);
      expect(viaProxy.headers.get('content-length')).toBeNull();
      const chunks: Buffer[] = [];
      for await (const chunk of viaProxy.body!) chunks.push(Buffer.from(chunk as Uint8Array));
      expect(chunks.length).toBeGreaterThan(1);
      const audio = Buffer.concat(chunks);
      const direct = Buffer.from(await (await post(s.url)).arrayBuffer());
      expect(audio.equals(direct)).toBe(true);
      expect((await probeAudio(audio, 'pcm_s16le', 16000)).seconds).toBeGreaterThan(5);
    },
    60_000,
  );

  it.skipIf(!available)(
    needs('carries a /tts-websocket stream to its terminated frame', available, name),
    async () => {
      const c = await openTts(proxy.url);
      c.send(startMsg(s.apiKey, 'p1'));
      c.send({ stream_id: 'p1', text: 'Hello through the ', text_end: false });
      c.send({ stream_id: 'p1', text: 'reverse proxy.', text_end: true });
      await c.next((f) => f.stream_id === 'p1' && f.terminated === true, 30_000);
      expect(c.frames.filter((f) => f.error_type)).toEqual([]);
      expect((await probeAudio(streamAudio(c.frames, 'p1'), 'pcm_s16le', 16000)).seconds).toBeGreaterThan(0.5);
      c.ws.close(1000);
      expect((await c.closed).code).toBe(1000);
    },
    60_000,
  );
});
