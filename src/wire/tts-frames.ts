// Text-to-speech error shapes: the HTTP body of POST /tts and the /tts-websocket error frame.
// Normal TTS-WS frames never carry error keys (sdk-wire-notes D7); connection-level error frames carry
// `stream_id: ""` in the spec profile and omit it in the soniox-sdk profile (D9).
import type { ApiError } from './api-error.js';
import type { CompatProfile } from './compat.js';
import { moreInfoUrl } from './error-catalog.js';

export interface TtsErrorBody {
  error_code: number;
  error_type: string;
  error_message: string;
  more_info: string;
  request_id: string;
}

export function ttsErrorBody(err: ApiError, requestId: string, referenceUrl: string): TtsErrorBody {
  return { error_code: err.status, error_type: err.type, error_message: err.message, more_info: moreInfoUrl(referenceUrl, err.type), request_id: requestId };
}

/** A per-stream error frame (`streamId` given) or a connection-level one (`streamId` null). */
export function ttsErrorFrame(err: ApiError, streamId: string | null, requestId: string, referenceUrl: string, profile: CompatProfile): Record<string, unknown> {
  const body = ttsErrorBody(err, requestId, referenceUrl);
  if (streamId !== null) return { stream_id: streamId, ...body };
  return profile === 'soniox-sdk' ? { ...body } : { stream_id: '', ...body };
}
