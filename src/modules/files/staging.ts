// Streaming one multipart file part to a temporary blob, counting bytes against a limit, never holding more
// than a chunk in memory. Shared by file uploads and cloned-voice reference clips.
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../../storage/blob-store.js';
import { ApiError } from '../../wire/api-error.js';

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
  // An error of the part stream itself means the multipart body was cut off or malformed (the client's fault).
  let sourceError: unknown;
  file.once('error', (err) => (sourceError = err));
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
    await blobs.discardTemp(tempPath);
    if (err instanceof ByteLimitExceeded) throw err;
    if (sinkError !== undefined) throw storageFailure(sinkError);
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new ByteLimitExceeded('file', size);
    if (sourceError !== undefined && err === sourceError) throw new ApiError('invalid_request', 'Malformed multipart body: the file part ended early.');
    throw err;
  }
  return { tempPath, size, partFilename };
}
