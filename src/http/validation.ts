// Request validation: JSON bodies are validated strictly (a number is not a string: `context: 42` is an
// error, not "42"), while query strings, path parameters and headers — text on the wire — are coerced
// to the schema's types (`?limit=5` is the number 5).
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function make(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, coerceTypes, strict: false });
  addFormats.default(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = make(false);
  const coercing = make('array');
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
}
