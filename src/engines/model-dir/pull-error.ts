// A pull or import that cannot be done; the CLI prints its message as one line and exits 2. `kind` says what went
// wrong where the HTTP pulls (modules/models) report it as a record's error type: the disk refused (`disk`), the
// bytes were not the expected ones (`checksum`), the download failed (`download`); none: the source is no usable
// model.
export type PullErrorKind = 'disk' | 'checksum' | 'download';

export class PullError extends Error {
  constructor(
    message: string,
    readonly kind?: PullErrorKind,
  ) {
    super(message);
    this.name = 'PullError';
  }
}

/** Errors of the disk under the models directory (full, read-only, not ours), which a pull reports in one line. */
const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO']);

/** `err` as a PullError naming `where` when the disk refused; otherwise `err` itself. */
export function diskError(err: unknown, where: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return !(err instanceof PullError) && code && DISK_ERRORS.has(code) ? new PullError(`could not write in ${where}: ${code}`, 'disk') : err;
}
