import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, ListQuery } from '../../wire/schemas.js';

export const VOICE_STATUSES = ['not_computed', 'processing', 'ready', 'failed'] as const;

export const VoiceModelStatus = Type.Object({
  model: Type.String(),
  status: Type.Union(VOICE_STATUSES.map((s) => Type.Literal(s))),
  error_type: Type.Union([Type.String(), Type.Null()]),
  error_message: Type.Union([Type.String(), Type.Null()]),
  /** Which built-in voice the clone is based on for this model, once ready (Parlance extension). */
  base_voice: Type.Union([Type.String(), Type.Null()]),
});
export type VoiceModelStatus = Static<typeof VoiceModelStatus>;

export const VoiceRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    filename: Type.String(),
    size: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    models: Type.Array(VoiceModelStatus),
  },
  { $id: 'Voice' },
);
export type VoiceRecord = Static<typeof VoiceRecord>;

const VoiceIdParams = Type.Object({ voice_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const createVoiceSchema = {
  tags: ['voices'],
  summary: 'Create a cloned voice from a reference clip (multipart/form-data: name, file); prepared per TTS model in the background',
  consumes: ['multipart/form-data'],
  // Documentation only (for /openapi.json): the route streams the parts and checks them itself.
  body: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 128, description: 'Name of the cloned voice' }),
    file: Type.String({ format: 'binary', description: 'Reference clip of the speaker (one part; the request needs a Content-Length)' }),
    filename: Type.Optional(Type.String({ description: "Overrides the file part's own file name" })),
  }),
  response: { 201: VoiceRecord, '4xx': ErrorBody, 500: ErrorBody },
};

export const listVoicesSchema = {
  tags: ['voices'],
  summary: 'List cloned voices, newest first',
  querystring: ListQuery,
  response: {
    200: Type.Object({ voices: Type.Array(VoiceRecord), next_page_cursor: Type.Union([Type.String(), Type.Null()]) }),
    '4xx': ErrorBody,
    500: ErrorBody,
  },
};

export const countVoicesSchema = {
  tags: ['voices'],
  summary: 'Count cloned voices',
  response: { 200: Type.Object({ total: Type.Integer() }), '4xx': ErrorBody, 500: ErrorBody },
};

export const getVoiceSchema = {
  tags: ['voices'],
  summary: 'Get one cloned voice',
  params: VoiceIdParams,
  response: { 200: VoiceRecord, '4xx': ErrorBody, 500: ErrorBody },
};

export const deleteVoiceSchema = {
  tags: ['voices'],
  summary: 'Delete a cloned voice',
  params: VoiceIdParams,
  response: { 204: Type.Null(), '4xx': ErrorBody, 500: ErrorBody },
};

export const recomputeVoiceSchema = {
  tags: ['voices'],
  summary: 'Prepare a cloned voice for models it is not_computed for (all, or one given model)',
  params: VoiceIdParams,
  body: Type.Optional(
    Type.Union([Type.Object({ model: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])) }), Type.Null()]),
  ),
  response: { 200: VoiceRecord, '4xx': ErrorBody, 500: ErrorBody },
};
