// Turns anything thrown inside a request into an ApiError. Fastify's own errors (validation, content type,
// body size, multipart) become invalid_request; anything unknown becomes internal_error with no detail.
import { ApiError, type ValidationIssue } from '../wire/api-error.js';

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
}

interface FrameworkError extends Error {
  code?: string;
  statusCode?: number;
  validation?: AjvIssue[];
  validationContext?: string;
}

/** JSON-pointer "/a/0/b" (+ missing property) → dotted "a.0.b". */
function dottedLocation(issue: AjvIssue): string {
  const parts = (issue.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = issue.params?.missingProperty;
  if (issue.keyword === 'required' && typeof missing === 'string') parts.push(missing);
  const extra = issue.params?.additionalProperty;
  if (issue.keyword === 'additionalProperties' && typeof extra === 'string') parts.push(extra);
  return parts.join('.');
}

function issueType(keyword: string | undefined): string {
  switch (keyword) {
    case 'required':
      return 'missing';
    case 'type':
      return 'invalid_type';
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return 'out_of_range';
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
      return 'invalid_length';
    case 'enum':
    case 'const':
    case 'anyOf':
      return 'invalid_value';
    case 'format':
    case 'pattern':
      return 'invalid_format';
    case 'additionalProperties':
      return 'unknown_field';
    default:
      return 'invalid_value';
  }
}

export function validationToApiError(issues: AjvIssue[], context: string | undefined): ApiError {
  const seen = new Set<string>();
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    // anyOf/union failures repeat once per branch; one entry per field is enough.
    const location = dottedLocation(issue) || (context === 'body' ? 'body' : (context ?? 'request'));
    if (seen.has(location)) continue;
    seen.add(location);
    out.push({ error_type: issueType(issue.keyword), location, message: issue.message ?? 'is invalid' });
  }
  const summary = out.map((v) => `${v.location}: ${v.message}`).join('; ');
  return new ApiError('invalid_request', `Invalid request: ${summary}`, { validationErrors: out });
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
