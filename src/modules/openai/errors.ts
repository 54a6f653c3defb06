// Native errors in OpenAI's body ({"error": {message, type, param, code}}) with the native status, so OpenAI SDKs raise
// their usual classes (BadRequestError, AuthenticationError, NotFoundError, RateLimitError, ...).
import type { ApiError } from '../../wire/api-error.js';
import type { OpenAiErrorBody } from './schemas.js';

/** Native request fields the OpenAI request names otherwise. */
const PARAM_OF: Record<string, string> = { language_hints: 'language', context: 'prompt', file_id: 'file', translation: 'model' };

/** OpenAI's `code` where clients know one; otherwise the native error_type (listed on /docs/errors). */
const CODE_OF: Record<string, string> = { unauthenticated: 'invalid_api_key', limit_exceeded: 'rate_limit_exceeded', model_not_available: 'model_not_found' };

function typeOf(status: number): string {
  if (status >= 500) return 'server_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 429) return 'rate_limit_error';
  return 'invalid_request_error';
}

export function paramOf(err: ApiError): string | null {
  const location = err.validationErrors[0]?.location;
  if (location) {
    const head = location.split('.')[0]!;
    return PARAM_OF[head] ?? head;
  }
  return err.type === 'model_not_available' ? 'model' : null;
}

export function openAiErrorBody(err: ApiError): OpenAiErrorBody {
  return { error: { message: err.message, type: typeOf(err.status), param: paramOf(err), code: CODE_OF[err.type] ?? err.type } };
}
