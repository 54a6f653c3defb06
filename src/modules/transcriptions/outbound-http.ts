// The transcription processor's outbound HTTP, built from settings: fetching a job's audio_url and delivering its
// webhook.
import type { Settings } from '../../config/settings.js';
import { DownloadBlockedError, DownloadFailedError, downloadToFile } from '../../lib/ssrf-fetch.js';
import { deliverWebhook } from '../webhooks/delivery.js';
import { AudioFetchError, type AudioFetcher, type WebhookSender } from './processor.js';

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
