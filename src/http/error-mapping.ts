// Turns anything thrown inside a request into an ApiError. Fastify's own errors (validation, content type,
// body size, multipart) become invalid_request; anything unknown becomes internal_error with no detail.
import { ApiError } from '../wire/api-error.js';
import { type SchemaIssue, validationToApiError } from '../wire/validate.js';

interface FrameworkError extends Error {
  code?: string;
  statusCode?: number;
  validation?: SchemaIssue[];
  validationContext?: string;
}

const multipartCodes: Record<string, string> = {
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'Request is not multipart/form-data.',
  FST_REQ_FILE_TOO_LARGE: 'File is larger than the per-file limit.',
  FST_PARTS_LIMIT: 'Too many multipart parts.',
  FST_FILES_LIMIT: 'Only one file may be uploaded per request.',
  FST_FIELDS_LIMIT: 'Too many multipart fields.',
  FST_PROTO_VIOLATION: 'Malformed multipart body.',
};

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FrameworkError;
  if (e && Array.isArray(e.validation)) return validationToApiError(e.validation, e.validationContext);
  const code = e?.code ?? '';
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e instanceof SyntaxError)
    return new ApiError('invalid_request', 'Malformed JSON body.', {
      validationErrors: [{ error_type: 'invalid_json', location: 'body', message: 'is not valid JSON' }],
    });
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('invalid_request', 'Request body is too large.');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('invalid_request', 'Unsupported Content-Type for this endpoint.');
  if (code in multipartCodes) return new ApiError('invalid_request', multipartCodes[code]);
  // Busboy and stream errors while reading a multipart body: the request itself was malformed or cut off.
  if (/unexpected end of (form|multipart data)|malformed part header|boundary not found/i.test(e?.message ?? ''))
    return new ApiError('invalid_request', 'Malformed multipart body.');
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new ApiError('invalid_request', 'Invalid request.');
  return new ApiError('internal_error', undefined, { cause: err });
}
