// Transport for OpenAI's multipart audio requests: one `file` part streamed to staging through the files service
// (its size limit and caps), and every text field kept, repeated ones as lists (`timestamp_granularities[]` and
// `timestamp_granularities` alike). The fields are then validated against a TypeBox schema, coerced as a query string
// would be ("true" → true, "0.2" → 0.2, one value → a list of one).
import type { TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { validationToApiError } from '../../http/error-mapping.js';
import { validatorCompiler } from '../../http/validation.js';
import { watchCloseDelimiter } from '../../lib/multipart-close.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import type { FilesService, StagedUpload } from '../files/service.js';

/** Fields sent as lists by the SDKs (`name[]`). */
const LIST_FIELDS = new Set(['timestamp_granularities', 'include', 'known_speaker_names', 'known_speaker_references']);

export interface AudioForm {
  staged: StagedUpload;
  fields: Record<string, string | string[]>;
}

export async function readAudioForm(req: FastifyRequest, files: FilesService, auth: AuthContext): Promise<AudioForm> {
  if (!req.isMultipart()) throw new ApiError('invalid_request', 'The request must be multipart/form-data with the audio in a "file" part.');
  const declared = req.headers['content-length'];
  await files.precheck(auth, declared === undefined ? undefined : Number(declared));
  let staged: StagedUpload | undefined;
  const fields: Record<string, string | string[]> = {};
  try {
    const parts = req.parts();
    const first = parts.next(); // starts the parser; the close-delimiter watcher joins in the same tick
    const closed = watchCloseDelimiter(req.raw, req.headers['content-type']);
    for (let r = await first; !r.done; r = await parts.next()) {
      const part = r.value;
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || staged !== undefined) {
          part.file.resume();
          throw invalidField(part.fieldname, 'unexpected file part; send the audio as the one part named "file"', 'unknown_field');
        }
        staged = await files.receive(auth, part.file, part.filename.replace(/\0/g, '') || 'audio');
        continue;
      }
      const value = String(part.value);
      const name = part.fieldname.endsWith('[]') ? part.fieldname.slice(0, -2) : part.fieldname;
      if (value.includes('\u0000')) throw invalidField(name, 'must not contain NUL characters', 'invalid_format');
      if (LIST_FIELDS.has(name)) fields[name] = [...((fields[name] as string[] | undefined) ?? []), value];
      else fields[name] = value;
    }
    if (!closed()) throw new ApiError('invalid_request', 'Malformed multipart body: it ends before the closing boundary.');
  } catch (err) {
    if (staged !== undefined) await files.discard(staged);
    throw err;
  }
  if (staged === undefined) throw invalidField('file', 'is required', 'missing');
  return { staged, fields };
}

type Check = ((data: unknown) => boolean) & { errors?: { keyword?: string; params?: Record<string, unknown>; message?: string }[] | null };
const compile = validatorCompiler();

/** A validator for the text fields of a form: the typed fields, or invalid_request naming each bad one. */
export function formValidator<T>(schema: TSchema): (fields: Record<string, string | string[]>) => T {
  const check = compile({ schema, httpPart: 'querystring', method: 'POST', url: '' }) as unknown as Check;
  return (fields) => {
    const data: Record<string, unknown> = { ...fields };
    if (check(data)) return data as T;
    const issues = (check.errors ?? []).map((e) =>
      e.keyword === 'enum' && Array.isArray(e.params?.allowedValues) ? { ...e, message: `must be one of ${(e.params.allowedValues as string[]).join(', ')}` } : e,
    );
    throw validationToApiError(issues, 'body');
  };
}
