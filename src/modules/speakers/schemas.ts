// Wire types of enrolled speakers (/v1/speakers): the speaker and enrolment-sample records and each route's schema.
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, ListQuery } from '../../wire/schemas.js';

export const SPEAKER_STATUSES = ['no_samples', 'processing', 'ready', 'failed'] as const;

export const SpeakerRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String({ description: 'Unique in the project; the label recognised tokens carry' }),
    metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    status: Type.Union(
      SPEAKER_STATUSES.map((s) => Type.Literal(s)),
      {
        description: 'no_samples until audio is added; processing while the profile is computed; ready to recognise; failed (see error_type)',
      },
    ),
    error_type: Type.Union([Type.String(), Type.Null()]),
    error_message: Type.Union([Type.String(), Type.Null()]),
    num_samples: Type.Integer(),
    speech_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'Speech found in the samples, once ready' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Speaker' },
);
export type SpeakerRecord = Static<typeof SpeakerRecord>;

export const SpeakerSampleRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    speaker_id: Type.String({ format: 'uuid' }),
    filename: Type.String(),
    size: Type.Integer(),
    speech_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'Speech found in this sample, once measured' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'SpeakerSample' },
);
export type SpeakerSampleRecord = Static<typeof SpeakerSampleRecord>;

const SpeakerIdParams = Type.Object({ speaker_id: Type.String({ minLength: 1, maxLength: 64 }) });
const SampleIdParams = Type.Object({ speaker_id: Type.String({ minLength: 1, maxLength: 64 }), sample_id: Type.String({ minLength: 1, maxLength: 64 }) });
const r4xx = { '4xx': ErrorBody, 500: ErrorBody };

export const CreateSpeakerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, description: 'Unique in the project; not only digits (those are the labels of unknown speakers)' }),
    metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'Any JSON object, at most 4 KiB' })),
  },
  { additionalProperties: false },
);
export type CreateSpeakerBody = Static<typeof CreateSpeakerBody>;

export const createSpeakerSchema = {
  tags: ['speakers'],
  summary: 'Enrol a named speaker (add audio with POST /v1/speakers/{speaker_id}/audio)',
  body: CreateSpeakerBody,
  response: { 201: SpeakerRecord, ...r4xx },
};

export const listSpeakersSchema = {
  tags: ['speakers'],
  summary: 'List enrolled speakers, newest first',
  querystring: ListQuery,
  response: { 200: Type.Object({ speakers: Type.Array(SpeakerRecord), next_page_cursor: Type.Union([Type.String(), Type.Null()]) }), ...r4xx },
};

export const getSpeakerSchema = { tags: ['speakers'], summary: 'Get one enrolled speaker', params: SpeakerIdParams, response: { 200: SpeakerRecord, ...r4xx } };

export const deleteSpeakerSchema = {
  tags: ['speakers'],
  summary: "Delete an enrolled speaker, its samples' audio and its profile",
  params: SpeakerIdParams,
  response: { 204: Type.Null(), ...r4xx },
};

export const addSampleSchema = {
  tags: ['speakers'],
  summary:
    'Add enrolment audio: multipart/form-data with one "file" part (and optional "filename"), or JSON {"file_id"} of an uploaded file. The profile is computed again in the background.',
  consumes: ['multipart/form-data', 'application/json'],
  params: SpeakerIdParams,
  // Documentation only (for /openapi.json): the route reads either body itself.
  body: Type.Object({
    file: Type.Optional(Type.String({ format: 'binary', description: 'Audio of this speaker alone (one part; the request needs a Content-Length)' })),
    filename: Type.Optional(Type.String({ description: "Overrides the file part's own file name" })),
    file_id: Type.Optional(Type.String({ description: 'An uploaded file (POST /v1/files), instead of a file part; its audio is copied' })),
  }),
  response: { 201: SpeakerSampleRecord, ...r4xx },
};

export const listSamplesSchema = {
  tags: ['speakers'],
  summary: "List a speaker's enrolment samples, newest first",
  params: SpeakerIdParams,
  querystring: ListQuery,
  response: { 200: Type.Object({ samples: Type.Array(SpeakerSampleRecord), next_page_cursor: Type.Union([Type.String(), Type.Null()]) }), ...r4xx },
};

export const getSampleSchema = {
  tags: ['speakers'],
  summary: 'Get one enrolment sample',
  params: SampleIdParams,
  response: { 200: SpeakerSampleRecord, ...r4xx },
};

export const deleteSampleSchema = {
  tags: ['speakers'],
  summary: 'Delete an enrolment sample and its audio; the profile is computed again from the rest',
  params: SampleIdParams,
  response: { 204: Type.Null(), ...r4xx },
};
