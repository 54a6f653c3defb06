// Child processes started through the spawner process (spawner-process.ts), so that starting one never blocks the
// event loop. Node (libuv 1.46) starts a child by cloning the calling process: the kernel copies its page tables
// while the event loop waits, about 75 ms per child at 1 GB of memory (a server with its speech models loaded) and
// 166 ms at 3 GB, against under 2 ms for a small process. Under load (a child per synthesized sentence, per upload
// probe, per decode) that was most of the event loop's time. The spawner is small, so its copies are cheap; it
// hands each child's pipes back over IPC and this side exposes them as a ChildProcess-like object.
// Without a compiled spawner (TypeScript sources run by tsx in unit tests), children are started directly.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { lowerProcessPriority } from '../priority.js';
import type { FromSpawner, StdioMode, ToSpawner } from './messages.js';

const SPAWNER_FILE = fileURLToPath(new URL('./spawner-process.js', import.meta.url));

export interface SpawnOptions {
  /** stdin, stdout, stderr: 'pipe' (default) or 'ignore'; an ignored stream is an empty placeholder. */
  stdio?: [StdioMode, StdioMode, StdioMode];
  env?: Record<string, string | undefined>;
  cwd?: string;
  detached?: boolean;
  /** OS niceness of the child (lib/priority.ts). */
  nice?: number;
}

/** The part of ChildProcess the server uses: the same events ('spawn', 'exit', 'close', 'error') and fields. */
export interface Child extends EventEmitter {
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
  /** Let the process exit without waiting for this child (a spare kept ready). */
  unref(): void;
}

class RemoteChild extends EventEmitter implements Child {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private pendingKill: NodeJS.Signals | undefined;
  private exited = false;
  private openOutputs: number;
  private readonly sockets: Socket[] = [];
  /** The piped streams whose handle has arrived (or was reported lost). */
  private readonly attached = new Set<0 | 1 | 2>();
  /** Whether this child keeps the process alive. */
  refed = true;
  /** Sends the spawn request again, while that may still be tried (notStarted). */
  retry: (() => void) | undefined;

  constructor(
    private readonly stdio: [StdioMode, StdioMode, StdioMode],
    /** Started in a process group of its own (killed as a group when its spawner dies). */
    private readonly detached = false,
  ) {
    super();
    this.openOutputs = 0;
    for (const fd of [1, 2] as const) {
      const placeholder = fd === 1 ? this.stdout : this.stderr;
      if (stdio[fd] === 'ignore') placeholder.end();
      else this.openOutputs++;
    }
    if (stdio[0] === 'ignore') this.stdin.resume();
  }

  unref(): void {
    this.refed = false;
    for (const s of this.sockets) s.unref();
    updateChannelRef();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exited) return false;
    if (this.pid === undefined) {
      this.pendingKill = signal;
      return true;
    }
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  started(pid: number): void {
    this.pid = pid;
    this.emit('spawn');
    if (this.pendingKill) this.kill(this.pendingKill);
  }

  attach(fd: 0 | 1 | 2, socket: Socket | undefined): void {
    if (this.attached.has(fd)) {
      socket?.destroy();
      return;
    }
    this.attached.add(fd);
    if (!socket) {
      // The spawner lost the pipe before handing it over (it reports nothing else then): an empty stream.
      if (fd === 0) this.stdin.resume();
      else {
        (fd === 1 ? this.stdout : this.stderr).end();
        this.outputClosed();
      }
      return;
    }
    this.sockets.push(socket);
    if (!this.refed) socket.unref();
    if (fd === 0) {
      socket.on('error', (err) => this.stdin.destroy(err));
      this.stdin.pipe(socket);
      return;
    }
    const placeholder = fd === 1 ? this.stdout : this.stderr;
    socket.on('error', (err) => placeholder.destroy(err));
    socket.once('close', () => this.outputClosed());
    socket.pipe(placeholder);
    // A reader that gives up early destroys the stream: the pipe to the child goes too (as with spawn()), or the
    // paused socket would never close and the child's 'close' never come.
    placeholder.once('close', () => socket.destroy());
  }

  exit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
    this.maybeClose();
  }

  /**
   * The spawner died: this child lost its reporter. It is killed (with its group when detached, so no pipeline
   * member outlives it), streams never handed over end empty, and it is reported ended by SIGKILL. Callers see what
   * they see of any child killed from outside; one not known to have started fails with an error instead.
   */
  orphaned(): void {
    if (this.exited) return;
    if (this.pid === undefined) return this.notStarted(new Error('the spawner process exited before the child started'));
    try {
      process.kill(this.detached ? -this.pid : this.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    for (const fd of [0, 1, 2] as const) if (this.stdio[fd] === 'pipe' && !this.attached.has(fd)) this.attach(fd, undefined);
    this.exit(null, 'SIGKILL');
  }

  /**
   * The request never reached a live spawner (it died first, or the channel broke): asked once more of a new one,
   * which nothing can tell from a slow start; a second loss fails the child.
   */
  notStarted(err: Error): void {
    const retry = this.retry;
    this.retry = undefined;
    if (retry) retry();
    else this.fail(err);
  }

  fail(err: Error): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = -1;
    this.emit('error', err);
    this.stdout.end();
    this.stderr.end();
    this.openOutputs = 0;
    this.maybeClose();
  }

  private outputClosed(): void {
    this.openOutputs--;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.exited && this.openOutputs <= 0) {
      this.openOutputs = Infinity; // once
      setImmediate(() => this.emit('close', this.exitCode, this.signalCode));
    }
  }
}

let spawner: ChildProcess | undefined;
let nextId = 0;
/** The children waiting for reports, by request id, with the spawner asked. */
const children = new Map<number, { child: RemoteChild; from: ChildProcess }>();

function onMessage(msg: FromSpawner, handle: unknown): void {
  const child = children.get(msg.id)?.child;
  if (!child) {
    (handle as Socket | undefined)?.destroy();
    return;
  }
  switch (msg.op) {
    case 'started':
      return child.started(msg.pid);
    case 'stdio':
      return child.attach(msg.fd, handle as Socket | undefined);
    case 'exit':
      forget(msg.id);
      return child.exit(msg.code, msg.signal);
    case 'failed': {
      forget(msg.id);
      const err = Object.assign(new Error(msg.message), { code: msg.code });
      return child.fail(err);
    }
  }
}

function forget(id: number): void {
  children.delete(id);
  updateChannelRef();
}

/** The spawner's channel keeps the process alive only while a child it waits for does (not for unref'd ones). */
function updateChannelRef(): void {
  const channel = spawner?.channel;
  if (!channel) return;
  if ([...children.values()].some((c) => c.child.refed)) channel.ref();
  else channel.unref();
}

function getSpawner(): ChildProcess | undefined {
  if (spawner) return spawner;
  if (!existsSync(SPAWNER_FILE)) return undefined;
  const sp = fork(SPAWNER_FILE, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  sp.on('message', onMessage);
  sp.on('error', () => undefined);
  sp.once('exit', () => {
    // The next spawnChild forks a new spawner (from this process as it is now: one slow fork, once).
    if (spawner === sp) spawner = undefined;
    // Children it started lost their reporter: end them, and report them ended. Requests it never answered go
    // to the next spawner.
    for (const [id, { child, from }] of children) {
      if (from !== sp) continue;
      children.delete(id);
      child.orphaned();
    }
    updateChannelRef();
  });
  sp.unref();
  sp.channel?.unref();
  spawner = sp;
  return sp;
}

/**
 * Start the spawner now, while this process is still small (it is forked from it once). Called as the server
 * starts; later calls, and spawnChild, reuse it (or start a new one if it died).
 */
export function startSpawner(): void {
  getSpawner();
}

/** Start `command` like child_process.spawn, without blocking the event loop. */
export function spawnChild(command: string, args: readonly string[], options: SpawnOptions = {}): Child {
  const stdio = options.stdio ?? ['pipe', 'pipe', 'pipe'];
  const sp = getSpawner();
  if (!sp?.connected) return spawnDirect(command, args, stdio, options);
  const child = new RemoteChild(stdio, options.detached);
  const req: Omit<ToSpawner, 'id'> = {
    op: 'spawn',
    command,
    args: [...args],
    stdio,
    env: options.env,
    cwd: options.cwd,
    detached: options.detached,
    nice: options.nice,
  };
  // A spawner killed an instant ago still looks connected until its exit is seen: the request then goes to the
  // next one, so the caller never sees the old one's death.
  child.retry = () => {
    if (spawner === sp) {
      spawner = undefined;
      sp.kill('SIGKILL');
    }
    const next = getSpawner();
    if (next?.connected) ask(next, child, req);
    else child.fail(new Error('the spawner process could not be restarted'));
  };
  ask(sp, child, req);
  return child;
}

function ask(sp: ChildProcess, child: RemoteChild, req: Omit<ToSpawner, 'id'>): void {
  const id = nextId++;
  children.set(id, { child, from: sp });
  updateChannelRef();
  sp.send({ ...req, id }, (err) => {
    if (!err || children.get(id)?.child !== child) return;
    forget(id);
    child.notStarted(err);
  });
}

function spawnDirect(command: string, args: readonly string[], stdio: [StdioMode, StdioMode, StdioMode], options: SpawnOptions): Child {
  const child = spawn(command, args, { stdio, env: options.env, cwd: options.cwd, detached: options.detached });
  if (options.nice) lowerProcessPriority(child.pid, options.nice);
  // Ignored streams are empty placeholders, as through the spawner.
  const empty = () => new PassThrough().end() as PassThrough;
  return Object.assign(child, {
    stdin: child.stdin ?? new PassThrough().resume(),
    stdout: child.stdout ?? empty(),
    stderr: child.stderr ?? empty(),
  }) as unknown as Child;
}

/** Run `command` to its end, collecting its output (stderr up to 8 KB); killed after `timeoutMs`. */
export function runChild(
  command: string,
  args: readonly string[],
  options: { input?: string; timeoutMs: number; nice?: number },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnChild(command, args, { stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], nice: options.nice });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 8192) stderr += d;
    });
    if (options.input !== undefined) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
