// audio_url downloads through the SSRF guard: redirects followed hop by hop (each hop guarded), the size cap, the
// body streamed to disk, and transient failures retried with exponential back-off.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type AllowList, parseAllowList } from './address-policy.js';
import { DownloadBlockedError, DownloadFailedError } from './errors.js';
import { attemptController, describeNetworkError } from './failures.js';
import { guardedRequest, type GuardedResponse, type LookupFunction } from './pinned-request.js';

export interface DownloadOptions {
  /** Hosts, IPs or CIDRs that bypass the private-address block (the allowPrivateHosts setting). */
  allowPrivateHosts: readonly string[];
  /** Largest body accepted, in bytes; a larger Content-Length or a longer body fails the download. */
  maxBytes: number;
  /** Deadline for one attempt (DNS, connect, every redirect hop and the whole body). */
  timeoutMs: number;
  /** Longest silence on the socket (default min(timeoutMs, 30 s)). */
  idleTimeoutMs?: number;
  /** Redirects followed (default 5). */
  maxRedirects?: number;
  /** Extra attempts after a transient failure (5xx, reset, refused, timeout, EAI_AGAIN). Default 2. */
  retries?: number;
  /** Delay before retry n (0-based) is retryDelayMs * 2^n. Default 500. */
  retryDelayMs?: number;
  signal?: AbortSignal;
  /** DNS lookup (node dns.lookup signature); tests map names to loopback with it. */
  lookup?: LookupFunction;
  /** Told of the bytes received so far (and the announced size, if any) as the body arrives. */
  onProgress?: (received: number, total: number | undefined) => void;
}

export interface DownloadResult {
  bytes: number;
  contentType: string | null;
  /** URL of the last hop, without credentials. */
  finalUrl: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'Parlance/1 (audio_url fetch)';

function withoutCredentials(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

class ByteLimit extends Transform {
  bytes = 0;
  constructor(
    private readonly max: number,
    private readonly onBytes?: (received: number) => void,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max) return cb(tooLarge(this.max));
    this.onBytes?.(this.bytes);
    cb(null, chunk);
  }
}

function tooLarge(max: number): DownloadFailedError {
  return new DownloadFailedError(`The file is larger than ${max} bytes.`, { retryable: false });
}

/** Marks errors of the destination file (disk full, permissions): internal, not a download failure. */
class LocalWriteError extends Error {
  constructor(readonly original: unknown) {
    super('local write failed');
  }
}

async function attemptDownload(startUrl: string, destPath: string, opts: DownloadOptions, allow: AllowList): Promise<DownloadResult> {
  const timeoutMs = opts.timeoutMs;
  const ctl = attemptController(timeoutMs, opts.signal);
  const maxRedirects = opts.maxRedirects ?? 5;
  let current: URL;
  try {
    current = new URL(startUrl);
  } catch {
    ctl.dispose();
    throw new DownloadFailedError('The URL is not valid.', { retryable: false });
  }
  const idleTimeoutMs = opts.idleTimeoutMs ?? Math.min(timeoutMs, 30_000);
  let idleFired = false;
  let open: GuardedResponse | undefined;
  try {
    for (let hop = 0; ; hop++) {
      open = await guardedRequest(current, {
        method: 'GET',
        headers: { 'user-agent': USER_AGENT, accept: '*/*', 'accept-encoding': 'identity' },
        allowList: allow,
        lookup: opts.lookup,
        signal: ctl.signal,
        idleTimeoutMs,
        onIdleTimeout: () => (idleFired = true),
      });
      const res = open.response;
      const status = res.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status) && res.headers.location !== undefined) {
        const location = res.headers.location;
        open.close();
        open = undefined;
        if (hop >= maxRedirects) throw new DownloadFailedError(`Too many redirects (more than ${maxRedirects}).`, { retryable: false });
        try {
          current = new URL(location, current);
        } catch {
          throw new DownloadFailedError('The server redirected to an invalid URL.', { retryable: false });
        }
        continue;
      }
      if (status < 200 || status >= 300) {
        throw new DownloadFailedError(`The server answered HTTP ${status}.`, { retryable: status >= 500, status });
      }
      const announced = res.headers['content-length'];
      if (announced !== undefined && /^\d+$/.test(announced) && Number(announced) > opts.maxBytes) throw tooLarge(opts.maxBytes);
      const total = announced !== undefined && /^\d+$/.test(announced) ? Number(announced) : undefined;
      const limit = new ByteLimit(opts.maxBytes, opts.onProgress && ((received) => opts.onProgress!(received, total)));
      const file = createWriteStream(destPath, { flags: 'w' });
      // pipeline() hands the first error to every stream, so only an error the file raised before any other
      // stream failed is a local write failure.
      let upstreamFailed = false;
      let writeError: unknown;
      res.once('error', () => (upstreamFailed = true));
      limit.once('error', () => (upstreamFailed = true));
      file.once('error', (err) => {
        if (!upstreamFailed) writeError = err;
      });
      try {
        await pipeline(res, limit, file);
      } catch (err) {
        if (writeError !== undefined && err === writeError) throw new LocalWriteError(writeError);
        throw err;
      }
      const contentType = res.headers['content-type'] ?? null;
      return { bytes: limit.bytes, contentType, finalUrl: withoutCredentials(current) };
    }
  } catch (err) {
    if (err instanceof LocalWriteError) throw err;
    throw describeNetworkError(err, { ...ctl.state, timeoutMs, idleMs: idleFired ? idleTimeoutMs : undefined });
  } finally {
    open?.close();
    ctl.dispose();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Downloads `url` to `destPath` through the SSRF guard, streaming to disk. On failure the (partial) file is
 * removed and a DownloadBlockedError or DownloadFailedError is thrown; an error writing the local file (disk full,
 * permissions) is rethrown as it is, since it is a server fault and not the URL's.
 * Transient failures (5xx, connection refused/reset, timeouts, EAI_AGAIN) are retried `retries` times; 4xx,
 * ENOTFOUND, TLS errors, size cap, bad scheme, too many redirects and blocked targets are not.
 */
export async function downloadToFile(url: string, destPath: string, opts: DownloadOptions): Promise<DownloadResult> {
  const allow = parseAllowList(opts.allowPrivateHosts);
  const retries = opts.retries ?? 2;
  const baseDelay = opts.retryDelayMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptDownload(url, destPath, opts, allow);
    } catch (err) {
      await rm(destPath, { force: true });
      if (err instanceof LocalWriteError) throw err.original;
      const failure = err as DownloadBlockedError | DownloadFailedError;
      if (!failure.retryable || attempt >= retries || opts.signal?.aborted) throw failure;
      await sleep(baseDelay * 2 ** attempt, opts.signal);
      if (opts.signal?.aborted) throw new DownloadFailedError('The request was cancelled.', { retryable: false, aborted: true });
    }
  }
}
