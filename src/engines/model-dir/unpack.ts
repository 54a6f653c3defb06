// The files of a model on their way in (pull.ts): an archive unpacked into the download area, its top folder found,
// the copy checked to stand alone (no links out, no devices or pipes) and made writable; and the download area
// removed once nothing in it is left to resume.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readdirSync, readlinkSync, realpathSync, rmdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PullError } from './pull-error.js';

const execFileP = promisify(execFile);

/** Unpack `archive` (any tar format) into `into`; errors name `source`. */
export async function unpack(archive: string, into: string, source: string): Promise<void> {
  await execFileP('tar', ['-xf', archive, '-C', into]).catch((err: { stderr?: string }) => {
    throw new PullError(`could not unpack ${source}: ${(err.stderr ?? '').trim().split('\n').at(-1) || 'not an archive'}`);
  });
}

/** sherpa-onnx's archives hold one top folder: its contents become the model's folder. */
export function topFolder(dir: string): string {
  const entries = readdirSync(dir);
  return entries.length === 1 && statSync(path.join(dir, entries[0]!)).isDirectory() ? path.join(dir, entries[0]!) : dir;
}

/**
 * A model's folder holds files, folders, and relative links to what is inside it, so that its copy in the models
 * directory stands alone: a link out of it (to a secret of the machine, which the server would then read as a model
 * file; or an absolute one, back into a source that may go away) or to nothing, or a device or pipe (which would stop
 * the copy half-way), refuses the source. `dir`: the folder to import, or an archive unpacked.
 */
export function assertSelfContained(dir: string, source: string): void {
  const base = path.resolve(dir);
  const root = realpathSync(dir);
  const inside = (folder: string, p: string) => p === folder || p.startsWith(folder + path.sep);
  for (const rel of readdirSync(dir, { recursive: true }) as string[]) {
    const p = path.join(base, rel);
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) {
      const link = readlinkSync(p);
      const real = existsSync(p) ? realpathSync(p) : undefined;
      if (path.isAbsolute(link) || !inside(base, path.resolve(path.dirname(p), link)) || real === undefined || !inside(root, real))
        throw new PullError(
          `${source}: ${rel} is a link to ${link}; a model's links must be relative and lead to a file in its folder: put the file itself there`,
        );
    } else if (!stat.isFile() && !stat.isDirectory()) {
      throw new PullError(`${source}: ${rel} is not a file, a folder or a link`);
    }
  }
}

/**
 * Copies and unpacked archives keep their source's modes: those of a read-only folder (a mounted medium) are made
 * writable, for the manifest and `models remove`.
 */
export function ownCopy(dir: string): void {
  for (const p of [dir, ...(readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f))]) {
    const stat = lstatSync(p);
    if (!stat.isSymbolicLink() && !(stat.mode & 0o200)) chmodSync(p, stat.mode | 0o200);
  }
}

export function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty (a partial download to resume), or not there.
  }
}
