// A real S3-compatible server for the tests (s3rver: objects as files in a temp dir), and the settings pointing a
// Parlance node at it. Stopped and started again on the same port and directory, it keeps its objects.
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import S3rver from 's3rver';
import { tempDir } from './harness.js';

export const S3_BUCKET = 'parlance-test';

export interface LocalS3 {
  endpoint: string;
  /** PARLANCE_* and AWS_* variables for a node using this server (under `prefix`). */
  env(prefix?: string): Record<string, string>;
  /** Keys stored under `prefix` with their sizes. */
  objects(prefix?: string): Map<string, number>;
  /** Stop answering (connections refused) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(): Promise<LocalS3> {
  const dir = tempDir('parlance-s3-');
  let port = 0;
  let server: S3rver | undefined;
  const start = async () => {
    server = new S3rver({ address: '127.0.0.1', port, silent: true, directory: dir, configureBuckets: [{ name: S3_BUCKET }] });
    port = (await server.run()).port;
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await server?.close();
    server = undefined;
  };
  return {
    endpoint,
    env: (prefix = '') => ({
      PARLANCE_BLOB_STORE: 's3',
      PARLANCE_S3_BUCKET: S3_BUCKET,
      PARLANCE_S3_PREFIX: prefix,
      PARLANCE_S3_ENDPOINT: endpoint,
      PARLANCE_S3_REGION: 'us-east-1',
      PARLANCE_S3_FORCE_PATH_STYLE: 'true',
      // s3rver's fixed credentials.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    }),
    objects(prefix = '') {
      // s3rver keeps each object as `<key>._S3rver_object` (plus metadata files) under the bucket's folder.
      const root = path.join(dir, S3_BUCKET);
      const out = new Map<string, number>();
      const walk = (d: string) => {
        for (const name of readdirSync(d)) {
          const full = path.join(d, name);
          if (statSync(full).isDirectory()) walk(full);
          else if (name.endsWith('._S3rver_object')) {
            const key = path.relative(root, full).slice(0, -'._S3rver_object'.length);
            if (key.startsWith(prefix)) out.set(key, statSync(full).size);
          }
        }
      };
      walk(root);
      return out;
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
