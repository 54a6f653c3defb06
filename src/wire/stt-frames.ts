// Real-time STT error frame: `{tokens: [], error_code, error_type, error_message, more_info, request_id}`, then the
// server closes with 1000. error_code is the integer HTTP status, and normal frames never carry error_code /
// error_message keys (docs/wire-compat.md, "Real-time STT WebSocket"): they are built in modules/realtime/tokens.ts.
import type { ApiError } from './api-error.js';
import { moreInfoUrl } from './error-catalog.js';

export interface SttErrorFrame {
  tokens: [];
  error_code: number;
  error_type: string;
  error_message: string;
  more_info: string;
  request_id: string;
}

export function sttErrorFrame(err: ApiError, requestId: string, referenceUrl: string): SttErrorFrame {
  return {
    tokens: [],
    error_code: err.status,
    error_type: err.type,
    error_message: err.message,
    more_info: moreInfoUrl(referenceUrl, err.type),
    request_id: requestId,
  };
}
