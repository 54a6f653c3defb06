// Scheduling priorities of the server's helpers, highest first: the event loop and live transcription (threads of
// the server process, nice 0); work a client waits for, speech synthesis and its encoders, the checks of an upload
// and live second passes (nice 5); batch work, the decoding of files (nice 10). Best effort: not Linux, not
// permitted, or already exited, and the work runs at the server's priority.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

export const INTERACTIVE_NICE = 5;
export const BATCH_NICE = 10;

/** Lower the priority of a child process. */
export function lowerProcessPriority(pid: number | undefined, nice: number): void {
  if (pid === undefined) return;
  try {
    setPriority(pid, nice);
  } catch {
    // See above.
  }
}

/** Lower the priority of the calling thread only: on Linux a thread id given to setpriority names one thread. */
export function lowerThreadPriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0) setPriority(tid, nice);
  } catch {
    // See above.
  }
}
