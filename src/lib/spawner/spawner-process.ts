// The spawner: a small process forked at start-up that starts the server's child processes (ffmpeg, ffprobe,
// synthesizers, espeak-ng, apertium) and hands their pipes back over IPC. Starting a child from the server itself
// blocks its event loop while the kernel copies the server's page tables (about 75 ms at 1 GB of memory, see
// spawn-child.ts); copying this process's is a millisecond.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import type { FromSpawner, ToSpawner } from './messages.js';

const send = (msg: FromSpawner, handle?: unknown) => process.send!(msg, handle as never);
const live = new Set<ChildProcess>();

process.on('message', (req: ToSpawner) => {
  if (req.op !== 'spawn') return;
  let child: ChildProcess;
  try {
    child = spawn(req.command, req.args, { stdio: req.stdio, env: req.env, cwd: req.cwd, detached: req.detached });
  } catch (err) {
    return send({ op: 'failed', id: req.id, code: (err as NodeJS.ErrnoException).code, message: (err as Error).message });
  }
  if (child.pid === undefined) {
    // Failed to start (ENOENT, EACCES): Node reports it as an 'error' event.
    child.once('error', (err: NodeJS.ErrnoException) => send({ op: 'failed', id: req.id, code: err.code, message: err.message }));
    return;
  }
  live.add(child);
  if (req.nice) {
    try {
      setPriority(child.pid, req.nice);
    } catch {
      // Not permitted: it runs at the spawner's priority.
    }
  }
  send({ op: 'started', id: req.id, pid: child.pid });
  // Node's sockets for the child's output start reading at once; stopped in this same tick (nothing has been read
  // yet), so every byte stays in the pipe for the server. Sending a socket closes it here. A handle waits for the
  // server's acknowledgement of the one before, so a socket may stay here a while: it is taken off the child
  // object, whose exit would otherwise resume reading it ("flush" its stdio) and lose the bytes, or destroy stdin.
  const streams = [child.stdin, child.stdout, child.stderr] as const;
  // (Its exit would also destroy stdin.)
  (child.stdio as unknown[]).fill(null);
  Object.assign(child, { stdin: null, stdout: null, stderr: null });
  streams.forEach((s, fd) => {
    if (!s) return;
    if (fd > 0) (s as unknown as { _handle?: { readStop(): void } })._handle?.readStop();
    send({ op: 'stdio', id: req.id, fd: fd as 0 | 1 | 2 }, s);
  });
  child.once('exit', (code, signal) => {
    live.delete(child);
    send({ op: 'exit', id: req.id, code, signal });
  });
});

// The server is gone: its children lost their pipes; end them and this process.
process.on('disconnect', () => {
  for (const child of live) child.kill('SIGKILL');
  process.exit(0);
});
