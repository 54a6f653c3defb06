// A disk that fills up, for the fault-injection tests: a small tmpfs of the test's own (CI runs as root) filled to
// the last byte, so every write the server makes meets a real ENOSPC.
import { execFile } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { tempDir } from './harness.js';

const execFileP = promisify(execFile);

/** Mount a tmpfs of `mb` MiB at `dir`; false where this process may not mount (not root, no CAP_SYS_ADMIN). */
export async function mountTmpfs(dir: string, mb: number): Promise<boolean> {
  try {
    await execFileP('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir]);
    return true;
  } catch {
    return false;
  }
}

/** Unmount (lazily: files the server still holds open do not block it); quiet when nothing is mounted. */
export async function unmount(dir: string): Promise<void> {
  await execFileP('umount', ['-l', dir]).catch(() => undefined);
}

/** Whether this process may mount a tmpfs: tried once on a scratch directory. */
export async function canMountTmpfs(): Promise<boolean> {
  const dir = tempDir('parlance-mount-probe-');
  try {
    if (!(await mountTmpfs(dir, 1))) return false;
    await unmount(dir);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Write zeros into `file` until the filesystem refuses (ENOSPC), down to the last byte. */
export function fillDisk(file: string): void {
  for (const block of [Buffer.alloc(64 * 1024), Buffer.alloc(1)]) {
    const fd = openSync(file, 'a');
    try {
      for (;;) writeSync(fd, block);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      closeSync(fd);
    }
  }
}
