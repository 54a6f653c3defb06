import { errorCatalog, type ErrorType } from './error-catalog.js';

export interface ValidationIssue {
  error_type: string;
  location: string;
  message: string;
}

export interface ApiErrorOptions {
  /** Overrides the catalog status where the spec does (404 invalid_request for unknown routes, ...). */
  status?: number;
  validationErrors?: ValidationIssue[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The one error services throw. Transports render it per surface. */
export class ApiError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  readonly validationErrors: ValidationIssue[];
  readonly headers: Record<string, string>;

  constructor(type: ErrorType, message?: string, opts: ApiErrorOptions = {}) {
    super(message ?? errorCatalog[type].message, { cause: opts.cause });
    this.name = 'ApiError';
    this.type = type;
    this.status = opts.status ?? errorCatalog[type].status;
    this.validationErrors = opts.validationErrors ?? [];
    this.headers = opts.headers ?? {};
  }
}

/**
 * Validation failures as invalid_request: the message `Invalid request: <location>: <message>; ...` and one
 * validation_errors entry per field (the one style of every surface; src/wire/validate.ts).
 */
export function invalidFields(issues: ValidationIssue[]): ApiError {
  const summary = issues.map((v) => `${v.location}: ${v.message}`).join('; ');
  return new ApiError('invalid_request', `Invalid request: ${summary}`, { validationErrors: issues });
}

/** One-field validation failure as invalid_request with a validation_errors entry. */
export function invalidField(location: string, message: string, errorType = 'invalid_value'): ApiError {
  return invalidFields([{ error_type: errorType, location, message }]);
}

/**
 * A session refused or cut because the server is stopping (graceful shutdown). limit_exceeded: the spec's retryable
 * refusal on every streaming surface; the client connects again (to another node, or this one once it is back).
 */
export function shuttingDownError(what: string): ApiError {
  return new ApiError('limit_exceeded', `The server is shutting down: ${what}. Connect again to continue.`);
}

/** What a transport-free service reports for anything thrown: an ApiError as is, anything else as internal_error. */
export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError('internal_error', undefined, { cause: err });
}
