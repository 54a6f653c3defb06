// Streaming one multipart file part to a temporary blob, counting bytes against a limit, never holding more
// than a chunk in memory. Shared by file uploads, cloned-voice reference clips and speaker enrolment samples
// (ClipStaging: one clip within a size limit, then committed under its key or discarded).
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../../storage/blob-store.js';
import { ApiError, invalidField } from '../../wire/api-error.js';

/** A file received onto disk but not yet accepted. */
export interface StagedUpload {
  tempPath: string;
  size: number;
  partFilename: string;
}

/** The part went over `maxBytes` ('file') or over `roomBytes` ('quota'); `size` is the count when it stopped. */
export class ByteLimitExceeded extends Error {
  constructor(
    readonly cap: 'file' | 'quota',
    readonly size: number,
  ) {
    super(cap);
  }
}

/** The blob store could not take the bytes: the server's fault, answered as internal_error with the cause logged. */
export function storageFailure(cause: unknown): ApiError {
  return new ApiError(
    'internal_error',
    'The server could not store the upload (its storage is full, not writable or not reachable); nothing was kept. Try again later.',
    { cause },
  );
}

/**
 * Stream `file` into a temp blob. Throws ByteLimitExceeded past a limit, ApiError invalid_request when the
 * part itself was cut off; either way the part is drained (so the request can be answered) and the temp removed.
 */
export async function stagePart(
  blobs: BlobStore,
  file: Readable,
  partFilename: string,
  limits: { maxBytes: number; roomBytes?: number },
): Promise<StagedUpload> {
  const { tempPath, stream } = blobs.createTemp();
  // An error of the part stream itself means the multipart body was cut off or malformed (the client's fault); so
  // does its closing before its end without one (the client went away, or was cut for sending too slowly), which
  // pipeline() reports as a premature close of every stream.
  let sourceError: unknown;
  file.once('error', (err) => (sourceError ??= err));
  file.once('close', () => {
    if (!file.readableEnded) sourceError ??= new Error('the part closed before its end');
  });
  // An error the temp file raised itself (disk full, no permission) is the server's. pipeline() hands the first error
  // to every stream, so the file's error counts only when no other stream failed first.
  let sinkError: unknown;
  stream.once('error', (err) => {
    if (sourceError === undefined && !(err instanceof ByteLimitExceeded)) sinkError = err;
  });
  let size = 0;
  const room = limits.roomBytes ?? Infinity;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > limits.maxBytes) return cb(new ByteLimitExceeded('file', size));
      if (size > room) return cb(new ByteLimitExceeded('quota', size));
      cb(null, chunk);
    },
  });
  try {
    await pipeline(file, counter, stream);
    // @fastify/multipart marks a stream cut at its own fileSize limit as truncated.
    if ((file as Readable & { truncated?: boolean }).truncated) throw new ByteLimitExceeded('file', size);
  } catch (err) {
    file.resume(); // drain the rest of the part so the request can be answered
    // pipeline() rejects before the temp file's stream has closed, possibly before its open() has created the file:
    // removed then, the file would be created after and left behind. The destroyed stream closes once opened.
    if (!stream.closed) await new Promise<void>((resolve) => stream.once('close', () => resolve()));
    await blobs.discardTemp(tempPath);
    if (err instanceof ByteLimitExceeded) throw err;
    if (sinkError !== undefined) throw storageFailure(sinkError);
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new ByteLimitExceeded('file', size);
    if (sourceError !== undefined) throw new ApiError('invalid_request', 'Malformed multipart body: the file part ended early.');
    throw err;
  }
  return { tempPath, size, partFilename };
}

/**
 * A reference clip (a cloned voice's, a speaker's enrolment sample): staged to a temp blob within `maxBytes`, then
 * committed under its blob key or discarded. Over the limit is 400 invalid_request naming `what` and the limit.
 */
export class ClipStaging {
  constructor(
    private readonly blobs: BlobStore,
    private readonly maxBytes: number,
    private readonly what: string,
  ) {}

  /** Refuse a declared body far over the limit before reading it (the multipart framing adds a little). */
  precheck(declaredBytes: number | undefined): void {
    if (declaredBytes !== undefined && declaredBytes > this.maxBytes + 1024 * 1024) throw this.tooLarge();
  }

  tooLarge(): ApiError {
    return invalidField('file', `${this.what} is larger than the limit of ${this.maxBytes} bytes`, 'file_too_large');
  }

  async receive(file: Readable, partFilename: string): Promise<StagedUpload> {
    try {
      return await stagePart(this.blobs, file, partFilename, { maxBytes: this.maxBytes });
    } catch (err) {
      if (err instanceof ByteLimitExceeded) throw this.tooLarge();
      throw err;
    }
  }

  /** The staged bytes under `key`; the store failing is the server's fault (internal_error, cause logged). */
  async commit(staged: StagedUpload, key: string): Promise<void> {
    await this.blobs.commit(staged.tempPath, key).catch((err: unknown) => {
      throw storageFailure(err);
    });
  }

  async discard(staged: StagedUpload): Promise<void> {
    await this.blobs.discardTemp(staged.tempPath);
  }
}
