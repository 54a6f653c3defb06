// Blobs on the local filesystem. Uploads stream into tmp/ and are renamed into place once accepted, so a
// half-written or rejected upload never shows up under a real key.
import { createWriteStream, type WriteStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { randomToken } from '../lib/ids.js';

export class LocalBlobStore {
  private readonly tmpDir: string;

  constructor(private readonly root: string) {
    this.tmpDir = path.join(root, 'tmp');
  }

  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true });
    // Leftovers of uploads interrupted by a crash: never referenced, safe to drop.
    for (const name of await readdir(this.tmpDir)) await rm(path.join(this.tmpDir, name), { force: true });
  }

  createTemp(): { tempPath: string; stream: WriteStream } {
    const tempPath = path.join(this.tmpDir, `${Date.now()}-${randomToken(9)}`);
    return { tempPath, stream: createWriteStream(tempPath, { flags: 'wx' }) };
  }

  pathOf(key: string): string {
    if (key.includes('..')) throw new Error(`bad blob key ${key}`);
    return path.join(this.root, key);
  }

  async commit(tempPath: string, key: string): Promise<void> {
    const dest = this.pathOf(key);
    await mkdir(path.dirname(dest), { recursive: true });
    await rename(tempPath, dest);
  }

  async ensureParent(key: string): Promise<void> {
    await mkdir(path.dirname(this.pathOf(key)), { recursive: true });
  }

  /**
   * Make `destKey` hold the bytes of `srcKey` without sharing fate: a hard link (instant, no extra space)
   * where the filesystem allows, else a copy. Removing either key later leaves the other intact.
   */
  async linkOrCopy(srcKey: string, destKey: string): Promise<void> {
    const dest = this.pathOf(destKey);
    await this.ensureParent(destKey);
    await rm(dest, { force: true });
    try {
      await link(this.pathOf(srcKey), dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV' && (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
      await copyFile(this.pathOf(srcKey), dest);
    }
  }

  async discardTemp(tempPath: string): Promise<void> {
    await rm(tempPath, { force: true });
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    return stat(this.pathOf(key)).then(
      () => true,
      () => false,
    );
  }
}
