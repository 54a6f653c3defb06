// Blobs in an S3-compatible bucket, so nodes on several machines share them without a shared filesystem.
// Uploads stream from the staged temp file in parts (lib-storage: at most PART_BYTES × QUEUE_SIZE in memory per
// upload, whatever the file size); readers that need a file get a scoped local copy.
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { checkKey, type BlobStore, type ReadRange } from './blob-store.js';
import { TempFiles } from './temp-files.js';

const PART_BYTES = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

export interface S3Options {
  bucket: string;
  /** Prepended to every key (e.g. `parlance/`), so one bucket can hold several installations. */
  prefix: string;
  /** An S3-compatible server's URL; empty for AWS itself. */
  endpoint: string;
  region: string;
  forcePathStyle: boolean;
}

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(
    private readonly opts: S3Options,
    private readonly temp: TempFiles,
  ) {
    // Credentials come from the SDK's standard chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, roles).
    this.client = new S3Client({
      region: opts.region,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      forcePathStyle: opts.forcePathStyle,
      maxAttempts: 3,
      // An unreachable or frozen store fails the request instead of hanging it.
      requestHandler: { connectionTimeout: 5000, requestTimeout: 60_000 },
    });
  }

  /** Empties the temp dir and checks the bucket answers (throws the SDK's error otherwise). */
  async init(): Promise<void> {
    await this.temp.init();
    await this.client.send(new HeadBucketCommand({ Bucket: this.opts.bucket }));
  }

  createTemp() {
    return this.temp.create();
  }

  tempPath(): string {
    return this.temp.path();
  }

  discardTemp(tempPath: string): Promise<void> {
    return this.temp.discard(tempPath);
  }

  private keyOf(key: string): string {
    return this.opts.prefix + checkKey(key);
  }

  async commit(tempPath: string, key: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.opts.bucket, Key: this.keyOf(key), Body: createReadStream(tempPath) },
      partSize: PART_BYTES,
      queueSize: QUEUE_SIZE,
    });
    await upload.done();
    await this.temp.discard(tempPath);
  }

  async linkOrCopy(srcKey: string, destKey: string): Promise<void> {
    const source = `${this.opts.bucket}/${this.keyOf(srcKey)}`.split('/').map(encodeURIComponent).join('/');
    await this.client.send(new CopyObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(destKey), CopySource: source }));
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key) }));
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key) }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw err;
    }
  }

  async openRead(key: string, range?: ReadRange): Promise<Readable> {
    const res = await this.client.send(
      new GetObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
    );
    return res.Body as Readable;
  }

  async withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T> {
    const file = this.temp.path();
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key) }));
      await pipeline(res.Body as Readable, createWriteStream(file, { flags: 'wx' }));
      return await use(file);
    } finally {
      await this.temp.discard(file);
    }
  }

  close(): void {
    this.client.destroy();
  }
}
