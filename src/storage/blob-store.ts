// Where uploaded bytes live: the local data directory (default) or an S3-compatible bucket several nodes share.
// Uploads always stage in a local temp file first, so a half-written or rejected upload never shows up under a key.
import type { WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';

/** Bytes `start` to `end`, both included (as in an HTTP Range). */
export interface ReadRange {
  start: number;
  end: number;
}

export interface BlobStore {
  /** Make the store ready (temp dir emptied; for S3, the bucket checked). */
  init(): Promise<void>;
  /** A fresh local temp file being written; pass its path to commit() or discardTemp(). */
  createTemp(): { tempPath: string; stream: WriteStream };
  /** A fresh local temp path, for writers that create the file themselves. */
  tempPath(): string;
  discardTemp(tempPath: string): Promise<void>;
  /** Store the finished temp file under `key` (streamed, never read whole); the temp is gone afterwards. */
  commit(tempPath: string, key: string): Promise<void>;
  /** Make `destKey` hold the bytes of `srcKey` without sharing fate: removing either later leaves the other. */
  linkOrCopy(srcKey: string, destKey: string): Promise<void>;
  remove(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** The key's bytes (or the range of them) as a stream, read as it is consumed; rejects if the key is missing. */
  openRead(key: string, range?: ReadRange): Promise<Readable>;
  /** Run `use` on a local file with the key's bytes (a scoped copy where blobs are not local files). */
  withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T>;
}

export function checkKey(key: string): string {
  if (key.includes('..') || key.startsWith('/')) throw new Error(`bad blob key ${key}`);
  return key;
}
