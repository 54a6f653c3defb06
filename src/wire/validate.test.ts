import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.js';
import { compileValidator, validationToApiError } from './validate.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const Schema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 8 }),
    rate: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    on: Type.Optional(Type.Boolean()),
    format: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['wav', 'mp3'] })),
    code: Type.Optional(Type.String({ pattern: '^[a-z]{2}$', errorMessage: 'must be a language code such as "es"' })),
    hints: Type.Optional(Type.Array(Type.String({ maxLength: 3 }), { maxItems: 2 })),
    nested: Type.Optional(Type.Object({ list: Type.Array(Type.Object({ key: Type.String() })) })),
    context: Type.Optional(Type.Union([Type.String(), Type.Object({ terms: Type.Optional(Type.Array(Type.String())) })])),
    translation: Type.Optional(
      Type.Union([
        Type.Object({ type: Type.Literal('one_way'), target: Type.String() }),
        Type.Object({ type: Type.Literal('two_way'), a: Type.String(), b: Type.String() }),
      ]),
    ),
    prompt: Type.Optional(Nullable(Type.String({ maxLength: 3 }))),
    shape: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
  },
  { additionalProperties: true },
);
const v = compileValidator(Schema);

/** The validation_errors of `value`, as [location, error_type, message]. */
function issues(value: unknown): [string, string, string][] {
  const r = v.check(value);
  if (!(r instanceof ApiError)) throw new Error(`accepted: ${JSON.stringify(value)}`);
  expect(r.type).toBe('invalid_request');
  expect(r.status).toBe(400);
  expect(r.message).toBe(`Invalid request: ${r.validationErrors.map((e) => `${e.location}: ${e.message}`).join('; ')}`);
  return r.validationErrors.map((e) => [e.location, e.error_type, e.message]);
}

describe('compileValidator', () => {
  it('returns the value (a copy) when it is valid, unknown keys kept', () => {
    const body = { model: 'm', extra: { any: 1 }, translation: { type: 'one_way', target: 'de' } };
    const out = v.parse(body);
    expect(out).toEqual(body);
    expect(out).not.toBe(body);
  });

  it('error types per keyword, one entry per field, each located', () => {
    expect(issues({ rate: 0, on: 'yes', format: 'ogg', code: 'ENG', hints: ['en', 'de', 'fr'] })).toEqual([
      ['model', 'missing', 'is required'],
      ['rate', 'out_of_range', 'must be >= 1'],
      ['on', 'invalid_type', 'must be boolean'],
      ['format', 'invalid_value', 'must be one of wav, mp3'],
      ['code', 'invalid_format', 'must be a language code such as "es"'],
      ['hints', 'invalid_length', 'must NOT have more than 2 items'],
    ]);
    expect(issues({ model: 'x'.repeat(9), rate: 1.5 })).toEqual([
      ['model', 'invalid_length', 'must NOT have more than 8 characters'],
      ['rate', 'invalid_type', 'must be integer'],
    ]);
  });

  it('dotted locations for nested fields and array items', () => {
    expect(issues({ model: 'm', hints: ['en', 'english'], nested: { list: [{ key: 'a' }, { key: 1 }, {}] } })).toEqual([
      ['hints.1', 'invalid_length', 'must NOT have more than 3 characters'],
      ['nested.list.1.key', 'invalid_type', 'must be string'],
      ['nested.list.2.key', 'missing', 'is required'],
    ]);
  });

  it('a union reports the member the value was meant for, or what it allows', () => {
    expect(issues({ model: 'm', context: 5 })).toEqual([['context', 'invalid_type', 'must be string or object']]);
    expect(issues({ model: 'm', context: { terms: ['a', 2] } })).toEqual([['context.terms.1', 'invalid_type', 'must be string']]);
    expect(issues({ model: 'm', translation: { type: 'one_way' } })).toEqual([['translation.target', 'missing', 'is required']]);
    expect(issues({ model: 'm', translation: { type: 'three_way' } })).toEqual([['translation.type', 'invalid_value', 'must be one of one_way, two_way']]);
    expect(issues({ model: 'm', prompt: 'long' })).toEqual([['prompt', 'invalid_length', 'must NOT have more than 3 characters']]);
    expect(issues({ model: 'm', prompt: 5 })).toEqual([['prompt', 'invalid_type', 'must be string or null']]);
    expect(issues({ model: 'm', shape: 'c' })).toEqual([['shape', 'invalid_value', 'must be one of a, b']]);
  });

  it('the value itself is named by its root; NaN and Infinity are not numbers', () => {
    expect(issues([1])).toEqual([['body', 'invalid_type', 'must be object']]);
    expect(compileValidator(Schema, { root: 'configuration' }).check('x')).toMatchObject({ message: 'Invalid request: configuration: must be object' });
    expect(issues({ model: 'm', rate: Infinity })).toEqual([['rate', 'invalid_type', 'must be integer']]);
  });

  it('nullAsAbsent drops null properties (not array items); coerce reads text as a query string', () => {
    const loose = compileValidator(Schema, { nullAsAbsent: true });
    expect(loose.parse({ model: 'm', rate: null, nested: { list: [] }, context: { terms: null } })).toEqual({ model: 'm', nested: { list: [] }, context: {} });
    expect(loose.check({ model: null })).toMatchObject({ validationErrors: [{ location: 'model', error_type: 'missing' }] });
    expect(loose.check({ model: 'm', hints: [null] })).toMatchObject({ validationErrors: [{ location: 'hints.0', error_type: 'invalid_type' }] });
    const form = compileValidator(Schema, { coerce: true });
    expect(form.parse({ model: 'm', rate: '5', on: 'true', hints: 'en' })).toEqual({ model: 'm', rate: 5, on: true, hints: ['en'] });
  });

  it('REST failures (Fastify validation) map the same way', () => {
    const err = validationToApiError(
      [{ instancePath: '', keyword: 'required', params: { missingProperty: 'limit' }, message: "must have required property 'limit'" }],
      'querystring',
    );
    expect(err.validationErrors).toEqual([{ location: 'limit', error_type: 'missing', message: 'is required' }]);
    expect(validationToApiError([{ instancePath: '', keyword: 'type', params: { type: 'object' }, message: 'must be object' }], 'body').message).toBe(
      'Invalid request: body: must be object',
    );
  });
});
