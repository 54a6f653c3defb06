// The spawner against real processes: run from the compiled dist/ (the spawner process is a compiled file), with
// this process grown to 1 GB so that starting a child directly would block the event loop for tens of ms.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cpuWhile, ROOT, waitFor } from '../../../test/harness.js';
import type * as SpawnModule from './spawn-child.js';

const DIST = path.join(ROOT, 'dist', 'lib', 'spawner', 'spawn-child.js');
let mod: typeof SpawnModule;

beforeAll(async () => {
  if (!existsSync(DIST)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  mod = (await import(pathToFileURL(DIST).href)) as typeof SpawnModule;
  mod.startSpawner();
}, 120_000);

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => (out += d));
    stream.on('end', () => resolve(out));
    stream.on('error', reject);
  });
}

function closed(child: SpawnModule.Child): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolve) => child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve([code, signal])));
}

describe('spawnChild through the spawner process', () => {
  it('pipes stdin, stdout and stderr, and reports the exit code, for many children at once', async () => {
    const runs = Array.from({ length: 20 }, async (_, i) => {
      const child = mod.spawnChild('sh', ['-c', 'tr a-z A-Z; echo "err $0" >&2; exit 3', String(i)]);
      const out = collect(child.stdout);
      const err = collect(child.stderr);
      const done = closed(child);
      child.stdin.end(`hello ${i}\n${'x'.repeat(200_000)}\n`);
      const [code] = await done;
      expect(code).toBe(3);
      expect(child.exitCode).toBe(3);
      expect(child.pid).toBeGreaterThan(0);
      expect(await err).toBe(`err ${i}\n`);
      return out;
    });
    const outs = await Promise.all(runs);
    outs.forEach((o, i) => expect(o).toBe(`HELLO ${i}\n${'X'.repeat(200_000)}\n`));
  });

  it('closes when its reader destroys stdout early, as a spawned child does', async () => {
    const child = mod.spawnChild('sh', ['-c', 'head -c 50000000 /dev/zero']);
    const done = closed(child);
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    // The child loses its pipe (SIGPIPE) instead of blocking on a full one, and 'close' comes.
    const [code, signal] = await done;
    expect(code !== 0 || signal !== null).toBe(true);
  });

  it('keeps output written before the pipes were handed over, and ignores streams on request', async () => {
    const child = mod.spawnChild('sh', ['-c', 'printf early; exec 1>&-; sleep 0.2'], { stdio: ['ignore', 'pipe', 'ignore'] });
    expect(await collect(child.stdout)).toBe('early');
    expect(await collect(child.stderr)).toBe('');
    expect((await closed(child))[0]).toBe(0);
  });

  it('kills, also before the child is known to have started, and sets its priority', async () => {
    const early = mod.spawnChild('sleep', ['30']);
    early.kill('SIGKILL');
    expect(await closed(early)).toEqual([null, 'SIGKILL']);
    const niced = mod.spawnChild('sleep', ['30'], { nice: 7 });
    await new Promise((r) => niced.once('spawn', r));
    const { getPriority } = await import('node:os');
    expect(getPriority(niced.pid!)).toBe(7);
    niced.kill('SIGTERM');
    expect(await closed(niced)).toEqual([null, 'SIGTERM']);
  });

  it('reports a command that does not exist as an error event with its code, then close', async () => {
    const child = mod.spawnChild('/nonexistent/parlance-no-such-command', []);
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
    expect(err.code).toBe('ENOENT');
    await closed(child);
  });

  it('outlives its spawner process: children are killed with it (a detached one with its group), a new one takes over', async () => {
    const live = (pick: (fields: string[], args: string) => boolean) =>
      readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .flatMap((d) => {
          try {
            const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state, ppid, pgrp, ...
            return fields[0] !== 'Z' && pick(fields, readFileSync(`/proc/${d}/cmdline`, 'utf8')) ? [Number(d)] : [];
          } catch {
            return [];
          }
        });
    const spawners = () => live((f, args) => Number(f[1]) === process.pid && args.includes('spawner-process.js'));
    const plain = mod.spawnChild('sleep', ['30']);
    const group = mod.spawnChild('sh', ['-c', 'sleep 30 & wait'], { detached: true });
    await Promise.all([plain, group].map((c) => new Promise((r) => c.once('spawn', r))));
    const [old] = spawners();
    expect(old).toBeGreaterThan(0);
    const ends = Promise.all([closed(plain), closed(group)]);
    process.kill(old!, 'SIGKILL');
    expect(await ends).toEqual([
      [null, 'SIGKILL'],
      [null, 'SIGKILL'],
    ]);
    // The group's backgrounded sleep died too (killed with the group, long before its 30 s are up; the kernel may take a
    // moment to finish it off).
    await waitFor(
      async () => live((f) => Number(f[2]) === group.pid),
      (pids) => pids.length === 0,
      10_000,
      20,
    );
    const next = mod.spawnChild('echo', ['back']);
    expect(await collect(next.stdout)).toBe('back\n');
    expect(spawners()).toHaveLength(1);
    expect(spawners()[0]).not.toBe(old);
  });

  it('sends a request to a new spawner when the one asked was killed an instant before', async () => {
    const first = mod.spawnChild('sleep', ['30']);
    await new Promise((r) => first.once('spawn', r));
    const firstDone = closed(first);
    // Its parent is the spawner; killed here, its exit is not seen before the next request is sent to it.
    const old = Number(readFileSync(`/proc/${first.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    process.kill(old, 'SIGKILL');
    const next = mod.spawnChild('echo', ['still here']);
    const failed = new Promise((resolve) => next.once('error', resolve));
    const out = collect(next.stdout);
    expect(await Promise.race([out, failed])).toBe('still here\n');
    expect(await closed(next)).toEqual([0, null]);
    expect(await firstDone).toEqual([null, 'SIGKILL']);
  });

  it('does not block the event loop while a 1 GB process starts children', async () => {
    const ballast: Buffer[] = [];
    for (let i = 0; i < 1024; i++) ballast.push(Buffer.alloc(1 << 20, 1));
    const direct = await cpuWhile(() => Promise.all(Array.from({ length: 10 }, () => new Promise((r) => spawn('true').once('close', r)))));
    const cpu = await cpuWhile(() => Promise.all(Array.from({ length: 10 }, () => closed(mod.spawnChild('true', [])))));
    expect(ballast.length).toBe(1024);
    console.info(`10 starts: main thread CPU ${cpu.mainMs} ms through the spawner, ${direct.mainMs} ms directly`);
    // Directly, each start copies this process's page tables on the event loop's thread (about 75 ms here, the
    // module's header); through the spawner the copying is the spawner's, and this thread only sends requests.
    // (CPU time, which a busy machine does not inflate as it does a timer's lateness.)
    expect(cpu.mainMs).toBeLessThan(direct.mainMs / 3);
  });
});
