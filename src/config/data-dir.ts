// The data directory must be a directory this process can write (the SQLite database, blobs, caches). Checked once
// at start so that a wrong --data-dir ends with one line and exit 2, not a stack trace from the first write.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './settings.js';

const WHY: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a file is in the way',
  ENOSPC: 'the disk is full',
  ENOENT: 'it cannot be created there',
  EEXIST: 'a file is in the way',
};

function unusable(dir: string, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const why = WHY[code] ?? (code || (err as Error).message);
  return new ConfigError(`data directory ${dir} is not usable: ${why}; choose another with --data-dir (PARLANCE_DATA_DIR) or fix its permissions`);
}

/** Create `dir` (and its parents) if needed and check that it is a writable directory; throws ConfigError. */
export function ensureDataDir(dir: string): void {
  // Missing components are created one by one: a recursive mkdir loops forever where the kernel answers ENOENT
  // for a directory whose parent exists (/proc, /sys).
  const missing: string[] = [];
  let at = path.resolve(dir);
  for (;;) {
    try {
      if (!statSync(at).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unusable(dir, err);
      missing.unshift(at);
      const parent = path.dirname(at);
      if (parent === at) throw unusable(dir, err);
      at = parent;
    }
  }
  try {
    for (const d of missing) mkdirSync(d);
    const probe = path.join(dir, `.parlance-write-check-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (err) {
    throw unusable(dir, err);
  }
}
