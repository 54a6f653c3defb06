// The webhook job of a transcription that reached its end: one delivery attempt per run, retried by the queue
// (with its backoff) until the receiver takes it or answers in a way that no retry would change.
import { type Job, PermanentJobError } from '../../jobs/queue.js';
import { type CompatProfile, wireWebhookStatus } from '../../wire/compat.js';
import type { WebhookSender } from './outbound-http.js';
import type { TranscriptionsRepository } from './repository.js';
import type { WebhookJobPayload } from './service.js';

/** Webhook deliveries in flight at once per node. */
export const WEBHOOK_CONCURRENCY = 16;

export interface WebhookJobDeps {
  repo: Pick<TranscriptionsRepository, 'getById' | 'update'>;
  send: WebhookSender;
  profile: CompatProfile;
}

export async function deliverTranscriptionWebhook(deps: WebhookJobDeps, job: Job<WebhookJobPayload>): Promise<void> {
  const row = await deps.repo.getById(job.payload.id);
  if (!row?.webhook_url) return; // deleted, or no webhook
  const result = await deps.send({
    url: row.webhook_url,
    body: { id: row.id, status: wireWebhookStatus(job.payload.status, deps.profile) },
    authHeaderName: row.webhook_auth_header_name,
    authHeaderValue: row.webhook_auth_header_value,
    messageId: `msg_${job.id}`,
    signal: job.signal,
  });
  // Stopping: no verdict on this attempt, the job is given back and delivered after the restart.
  job.signal.throwIfAborted();
  await deps.repo.update(row.id, { webhook_status_code: result.statusCode });
  if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) return;
  const why = result.error ?? `receiver answered ${result.statusCode}`;
  if (!result.retryable) throw new PermanentJobError(`webhook for ${row.id} not delivered: ${why}`);
  throw new Error(`webhook for ${row.id} not delivered yet (attempt ${job.attempt}): ${why}`);
}
