// Request validation: JSON bodies are validated strictly (a number is not a string: `context: 42` is an
// error, not "42"), while query strings, path parameters and headers — text on the wire — are coerced
// to the schema's types (`?limit=5` is the number 5). The Ajv configuration is the one dialect of every client
// input (src/wire/validate.ts); failures become invalid_request in src/http/error-mapping.ts.
import type { FastifySchemaCompiler } from 'fastify';
import { createAjv } from '../wire/validate.js';

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = createAjv(false);
  const coercing = createAjv('array');
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
}
