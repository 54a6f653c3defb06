// The transcription processor's outbound HTTP, built from settings: fetching a job's audio_url and delivering its
// webhook.
import type { Settings } from '../../config/settings.js';
import { DownloadBlockedError, DownloadFailedError, downloadToFile } from '../../lib/ssrf-fetch.js';
import { deliverWebhook } from '../webhooks/delivery.js';

/** A failed audio_url fetch, already classified into the spec's two record-only error types. */
export class AudioFetchError extends Error {
  constructor(
    readonly type: 'file_download_blocked' | 'file_download_failed',
    message: string,
  ) {
    super(message);
  }
}

/** Fetch `url` into `destPath` (SSRF-checked, size- and time-capped) or throw AudioFetchError. */
export type AudioFetcher = (url: string, destPath: string, signal: AbortSignal) => Promise<void>;

export interface WebhookDelivery {
  url: string;
  body: Record<string, unknown>;
  authHeaderName: string | null;
  authHeaderValue: string | null;
  /** Stable per delivery (not per attempt), for receivers that deduplicate. */
  messageId: string;
  /** Aborted when the job queue stops: a receiver that hangs must not hold the shutdown for the attempt's timeout. */
  signal?: AbortSignal;
}
export type WebhookSender = (delivery: WebhookDelivery) => Promise<{ statusCode: number | null; retryable: boolean; error?: string }>;

/** audio_url fetches: SSRF-checked, size- and time-capped; failures classified for the job record. */
export function audioFetcher(settings: Settings): AudioFetcher {
  return async (url, destPath, signal) => {
    try {
      await downloadToFile(url, destPath, {
        allowPrivateHosts: settings.allowPrivateHosts,
        maxBytes: settings.downloadMaxBytes,
        timeoutMs: settings.downloadTimeoutMs,
        signal,
      });
    } catch (err) {
      if (err instanceof DownloadBlockedError) throw new AudioFetchError('file_download_blocked', err.message);
      if (err instanceof DownloadFailedError) throw new AudioFetchError('file_download_failed', err.message);
      throw err;
    }
  };
}

/** Webhook deliveries: signed with the instance's secret when set, SSRF-checked and time-capped. */
export function webhookSender(settings: Settings): WebhookSender {
  return (d) =>
    deliverWebhook({
      url: d.url,
      body: d.body,
      authHeaderName: d.authHeaderName ?? undefined,
      authHeaderValue: d.authHeaderValue ?? undefined,
      signingSecret: settings.webhookSigningSecret || undefined,
      messageId: d.messageId,
      allowPrivateHosts: settings.allowPrivateHosts,
      timeoutMs: settings.webhookTimeoutMs,
      signal: d.signal,
    });
}
