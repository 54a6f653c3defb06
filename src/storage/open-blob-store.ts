// The blob store the settings name, ready to use: `local` under the data directory, or `s3` (bucket checked now, so
// a wrong endpoint, bucket or key stops `parlance serve` with one line instead of failing the first upload).
import path from 'node:path';
import { ConfigError, type Settings } from '../config/settings.js';
import type { BlobStore } from './blob-store.js';
import { LocalBlobStore } from './local-blob-store.js';
import { TempFiles } from './temp-files.js';

type BlobSettings = Pick<Settings, 'dataDir' | 'blobStore' | 's3Bucket' | 's3Prefix' | 's3Endpoint' | 's3Region' | 's3ForcePathStyle'>;

export async function openBlobStore(settings: BlobSettings): Promise<BlobStore> {
  const root = path.join(settings.dataDir, 'blobs');
  if (settings.blobStore === 'local') {
    const store = new LocalBlobStore(root);
    await store.init();
    return store;
  }
  if (!settings.s3Bucket) throw new ConfigError('PARLANCE_BLOB_STORE=s3 needs PARLANCE_S3_BUCKET (s3Bucket)');
  // Loaded only when used: the SDK is large and a local store needs none of it.
  const { S3BlobStore } = await import('./s3-blob-store.js');
  const store = new S3BlobStore(
    {
      bucket: settings.s3Bucket,
      prefix: settings.s3Prefix,
      endpoint: settings.s3Endpoint,
      region: settings.s3Region,
      forcePathStyle: settings.s3ForcePathStyle,
    },
    new TempFiles(path.join(root, 'tmp')),
  );
  try {
    await store.init();
  } catch (err) {
    store.close();
    const where = settings.s3Endpoint ? ` at ${settings.s3Endpoint}` : '';
    throw new ConfigError(`S3 bucket "${settings.s3Bucket}"${where} is not usable (${s3Reason(err)}): check PARLANCE_S3_* and the AWS credentials`);
  }
  return store;
}

/** A short reason without the SDK's stack or request detail. */
function s3Reason(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (status === 404) return 'no such bucket';
  if (status === 403 || status === 401) return 'access denied';
  if (status) return `HTTP ${status}`;
  return e.code ?? (e.message || e.name || 'unreachable');
}
