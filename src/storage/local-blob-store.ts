// Blobs on the local filesystem: temp files are renamed into place once accepted.
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import path from 'node:path';
import { checkKey, type BlobStore, type ReadRange } from './blob-store.js';
import { TempFiles } from './temp-files.js';

export class LocalBlobStore implements BlobStore {
  private readonly temp: TempFiles;

  constructor(private readonly root: string) {
    this.temp = new TempFiles(path.join(root, 'tmp'));
  }

  init(): Promise<void> {
    return this.temp.init();
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

  private pathOf(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  async commit(tempPath: string, key: string): Promise<void> {
    const dest = this.pathOf(key);
    await mkdir(path.dirname(dest), { recursive: true });
    await rename(tempPath, dest);
  }

  /** A hard link (instant, no extra space) where the filesystem allows, else a copy. */
  async linkOrCopy(srcKey: string, destKey: string): Promise<void> {
    const dest = this.pathOf(destKey);
    await mkdir(path.dirname(dest), { recursive: true });
    await rm(dest, { force: true });
    try {
      await link(this.pathOf(srcKey), dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV' && (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
      await copyFile(this.pathOf(srcKey), dest);
    }
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

  openRead(key: string, range?: ReadRange): Promise<Readable> {
    const stream = createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
    // Resolve once the file is open, so a missing key rejects here rather than in the middle of a response.
    return new Promise((resolve, reject) => {
      stream.once('open', () => resolve(stream));
      stream.once('error', reject);
    });
  }

  withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T> {
    return use(this.pathOf(key));
  }
}
