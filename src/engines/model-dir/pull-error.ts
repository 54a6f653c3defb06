// A pull or import that cannot be done; the CLI prints its message as one line and exits 2.
export class PullError extends Error {}

/** Errors of the disk under the models directory (full, read-only, not ours), which a pull reports in one line. */
const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO']);

/** `err` as a PullError naming `where` when the disk refused; otherwise `err` itself. */
export function diskError(err: unknown, where: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return !(err instanceof PullError) && code && DISK_ERRORS.has(code) ? new PullError(`could not write in ${where}: ${code}`) : err;
}
