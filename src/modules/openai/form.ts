// Transport for OpenAI's multipart audio requests: one `file` part streamed to staging through the files service
// (its size limit and caps), and every text field kept, repeated ones as lists (`timestamp_granularities[]` and
// `timestamp_granularities` alike). The fields are then validated against a TypeBox schema (src/wire/validate.ts),
// coerced as a query string would be ("true" → true, "0.2" → 0.2, one value → a list of one).
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { readSingleFileUpload, type WiderLimits } from '../../http/single-file-upload.js';
import type { AuthContext } from '../auth/service.js';
import type { FilesService, StagedUpload } from '../files/service.js';
import { compileValidator } from '../../wire/validate.js';

/** Fields sent as lists by the SDKs (`name[]`). */
const LIST_FIELDS = new Set(['timestamp_granularities', 'include', 'keywords', 'known_speaker_names', 'known_speaker_references']);

export interface AudioForm {
  staged: StagedUpload;
  fields: Record<string, string | string[]>;
}

export async function readAudioForm(req: FastifyRequest, files: FilesService, auth: AuthContext, wider?: WiderLimits): Promise<AudioForm> {
  const { staged, fields, lists } = await readSingleFileUpload(req, {
    wider,
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

/**
 * A validator for the text fields of a form: the typed fields, or invalid_request naming each bad one; `rules`, the
 * rules between fields, run on what the schema passed.
 */
export function formValidator<S extends TSchema>(
  schema: S,
  rules: (fields: Static<S>) => Static<S> = (f) => f,
): (fields: Record<string, string | string[]>) => Static<S> {
  const validator = compileValidator(schema, { coerce: true });
  return (fields) => rules(validator.parse(fields));
}
