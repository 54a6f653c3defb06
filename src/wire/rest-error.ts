import { ApiError } from './api-error.js';
import { moreInfoUrl } from './error-catalog.js';

export interface RestErrorBody {
  status_code: number;
  error_type: string;
  message: string;
  validation_errors: { error_type: string; location: string; message: string }[];
  request_id: string;
  more_info: string;
}

/** REST error body exactly as the spec: no other keys, never a stack trace. */
export function restErrorBody(err: ApiError, requestId: string, referenceUrl: string): RestErrorBody {
  return {
    status_code: err.status,
    error_type: err.type,
    message: err.message,
    validation_errors: err.validationErrors,
    request_id: requestId,
    more_info: moreInfoUrl(referenceUrl, err.type),
  };
}
