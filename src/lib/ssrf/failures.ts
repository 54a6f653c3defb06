// Errors of a guarded request or its response stream, classified as the API reports them (blocked, or failed and
// whether a retry may help), and the timer + caller signal of one attempt.
import { BLOCKED_MESSAGE, DownloadBlockedError, DownloadFailedError } from './errors.js';
import { IdleTimeoutError } from './pinned-request.js';

const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

/** True for errors raised by request-filtering-agent's own check (our second line). */
function isAgentBlock(err: unknown): boolean {
  return err instanceof Error && /^DNS lookup .* is not allowed\./.test(err.message);
}

/**
 * Turns an error from guardedRequest / the response stream into a DownloadBlockedError or DownloadFailedError.
 * `timedOut` and `aborted` say whether the caller's overall timer or the caller's own signal fired.
 */
export function describeNetworkError(
  err: unknown,
  ctx: { timedOut: boolean; aborted: boolean; timeoutMs: number; idleMs?: number | undefined },
): DownloadBlockedError | DownloadFailedError {
  if (err instanceof DownloadBlockedError || err instanceof DownloadFailedError) return err;
  if (isAgentBlock(err)) return new DownloadBlockedError(BLOCKED_MESSAGE, (err as Error).message);
  if (ctx.aborted) return new DownloadFailedError('The request was cancelled.', { retryable: false, aborted: true, cause: err });
  if (ctx.timedOut) return new DownloadFailedError(`The request timed out after ${ctx.timeoutMs} ms.`, { retryable: true, cause: err });
  if (err instanceof IdleTimeoutError) return new DownloadFailedError(`No data was received for ${err.idleMs} ms.`, { retryable: true, cause: err });
  if (ctx.idleMs !== undefined) return new DownloadFailedError(`No data was received for ${ctx.idleMs} ms.`, { retryable: true, cause: err });
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const detail = err instanceof Error ? err.message : String(err);
  if (code === 'ECONNREFUSED') return new DownloadFailedError('The connection was refused.', { retryable: true, detail, cause: err });
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new DownloadFailedError('The connection was closed unexpectedly.', { retryable: true, detail, cause: err });
  }
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME') return new DownloadFailedError('Could not resolve the host.', { retryable: false, detail, cause: err });
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME/i.test(code)) {
    return new DownloadFailedError(`TLS error (${code}).`, { retryable: false, detail, cause: err });
  }
  if (code.startsWith('HPE_')) return new DownloadFailedError('The server sent a malformed HTTP response.', { retryable: true, detail, cause: err });
  if (RETRYABLE_CODES.has(code)) return new DownloadFailedError(`Network error (${code}).`, { retryable: true, detail, cause: err });
  return new DownloadFailedError(code ? `Network error (${code}).` : 'Network error.', { retryable: true, detail, cause: err });
}

/** Per-request timer + caller signal, merged into one AbortSignal with a record of which fired. */
export function attemptController(
  timeoutMs: number,
  outer?: AbortSignal,
): { signal: AbortSignal; state: { timedOut: boolean; aborted: boolean }; dispose(): void } {
  const controller = new AbortController();
  const state = { timedOut: false, aborted: false };
  const timer = setTimeout(() => {
    state.timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onOuter = () => {
    state.aborted = true;
    controller.abort(outer?.reason);
  };
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: controller.signal,
    state,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}
