// The same contract for both blob stores: the local directory and a real S3-compatible server (s3rver).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/settings.js';
import { startS3, S3_BUCKET, type LocalS3 } from '../../test/s3.js';
import { tempDir } from '../../test/harness.js';
import type { BlobStore } from './blob-store.js';
import { openBlobStore } from './open-blob-store.js';

let s3: LocalS3;
const dirs: string[] = [];
const dataDir = () => {
  const d = tempDir('parlance-blobs-');
  dirs.push(d);
  return d;
};
const s3Settings = (overrides: Record<string, unknown> = {}) => ({
  dataDir: dataDir(),
  blobStore: 's3' as const,
  s3Bucket: S3_BUCKET,
  s3Prefix: 'unit/',
  s3Endpoint: s3.endpoint,
  s3Region: 'us-east-1',
  s3ForcePathStyle: true,
  ...overrides,
});

beforeAll(async () => {
  s3 = await startS3();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
});
afterAll(async () => {
  await s3.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function staged(store: BlobStore, bytes: Buffer): Promise<string> {
  const { tempPath, stream } = store.createTemp();
  await new Promise<void>((resolve, reject) => stream.end(bytes, () => resolve()).once('error', reject));
  return tempPath;
}

const read = (store: BlobStore, key: string) => store.withLocalFile(key, async (file) => readFileSync(file));

describe.each([
  ['local', () => openBlobStore({ ...s3Settings(), blobStore: 'local' })],
  ['s3', () => openBlobStore(s3Settings())],
])('%s blob store', (_name, open) => {
  let store: BlobStore;
  beforeAll(async () => {
    store = await open();
  });

  it('commit stores the temp file under the key and removes the temp', async () => {
    const bytes = randomBytes(1000);
    const temp = await staged(store, bytes);
    await store.commit(temp, 'files/p/a');
    expect(existsSync(temp)).toBe(false);
    expect(await store.exists('files/p/a')).toBe(true);
    expect((await read(store, 'files/p/a')).equals(bytes)).toBe(true);
  });

  it('a large file is stored whole (several multipart parts on S3)', async () => {
    const bytes = randomBytes(20 * 1024 * 1024 + 17);
    await store.commit(await staged(store, bytes), 'files/p/large');
    expect((await read(store, 'files/p/large')).equals(bytes)).toBe(true);
  });

  it('linkOrCopy gives the destination its own bytes: removing the source leaves it', async () => {
    const bytes = randomBytes(500);
    await store.commit(await staged(store, bytes), 'files/p/src');
    await store.linkOrCopy('files/p/src', 'transcriptions/p/t1');
    await store.remove('files/p/src');
    expect(await store.exists('files/p/src')).toBe(false);
    expect((await read(store, 'transcriptions/p/t1')).equals(bytes)).toBe(true);
  });

  it('removing a missing key is not an error; reading one is', async () => {
    await store.remove('files/p/never');
    expect(await store.exists('files/p/never')).toBe(false);
    await expect(read(store, 'files/p/never')).rejects.toThrow();
  });

  it('refuses keys that climb out of the store', async () => {
    await expect(store.remove('../etc/passwd')).rejects.toThrow(/bad blob key/);
  });

  it('discardTemp drops an uncommitted upload', async () => {
    const temp = await staged(store, randomBytes(10));
    await store.discardTemp(temp);
    expect(existsSync(temp)).toBe(false);
  });
});

describe('S3 blob store', () => {
  it('keys live under the prefix, and a scoped local copy is removed after use', async () => {
    const store = await openBlobStore(s3Settings({ s3Prefix: 'scoped/' }));
    await store.commit(await staged(store, Buffer.from('hello')), 'voices/p/v');
    expect([...s3.objects('scoped/').keys()]).toEqual(['scoped/voices/p/v']);
    const seen = await store.withLocalFile('voices/p/v', async (file) => {
      expect(readFileSync(file, 'utf8')).toBe('hello');
      return file;
    });
    expect(existsSync(seen)).toBe(false);
  });

  it('start-up leaves no temp files of an earlier run', async () => {
    const settings = s3Settings();
    const leftover = path.join(settings.dataDir, 'blobs', 'tmp', 'crashed-upload');
    await openBlobStore(settings);
    writeFileSync(leftover, 'x');
    await openBlobStore(settings);
    expect(existsSync(leftover)).toBe(false);
  });

  it('refuses to start with one line when the bucket is missing, unreachable or no bucket is named', async () => {
    const fail = (o: Record<string, unknown>) =>
      openBlobStore(s3Settings(o)).then(
        () => 'opened',
        (e: unknown) => e,
      );
    const missing = await fail({ s3Bucket: 'no-such-bucket' });
    expect(missing).toBeInstanceOf(ConfigError);
    expect((missing as Error).message).toBe(
      `S3 bucket "no-such-bucket" at ${s3.endpoint} is not usable (no such bucket): check PARLANCE_S3_* and the AWS credentials`,
    );
    const unreachable = await fail({ s3Endpoint: 'http://127.0.0.1:9' });
    expect(unreachable).toBeInstanceOf(ConfigError);
    expect((unreachable as Error).message).toMatch(/^S3 bucket "parlance-test" at http:\/\/127\.0\.0\.1:9 is not usable \(ECONNREFUSED\)/);
    expect((unreachable as Error).message).not.toContain('S3RVER');
    const unnamed = await fail({ s3Bucket: '' });
    expect((unnamed as Error).message).toBe('PARLANCE_BLOB_STORE=s3 needs PARLANCE_S3_BUCKET (s3Bucket)');
  }, 60_000);
});
