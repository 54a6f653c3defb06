// Transport for OpenAI's multipart audio requests: one `file` part streamed to staging through the files service
// (its size limit and caps), and every text field kept, repeated ones as lists (`timestamp_granularities[]` and
// `timestamp_granularities` alike). The fields are then validated against a TypeBox schema, coerced as a query string
// would be ("true" → true, "0.2" → 0.2, one value → a list of one).
import type { TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { validationToApiError } from '../../http/error-mapping.js';
import { validatorCompiler } from '../../http/validation.js';
import { readSingleFileUpload } from '../../http/single-file-upload.js';
import type { AuthContext } from '../auth/service.js';
import type { FilesService, StagedUpload } from '../files/service.js';

/** Fields sent as lists by the SDKs (`name[]`). */
const LIST_FIELDS = new Set(['timestamp_granularities', 'include', 'known_speaker_names', 'known_speaker_references']);

export interface AudioForm {
  staged: StagedUpload;
  fields: Record<string, string | string[]>;
}

export async function readAudioForm(req: FastifyRequest, files: FilesService, auth: AuthContext): Promise<AudioForm> {
  const { staged, fields, lists } = await readSingleFileUpload(req, {
    notMultipart: 'The request must be multipart/form-data with the audio in a "file" part.',
    fields: 'all',
    listFields: LIST_FIELDS,
    filePart: 'send the audio as the one part named "file"',
    // The SDKs stream forms of known size, but a chunked one is fine here: the files service bounds it as it arrives.
    sizeRequired: false,
    precheck: (declared) => files.precheck(auth, declared),
    receive: (file, filename) => files.receive(auth, file, filename || 'audio'),
    discard: (s) => files.discard(s),
  });
  return { staged, fields: { ...fields, ...lists } };
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
      e.keyword === 'enum' && Array.isArray(e.params?.allowedValues)
        ? { ...e, message: `must be one of ${(e.params.allowedValues as string[]).join(', ')}` }
        : e,
    );
    throw validationToApiError(issues, 'body');
  };
}
