// Resumable downloads for `models pull`. The bytes go to a partial file in the models directory's download area,
// so that a transfer cut off (network, Ctrl-C) is continued by the next pull of the same URL with an HTTP Range
// request; a server that ignores the range (200 instead of 206), or whose file changed since (If-Range), sends it
// whole again. The checksum always covers the whole file. A partial file is dropped only when it cannot become the
// file (a write error such as a full disk, a wrong checksum, an archive that does not unpack).
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { diskError, PullError } from './pull-error.js';

/** Told about a download as it goes (progress.ts draws it). */
export interface DownloadProgress {
  /** `total`: the file's size when the server says; `from`: bytes already there from an earlier attempt. */
  start(total: number | undefined, from: number): void;
  update(received: number): void;
  end(ok: boolean): void;
}

export interface Downloaded {
  /** SHA-256 of the whole file (hex). */
  sha256: string;
  bytes: number;
  /** Bytes an earlier, interrupted attempt had fetched (0: started afresh). */
  resumedFrom: number;
}

/** What is known of a partial file: its URL, and the validator that says whether the server's file is still the same. */
interface PartInfo {
  url: string;
  validator?: string;
}

/** The partial file of `url` in `dir` (named after the URL's file, plus a hash of the URL, as two URLs may share it). */
export function partFileFor(dir: string, url: string): string {
  const name = path.basename(new URL(url).pathname) || 'download';
  return path.join(dir, `${name}.${createHash('sha256').update(url).digest('hex').slice(0, 8)}.part`);
}

/** Remove a partial file and what is known of it. */
export function discardPart(part: string): void {
  rmSync(part, { force: true });
  rmSync(`${part}.json`, { force: true });
}

/** Download `url` into `part`, continuing what an earlier attempt left there. */
export async function downloadResumable(url: string, part: string, progress?: DownloadProgress): Promise<Downloaded> {
  try {
    mkdirSync(path.dirname(part), { recursive: true });
    const unlock = lock(part, url);
    try {
      return await attempt(url, part, progress, true);
    } finally {
      unlock();
    }
  } catch (err) {
    const e = diskError(err, path.dirname(part));
    // A partial file the disk refused to grow is of no use.
    if (e !== err) discardPart(part);
    throw e;
  }
}

async function attempt(url: string, part: string, progress: DownloadProgress | undefined, mayRestart: boolean): Promise<Downloaded> {
  const info = readInfo(part);
  const have = info?.url === url && existsSync(part) ? statSync(part).size : 0;
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (have) {
    headers.range = `bytes=${have}-`;
    if (info?.validator) headers['if-range'] = info.validator;
  }
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'follow', headers });
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    throw new PullError(`could not download ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, 'download');
  }
  const range = res.headers.get('content-range') ?? '';
  if (have && (res.status === 416 || (res.status === 206 && Number(/^bytes (\d+)-/.exec(range)?.[1]) !== have))) {
    await res.body?.cancel();
    // 416 with the size we have: the earlier attempt got it all, only not the rest of the pull.
    if (res.status === 416 && Number(/\/(\d+)$/.exec(range)?.[1]) === have) return { sha256: await hashFile(part), bytes: have, resumedFrom: have };
    discardPart(part);
    if (mayRestart) return attempt(url, part, progress, false);
    throw new PullError(`could not download ${url}: the server answered the range request with HTTP ${res.status} ${range}`, 'download');
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new PullError(`could not download ${url}: HTTP ${res.status}`, 'download');
  }
  const resuming = have > 0 && res.status === 206;
  const from = resuming ? have : 0;
  const total = resuming ? Number(/\/(\d+)$/.exec(range)?.[1]) || undefined : Number(res.headers.get('content-length')) || undefined;
  if (!resuming) writeInfo(part, { url, validator: validatorOf(res) });
  const hash = createHash('sha256');
  if (resuming) await hashInto(hash, part);
  return receive(res.body as ReadableStream<Uint8Array>, { url, part, hash, from, total, progress });
}

async function receive(
  body: ReadableStream<Uint8Array>,
  d: { url: string; part: string; hash: Hash; from: number; total: number | undefined; progress?: DownloadProgress },
): Promise<Downloaded> {
  const file = await open(d.part, d.from ? 'a' : 'w');
  const chunks = Readable.fromWeb(body)[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let received = d.from;
  d.progress?.start(d.total, d.from);
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw cutOff(d.url, received, d.total, (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message);
      }
      if (next.done) break;
      try {
        await file.write(next.value);
      } catch (err) {
        await chunks.return?.();
        throw err;
      }
      d.hash.update(next.value);
      received += next.value.length;
      d.progress?.update(received);
    }
    if (d.total !== undefined && received !== d.total) throw cutOff(d.url, received, d.total, 'the connection closed early');
    d.progress?.end(true);
  } catch (err) {
    d.progress?.end(false);
    throw err;
  } finally {
    await file.close().catch(() => {});
  }
  return { sha256: d.hash.digest('hex'), bytes: received, resumedFrom: d.from };
}

function cutOff(url: string, received: number, total: number | undefined, why: string): PullError {
  const mb = (n: number) => (n / 1e6).toFixed(1);
  return new PullError(
    `the download of ${url} was cut off at ${mb(received)}${total ? ` of ${mb(total)}` : ''} MB (${why}); pull again to resume it`,
    'download',
  );
}

/** A strong ETag, else Last-Modified: what If-Range may carry. */
function validatorOf(res: Response): string | undefined {
  const etag = res.headers.get('etag');
  return etag && !etag.startsWith('W/') ? etag : (res.headers.get('last-modified') ?? undefined);
}

function readInfo(part: string): PartInfo | undefined {
  try {
    return JSON.parse(readFileSync(`${part}.json`, 'utf8')) as PartInfo;
  } catch {
    return undefined;
  }
}

function writeInfo(part: string, info: PartInfo): void {
  writeFileSync(`${part}.json`, `${JSON.stringify(info)}\n`);
}

/** SHA-256 of a file (hex). */
export async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  await hashInto(hash, file);
  return hash.digest('hex');
}

async function hashInto(hash: Hash, file: string): Promise<void> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
}

/** One pull at a time per partial file: two appending to it would interleave their bytes. */
function lock(part: string, url: string): () => void {
  const file = `${part}.lock`;
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        rmSync(file, { force: true });
        throw err;
      }
      const pid = Number(readFileSync(file, 'utf8'));
      if (pid && pid !== process.pid && alive(pid)) throw new PullError(`another pull is downloading ${url} (process ${pid}); wait for it to end`, 'download');
      // Left by a pull that was killed.
      rmSync(file, { force: true });
    }
  }
  throw new PullError(`could not lock ${file}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
