// Wire profiles. The core keeps the spec's full state machine; only serialisation differs. `soniox-sdk`
// gives the official SDKs the vocabulary their polling and webhook helpers understand (docs/wire-compat.md,
// "Compatibility profiles").
export type CompatProfile = 'spec' | 'soniox-sdk';

export type TranscriptionStatus = 'queued' | 'downloading' | 'transcribing' | 'completed' | 'failed';

export function wireTranscriptionStatus(status: TranscriptionStatus, profile: CompatProfile): string {
  if (profile === 'spec') return status;
  if (status === 'downloading' || status === 'transcribing') return 'processing';
  if (status === 'failed') return 'error';
  return status;
}

/** Status in a webhook body: the job's terminal outcome. */
export function wireWebhookStatus(status: 'completed' | 'failed', profile: CompatProfile): string {
  return status === 'failed' && profile === 'soniox-sdk' ? 'error' : status;
}
