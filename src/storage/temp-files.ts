// The local temp directory every blob store stages uploads in (and S3 readers copy objects to).
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomToken } from '../lib/ids.js';

export class TempFiles {
  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Leftovers of uploads interrupted by a crash: never referenced, safe to drop.
    for (const name of await readdir(this.dir)) await rm(path.join(this.dir, name), { force: true });
  }

  path(): string {
    return path.join(this.dir, `${Date.now()}-${randomToken(9)}`);
  }

  create(): { tempPath: string; stream: WriteStream } {
    const tempPath = this.path();
    return { tempPath, stream: createWriteStream(tempPath, { flags: 'wx' }) };
  }

  async discard(tempPath: string): Promise<void> {
    await rm(tempPath, { force: true });
  }
}
