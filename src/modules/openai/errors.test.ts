import { describe, expect, it } from 'vitest';
import { ApiError, invalidField } from '../../wire/api-error.js';
import { openAiErrorBody } from './errors.js';

describe('openAiErrorBody', () => {
  it("keeps the message, names the param and gives OpenAI's type and code for each status", () => {
    expect(openAiErrorBody(new ApiError('unauthenticated', 'Invalid API key.'))).toEqual({
      error: { message: 'Invalid API key.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
    expect(openAiErrorBody(new ApiError('model_not_available', 'no'))).toMatchObject({
      error: { param: 'model', code: 'model_not_found', type: 'invalid_request_error' },
    });
    expect(openAiErrorBody(new ApiError('limit_exceeded'))).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    expect(openAiErrorBody(new ApiError('organization_balance_exhausted'))).toMatchObject({
      error: { type: 'insufficient_quota', code: 'organization_balance_exhausted' },
    });
    expect(openAiErrorBody(new ApiError('internal_error'))).toMatchObject({ error: { type: 'server_error', code: 'internal_error', param: null } });
    expect(openAiErrorBody(new ApiError('file_not_found'))).toMatchObject({ error: { type: 'invalid_request_error', code: 'file_not_found' } });
  });

  it('names the OpenAI field behind a native one', () => {
    expect(openAiErrorBody(invalidField('language_hints.0', 'bad')).error.param).toBe('language');
    expect(openAiErrorBody(invalidField('context', 'bad')).error.param).toBe('prompt');
    expect(openAiErrorBody(invalidField('timestamp_granularities.1', 'bad')).error.param).toBe('timestamp_granularities');
  });
});
