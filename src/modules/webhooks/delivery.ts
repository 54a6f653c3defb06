// Webhook delivery: one POST of a JSON body per call, through the same SSRF guard as audio_url downloads (a
// webhook pointing at 169.254.169.254 or an internal service is the same attack). The job queue owns the
// retry loop: it calls deliverWebhook, records statusCode as webhook_status_code, and when `retryable` is true
// tries again after webhookBackoffMs(attempt), up to WEBHOOK_MAX_ATTEMPTS.
//
// What a receiver sees: POST, `content-type: application/json`, `user-agent: Parlance-Webhooks/1`, the
// configured auth header exactly as configured, and when a signing secret is set the Standard Webhooks headers
// (`webhook-id` = messageId, stable across retries; `webhook-timestamp`; `webhook-signature`). Redirects are not
// followed. The official SDK's helper accepts only POST with a JSON body {id, status} whose status is
// 'completed' or 'error' (the soniox-sdk profile); the caller chooses the body, this module only delivers it.
import * as http from 'node:http';
import {
  attemptController,
  DownloadBlockedError,
  describeNetworkError,
  guardedRequest,
  parseAllowList,
  type AllowList,
  type GuardedResponse,
  type LookupFunction,
} from '../../lib/ssrf-fetch.js';
import { signWebhook } from './signing.js';

export const WEBHOOK_USER_AGENT = 'Parlance-Webhooks/1';
/** Attempts in all (first delivery + retries) the queue should make before giving up. */
export const WEBHOOK_MAX_ATTEMPTS = 6;
/** At most this much of a receiver's answer is read (then discarded). */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Headers a configured auth header may not replace: they would corrupt the request or its signature. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

export interface WebhookDeliveryOptions {
  url: string;
  /** Serialised with JSON.stringify; the exact bytes sent are the ones signed. */
  body: object;
  authHeaderName?: string | null;
  authHeaderValue?: string | null;
  /** `whsec_<base64>`; when set, Standard Webhooks signature headers are added. */
  signingSecret?: string | null;
  /** Standard Webhooks message id: the same for every retry of one event. */
  messageId: string;
  /** The allowPrivateHosts setting (hosts, IPs, CIDRs). */
  allowPrivateHosts: readonly string[];
  /** Deadline for the whole attempt (DNS, connect, request, response headers). */
  timeoutMs: number;
  /** Ends the attempt early (the server is stopping): the result is a non-retryable "cancelled". */
  signal?: AbortSignal;
  /** DNS lookup (node dns.lookup signature), for tests. */
  lookup?: LookupFunction;
  /** Clock for webhook-timestamp (tests). */
  now?: () => Date;
}

export interface WebhookDeliveryResult {
  /** HTTP status the receiver answered, null when no answer came (network error, timeout, blocked target). */
  statusCode: number | null;
  /** Why the delivery did not succeed (absent on 2xx). Safe to log and to show the job's owner. */
  error?: string;
  /** True for 5xx, network errors and timeouts: the queue should try again later. */
  retryable: boolean;
  /** The SSRF guard refused the address (private or reserved, not in allowPrivateHosts). */
  refused?: boolean;
}

export type WebhookOutcome = 'delivered' | 'refused' | 'retried' | 'failed';

/** How one attempt ended, for metrics; `lastAttempt`: the queue will not try again whatever the result. */
export function webhookOutcome(result: Pick<WebhookDeliveryResult, 'statusCode' | 'retryable' | 'refused'>, lastAttempt: boolean): WebhookOutcome {
  if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) return 'delivered';
  if (result.refused) return 'refused';
  return result.retryable && !lastAttempt ? 'retried' : 'failed';
}

/**
 * Delay before retry number `attempt` (1 = the first retry, after the first delivery failed):
 * 5 s, 30 s, 2 min, 10 min, 30 min, then 30 min for any later one.
 */
export function webhookBackoffMs(attempt: number): number {
  const schedule = [5_000, 30_000, 120_000, 600_000, 1_800_000];
  const i = Math.max(1, Math.floor(attempt)) - 1;
  return schedule[Math.min(i, schedule.length - 1)] ?? 1_800_000;
}

/** Why a webhook to `host` is not delivered, and how to allow it; never names the address the host resolved to. */
export function blockedMessage(host: string): string {
  return `The webhook URL's host ${host} is or resolves to a private or reserved network address; delivery is blocked (PARLANCE_ALLOW_PRIVATE_HOSTS lets named hosts or CIDRs through, e.g. for local development).`;
}

function fail(error: string, retryable: boolean, statusCode: number | null = null): WebhookDeliveryResult {
  return { statusCode, error, retryable };
}

/** Reads and discards up to MAX_RESPONSE_BYTES of the answer; resolves when it ends, errs, or the cap is hit. */
function drain(res: http.IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      res.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen >= MAX_RESPONSE_BYTES) done();
    };
    res.on('data', onData);
    res.once('end', done);
    res.once('close', done);
    res.once('error', done);
  });
}

/** One delivery attempt. Never throws: every outcome is a WebhookDeliveryResult. */
export async function deliverWebhook(opts: WebhookDeliveryOptions): Promise<WebhookDeliveryResult> {
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    return fail('The webhook URL is not valid.', false);
  }
  let allow: AllowList;
  try {
    allow = parseAllowList(opts.allowPrivateHosts);
  } catch (err) {
    return fail(`Invalid allowPrivateHosts setting: ${(err as Error).message}`, false);
  }

  const payload = JSON.stringify(opts.body);
  const bodyBytes = Buffer.from(payload, 'utf8');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(bodyBytes.length),
    'user-agent': WEBHOOK_USER_AGENT,
  };
  if (opts.signingSecret) {
    try {
      Object.assign(headers, signWebhook(opts.signingSecret, opts.messageId, (opts.now ?? (() => new Date()))(), payload));
    } catch (err) {
      return fail(`Cannot sign the webhook: ${(err as Error).message}.`, false);
    }
  }
  const name = opts.authHeaderName?.trim();
  if (name && opts.authHeaderValue !== undefined && opts.authHeaderValue !== null) {
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, opts.authHeaderValue);
    } catch {
      return fail('The webhook auth header name or value is not a valid HTTP header.', false);
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) return fail(`The webhook auth header may not be "${name}".`, false);
    headers[name] = opts.authHeaderValue;
  }

  const ctl = attemptController(opts.timeoutMs, opts.signal);
  let open: GuardedResponse | undefined;
  try {
    open = await guardedRequest(url, {
      method: 'POST',
      headers,
      body: bodyBytes,
      allowList: allow,
      lookup: opts.lookup,
      signal: ctl.signal,
    });
    const status = open.response.statusCode ?? 0;
    // The status is the answer; the body is only read so the receiver is not cut off mid-write. A timeout
    // while draining does not change the outcome.
    await drain(open.response);
    if (status >= 200 && status < 300) return { statusCode: status, retryable: false };
    if (status >= 300 && status < 400) return fail(`The webhook endpoint answered HTTP ${status}; redirects are not followed.`, false, status);
    if (status >= 500) return fail(`The webhook endpoint answered HTTP ${status}.`, true, status);
    return fail(`The webhook endpoint answered HTTP ${status}.`, false, status);
  } catch (err) {
    const failure = describeNetworkError(err, { ...ctl.state, timeoutMs: opts.timeoutMs });
    if (failure instanceof DownloadBlockedError) {
      // Checked when the transcription was created too; DNS may have changed since, or the setting.
      return { statusCode: null, retryable: false, refused: true, error: blockedMessage(url.hostname) };
    }
    return fail(failure.message, failure.retryable);
  } finally {
    open?.close();
    ctl.dispose();
  }
}
