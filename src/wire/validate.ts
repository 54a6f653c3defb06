// The one validation dialect for client input: TypeBox schemas compiled once by Ajv (the configuration Fastify
// validates REST requests with, src/http/validation.ts), and every failure as invalid_request in the REST style:
// the message `Invalid request: <dotted.location>: <message>; ...` and one validation_errors entry per field, its
// error_type from the schema keyword that failed. REST bodies (through Fastify and src/http/error-mapping.ts), both
// sockets' messages, the TTS request and the OpenAI forms all go through here; each surface renders the ApiError in
// its own shape (STT and TTS frames carry the message only).
//
// A schema may carry `errorMessage` (a string): the message of a failure of that schema's own keywords (not of a
// `required` or unknown property, which name another field).
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError, invalidFields, type ValidationIssue } from './api-error.js';

/**
 * An Ajv instance of the dialect. `coerceTypes`: false for JSON (a number is not a string), 'array' for text on the
 * wire (query strings, form fields: "5" is 5, one value a list of one). NaN and Infinity (JSON.parse reads 1e400 as
 * Infinity) are not numbers; errors carry their schema (`verbose`) for `errorMessage`.
 */
export function createAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    coerceTypes,
    strict: false,
    strictNumbers: true,
    verbose: true,
  });
  addFormats.default(ajv);
  return ajv;
}

/** What Ajv reports for one failed keyword (the fields read here). */
export interface SchemaIssue {
  instancePath?: string;
  schemaPath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
  parentSchema?: unknown;
}

/** A failure built here (a union's), its message final. */
type Merged = SchemaIssue & { final: string };

/** The error_type of a failed schema keyword. */
export function issueType(keyword: string | undefined): string {
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

const unescape = (p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~');

/** JSON-pointer "/a/0/b" (+ the missing or unknown property) → dotted "a.0.b"; "" for the root. */
function dottedLocation(issue: SchemaIssue): string {
  const parts = (issue.instancePath ?? '').split('/').filter(Boolean).map(unescape);
  const missing = issue.params?.missingProperty;
  if (issue.keyword === 'required' && typeof missing === 'string') parts.push(missing);
  const extra = issue.params?.additionalProperty;
  if (issue.keyword === 'additionalProperties' && typeof extra === 'string') parts.push(extra);
  return parts.join('.');
}

const literal = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function messageOf(issue: SchemaIssue | Merged): string {
  if ('final' in issue) return issue.final;
  const own = (issue.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof own === 'string' && issue.keyword !== 'required' && issue.keyword !== 'additionalProperties') return own;
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'enum' && Array.isArray(issue.params?.allowedValues)) return `must be one of ${issue.params.allowedValues.map(literal).join(', ')}`;
  if (issue.keyword === 'const' && issue.params && 'allowedValue' in issue.params) return `must be ${JSON.stringify(issue.params.allowedValue)}`;
  return issue.message ?? 'is invalid';
}

/**
 * A union's failure as the failure of the member the value was meant for. Ajv reports every member's errors and then
 * `anyOf`; kept are the errors of the members of the value's type whose discriminator (a `const` property, such as
 * `type`) matched. When none matched, one failure says what was allowed: the discriminator's values, or the
 * members' types and values ("must be string or object", "must be one of a, b").
 */
function pruneUnions(issues: SchemaIssue[]): SchemaIssue[] {
  let list = [...issues];
  const unions = list.filter((e) => e.keyword === 'anyOf').sort((a, b) => (b.schemaPath ?? '').length - (a.schemaPath ?? '').length);
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const at = union.instancePath ?? '';
    const members = new Map<string, SchemaIssue[]>();
    for (const e of list) {
      if (e === union || !e.schemaPath?.startsWith(prefix)) continue;
      const i = e.schemaPath.slice(prefix.length).split('/')[0]!;
      members.set(i, [...(members.get(i) ?? []), e]);
    }
    const valueAt = (e: SchemaIssue) => e.keyword === 'const' || e.keyword === 'enum';
    const wrongType = (m: SchemaIssue[]) => m.some((e) => e.instancePath === at && (e.keyword === 'type' || valueAt(e)));
    const typed = [...members.values()].filter((m) => !wrongType(m));
    let kept: SchemaIssue[] = [];
    let merged: Merged | undefined;
    if (typed.length > 0) {
      // The discriminator: the property one level down whose constant most members refused.
      const counts = new Map<string, number>();
      for (const m of typed)
        for (const e of m)
          if (e.keyword === 'const' && e.instancePath?.startsWith(`${at}/`) && !e.instancePath.slice(at.length + 1).includes('/'))
            counts.set(e.instancePath, (counts.get(e.instancePath) ?? 0) + 1);
      const key = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
      const refused = (m: SchemaIssue[]) => key !== undefined && m.some((e) => e.keyword === 'const' && e.instancePath === key);
      const matched = typed.filter((m) => !refused(m));
      if (matched.length > 0) kept = matched.flat();
      else {
        const values = typed.flatMap((m) => m.filter((e) => e.keyword === 'const' && e.instancePath === key).map((e) => literal(e.params?.allowedValue)));
        merged = { instancePath: key, schemaPath: union.schemaPath, keyword: 'enum', final: `must be one of ${values.join(', ')}` };
      }
    } else {
      const all = [...members.values()].flat().filter((e) => e.instancePath === at);
      const types = [...new Set(all.filter((e) => e.keyword === 'type').map((e) => String(e.params?.type)))];
      const values = all.flatMap((e) =>
        e.keyword === 'const' ? [literal(e.params?.allowedValue)] : e.keyword === 'enum' ? ((e.params?.allowedValues as unknown[]) ?? []).map(literal) : [],
      );
      const own = (union.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
      const message =
        typeof own === 'string'
          ? own
          : values.length > 0
            ? `must be one of ${values.join(', ')}${types.length ? ` or ${types.join(' or ')}` : ''}`
            : `must be ${types.join(' or ')}`;
      merged = { instancePath: at, schemaPath: union.schemaPath, keyword: values.length > 0 ? 'enum' : 'type', final: message };
    }
    const keep = new Set(kept);
    const out: SchemaIssue[] = [];
    for (const e of list) {
      const inUnion = e === union || e.schemaPath?.startsWith(prefix);
      if (!inUnion || keep.has(e)) out.push(e);
      else if (merged) {
        out.push(merged);
        merged = undefined;
      }
    }
    list = out;
  }
  return list;
}

/** Ajv's failures as validation_errors: dotted locations (`root` for the value itself), one entry per field. */
export function validationIssues(issues: SchemaIssue[], root: string): ValidationIssue[] {
  const seen = new Set<string>();
  const out: ValidationIssue[] = [];
  for (const issue of pruneUnions(issues)) {
    const location = dottedLocation(issue) || root;
    if (seen.has(location)) continue;
    seen.add(location);
    out.push({ error_type: issueType(issue.keyword), location, message: messageOf(issue) });
  }
  return out;
}

/** A REST request's failed validation (Fastify's `validation` and `validationContext`) as invalid_request. */
export function validationToApiError(issues: SchemaIssue[], context: string | undefined): ApiError {
  return invalidFields(validationIssues(issues, context === 'body' ? 'body' : (context ?? 'request')));
}

export interface ValidatorOptions {
  /** Coerce text as a query string is ("true" → true, "0.2" → 0.2, one value → a list of one): form fields. */
  coerce?: boolean;
  /** A property whose value is null is treated as absent (everywhere but inside arrays), as the SDKs send it. */
  nullAsAbsent?: boolean;
  /** The location named when the value itself is wrong (not an object, ...). Default `body`. */
  root?: string;
}

/** A compiled schema: the checked value (a copy, with the schema's defaults) or the invalid_request error. */
export interface Validator<T> {
  check(value: unknown): T | ApiError;
  /** check, throwing the error. */
  parse(value: unknown): T;
}

const strict = createAjv(false);
const coercing = createAjv('array');

/** A copy of parsed JSON (the copy is what Ajv coerces and fills with defaults), null properties dropped if asked. */
function copy(value: unknown, dropNulls: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => copy(v, dropNulls));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!(dropNulls && v === null)) out[k] = copy(v, dropNulls);
  return out;
}

/** Compile `schema` once (at module load); check each value against it. */
export function compileValidator<S extends TSchema>(schema: S, opts: ValidatorOptions = {}): Validator<Static<S>> {
  const validate = (opts.coerce ? coercing : strict).compile(schema);
  const root = opts.root ?? 'body';
  const check = (value: unknown): Static<S> | ApiError => {
    const data = copy(value, opts.nullAsAbsent ?? false);
    if (validate(data)) return data as Static<S>;
    return invalidFields(validationIssues((validate.errors ?? []) as ErrorObject[], root));
  };
  return {
    check,
    parse(value) {
      const r = check(value);
      if (r instanceof ApiError) throw r;
      return r;
    },
  };
}
