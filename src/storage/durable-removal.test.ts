// Durable blob removal on both databases, against a real S3-compatible server (s3rver) that is stopped and started:
// a refused removal is kept with its backoff, retried only once due, cleared once the store accepts it; a key written
// again is not removed by an older request; two sweepers (two nodes) never both try one key.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES, type OpenedDatabase } from '../../test/databases.js';
import { tempDir, waitFor } from '../../test/harness.js';
import { S3_BUCKET, startS3, type LocalS3 } from '../../test/s3.js';
import { DurablyRemovingBlobStore } from './durable-removal.js';
import { S3BlobStore } from './s3-blob-store.js';
import { TempFiles } from './temp-files.js';

let s3: LocalS3;
beforeAll(async () => {
  s3 = await startS3();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
}, 60_000);
afterAll(async () => s3?.close());

/** A removal asked for while the store is down; the store is back when this returns. */
async function removeWhileDown(blobs: DurablyRemovingBlobStore, key: string): Promise<void> {
  await s3.stop();
  try {
    await blobs.remove(key);
  } finally {
    await s3.start();
  }
}

describe.each(DATABASE_ENGINES)('DurablyRemovingBlobStore (%s)', (dialect, open) => {
  let opened: OpenedDatabase;
  let raw: S3BlobStore;
  const logged: string[] = [];
  const prefix = `${dialect}/`;
  const store = (retryBaseMs: number) =>
    new DurablyRemovingBlobStore(raw, opened.db.kysely, (msg) => logged.push(msg), { retryBaseMs, retryMaxMs: 60_000, sweepIntervalMs: 50 });
  const keys = () => [...s3.objects(prefix).keys()];
  const put = async (key: string) => {
    const tmp = raw.tempPath();
    writeFileSync(tmp, 'bytes');
    await raw.commit(tmp, key);
  };

  beforeAll(async () => {
    opened = await open();
    const temp = new TempFiles(path.join(tempDir('parlance-removal-'), 'tmp'));
    raw = new S3BlobStore({ bucket: S3_BUCKET, prefix, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true }, temp);
    await raw.init();
  }, 60_000);
  afterAll(async () => {
    raw?.close();
    await opened?.cleanup();
  });

  it('keeps a removal the store refused, retries it only once due, and clears it once the store accepts', async () => {
    const blobs = store(1500);
    await put('a');
    await s3.stop();
    let due: string;
    try {
      const before = Date.now();
      await blobs.remove('a'); // does not throw
      const after = Date.now();
      const [row] = await blobs.pending();
      expect(row).toMatchObject({ blob_key: 'a', attempts: 1 });
      expect(row!.last_error).toBeTruthy();
      // Due one backoff (1500 ms, less up to a fifth of jitter) after the refused attempt, which came between these.
      due = row!.next_attempt_at;
      expect(Date.parse(due)).toBeGreaterThanOrEqual(before + 1200);
      expect(Date.parse(due)).toBeLessThanOrEqual(after + 1500);
      expect(logged.some((m) => m.includes('will be retried'))).toBe(true);
    } finally {
      await s3.start();
    }
    // Not due yet: a sweep leaves it. (Its due time is moved an hour ahead for this sweep, so that the sweep comes
    // before it however slow the machine, then put back.)
    const setDue = (at: string) => opened.db.kysely.updateTable('pending_blob_deletions').set({ next_attempt_at: at }).where('blob_key', '=', 'a').execute();
    await setDue(new Date(Date.now() + 3_600_000).toISOString());
    await blobs.sweep();
    expect(keys()).toContain(`${prefix}a`);
    expect(await blobs.pending()).toHaveLength(1);
    await setDue(due);
    await waitFor(
      async () => (await blobs.sweep(), keys()),
      (k) => !k.includes(`${prefix}a`),
      10_000,
      100,
    );
    expect(await blobs.pending()).toEqual([]);
  }, 60_000);

  it('does not remove a key that was written again after the removal was recorded', async () => {
    const blobs = store(10);
    await removeWhileDown(blobs, 'b');
    expect(await blobs.pending()).toHaveLength(1);
    const tmp = blobs.tempPath();
    writeFileSync(tmp, 'new bytes');
    await blobs.commit(tmp, 'b');
    expect(await blobs.pending()).toEqual([]);
    await new Promise((r) => setTimeout(r, 20)); // past the 10 ms backoff the old row had
    await blobs.sweep();
    expect(keys()).toContain(`${prefix}b`);
    await blobs.remove('b');
  }, 60_000);

  it('lets one of two sweepers take a due removal; the sweeper started on a node removes it by itself', async () => {
    // Both "nodes" go through the real store, which counts the removals it is asked for.
    let removals = 0;
    const counted = new Proxy(raw, {
      get: (target, prop, receiver) =>
        prop === 'remove'
          ? (key: string) => {
              removals += 1;
              return target.remove(key);
            }
          : (Reflect.get(target, prop, receiver) as unknown),
    });
    const node = () => new DurablyRemovingBlobStore(counted, opened.db.kysely, () => undefined, { retryBaseMs: 10, sweepIntervalMs: 50 });
    const [one, two] = [node(), node()];
    await put('c');
    await removeWhileDown(one, 'c');
    await new Promise((r) => setTimeout(r, 20)); // past the 10 ms backoff
    removals = 0;
    await Promise.all([one.sweep(), two.sweep()]);
    expect(removals).toBe(1);
    expect(keys()).not.toContain(`${prefix}c`);
    expect(await one.pending()).toEqual([]);

    await put('d');
    await removeWhileDown(one, 'd');
    // The sweeper's schedule (not a sweep called by the test) takes it once due.
    two.startSweeper();
    try {
      await waitFor(
        async () => keys(),
        (k) => !k.includes(`${prefix}d`),
        10_000,
        50,
      );
    } finally {
      await two.stopSweeper();
    }
    expect(await two.pending()).toEqual([]);
  }, 60_000);
});
