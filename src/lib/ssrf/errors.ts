// The two ways a guarded fetch fails, as the API reports them: a blocked target (file_download_blocked) or a failed
// fetch (file_download_failed). Messages are shown to the API client; `detail` is for server logs only.
/** The target is a private, loopback, link-local, metadata or otherwise reserved address (→ file_download_blocked). */
export class DownloadBlockedError extends Error {
  readonly code = 'file_download_blocked' as const;
  readonly retryable = false;
  readonly status: number | undefined = undefined;
  /** For server logs only (host and address); not for the client. */
  readonly detail: string;
  constructor(message: string, detail: string) {
    super(message);
    this.name = 'DownloadBlockedError';
    this.detail = detail;
  }
}

/** The fetch failed: bad scheme, DNS, TLS, connection, timeout, HTTP 4xx/5xx, size cap (→ file_download_failed). */
export class DownloadFailedError extends Error {
  readonly code = 'file_download_failed' as const;
  readonly retryable: boolean;
  /** HTTP status when the failure was an HTTP answer. */
  readonly status: number | undefined;
  /** True when the caller's AbortSignal stopped the download. */
  readonly aborted: boolean;
  /** For server logs only. */
  readonly detail: string | undefined;
  constructor(message: string, opts: { retryable: boolean; status?: number; aborted?: boolean; detail?: string; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DownloadFailedError';
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.aborted = opts.aborted ?? false;
    this.detail = opts.detail;
  }
}

export const BLOCKED_MESSAGE = 'The URL points to a private or reserved network address; requests to it are blocked.';
