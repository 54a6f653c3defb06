import { Type, type Static } from '@sinclair/typebox';
import { ProfanityFilterField, RedactField, SpeakerCountField } from '../../wire/word-controls.js';
import { ErrorBody, ListQuery } from '../../wire/schemas.js';

const Str256 = Type.String({ maxLength: 256 });

/** `context`: a plain string (spec) or the SDK's structured object (docs/wire-compat.md, "REST conventions"); echoed as given. */
export const ContextSchema = Type.Union([
  Type.String({ maxLength: 10_000 }),
  Type.Object(
    {
      general: Type.Optional(Type.Array(Type.Object({ key: Type.String({ maxLength: 256 }), value: Type.String({ maxLength: 10_000 }) }), { maxItems: 100 })),
      text: Type.Optional(Type.String({ maxLength: 10_000 })),
      terms: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 10_000 })),
      translation_terms: Type.Optional(
        Type.Array(Type.Object({ source: Type.String({ maxLength: 256 }), target: Type.String({ maxLength: 256 }) }), { maxItems: 10_000 }),
      ),
    },
    { additionalProperties: false },
  ),
]);

export const TranslationSchema = Type.Union([
  Type.Object({ type: Type.Literal('one_way'), target_language: Type.String({ minLength: 1, maxLength: 16 }) }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal('two_way'), language_a: Type.String({ minLength: 1, maxLength: 16 }), language_b: Type.String({ minLength: 1, maxLength: 16 }) },
    { additionalProperties: false },
  ),
]);

export const CreateTranscriptionBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 64 }),
    audio_url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    file_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    language_hints: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 16 }), { maxItems: 100 })),
    language_hints_strict: Type.Optional(Type.Boolean()),
    enable_speaker_diarization: Type.Optional(Type.Boolean()),
    num_speakers: Type.Optional({ ...SpeakerCountField, description: 'Parlance: exactly this many speakers (with enable_speaker_diarization).' }),
    min_speakers: Type.Optional({ ...SpeakerCountField, description: 'Parlance: at least this many speakers (with enable_speaker_diarization).' }),
    max_speakers: Type.Optional({ ...SpeakerCountField, description: 'Parlance: at most this many speakers (with enable_speaker_diarization).' }),
    /** Parlance: enrolled speaker ids (/v1/speakers) to recognise; needs enable_speaker_diarization. */
    speakers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 32,
        description:
          'Enrolled speakers (ids from /v1/speakers, each ready) to recognise: a diarized voice that matches one carries its name as `speaker`; others keep "1", "2", ... Needs enable_speaker_diarization.',
      }),
    ),
    enable_language_identification: Type.Optional(Type.Boolean()),
    /** Parlance: recognise each channel on its own; every token carries `channel`. */
    enable_multichannel: Type.Optional(
      Type.Boolean({
        description:
          'Parlance extension. Recognise each channel of a multi-channel file (a stereo call recording: agent left, customer right) on its own: every token carries `channel` (0-based), speakers are diarized within their channel, and usage counts the audio once per channel. A job whose audio has one channel fails with invalid_audio_file.',
      }),
    ),
    /** Parlance: formatted text (capitals, punctuation, numbers as digits); default PARLANCE_TEXT_FORMATTING. */
    enable_text_formatting: Type.Optional(Type.Boolean()),
    context: Type.Optional(ContextSchema),
    translation: Type.Optional(TranslationSchema),
    redact: Type.Optional(RedactField),
    profanity_filter: Type.Optional(ProfanityFilterField),
    webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    webhook_auth_header_name: Type.Optional(Str256),
    webhook_auth_header_value: Type.Optional(Str256),
    client_reference_id: Type.Optional(Str256),
  },
  { additionalProperties: false },
);
export type CreateTranscriptionBody = Static<typeof CreateTranscriptionBody>;

const Nullable = <T extends import('@sinclair/typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const TranscriptionRecord = Type.Object({
  id: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  model: Type.String(),
  audio_url: Nullable(Type.String()),
  file_id: Nullable(Type.String()),
  filename: Type.String(),
  language_hints: Type.Array(Type.String()),
  language_hints_strict: Type.Boolean(),
  enable_speaker_diarization: Type.Boolean(),
  /** Parlance: the enrolled speakers asked for (present only when some were). */
  speakers: Type.Optional(Type.Array(Type.String())),
  enable_language_identification: Type.Boolean(),
  /** Parlance: present (true) only when the transcription was created with enable_multichannel. */
  enable_multichannel: Type.Optional(Type.Boolean()),
  context: Type.Union([Type.String(), Type.Object({}, { additionalProperties: true }), Type.Null()]),
  translation: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  /** Parlance: present only when asked for. */
  redact: Type.Optional(Type.Array(Type.String())),
  profanity_filter: Type.Optional(Type.Boolean()),
  num_speakers: Type.Optional(Type.Integer()),
  min_speakers: Type.Optional(Type.Integer()),
  max_speakers: Type.Optional(Type.Integer()),
  audio_duration_ms: Type.Integer(),
  error_type: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  webhook_url: Nullable(Type.String()),
  webhook_auth_header_name: Nullable(Type.String()),
  webhook_auth_header_value: Nullable(Type.String()),
  webhook_status_code: Nullable(Type.Integer()),
  client_reference_id: Nullable(Type.String()),
});
export type TranscriptionRecord = Static<typeof TranscriptionRecord>;

export const TranscriptToken = Type.Object({
  text: Type.String(),
  start_ms: Type.Optional(Type.Integer()),
  end_ms: Type.Optional(Type.Integer()),
  confidence: Type.Number(),
  speaker: Type.Optional(Type.String()),
  /** Parlance, multichannel transcriptions: the channel (0-based) the token was heard on. */
  channel: Type.Optional(Type.Integer({ minimum: 0 })),
  language: Type.Optional(Type.String()),
  source_language: Type.Optional(Type.String()),
  translation_status: Type.Optional(Type.String()),
});
export type TranscriptToken = Static<typeof TranscriptToken>;

export const Transcript = Type.Object({ id: Type.String(), text: Type.String(), tokens: Type.Array(TranscriptToken) });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const errors = { '4xx': ErrorBody, 500: ErrorBody };

export const createSchema = {
  tags: ['transcriptions'],
  summary: 'Create an async transcription from an audio_url or an uploaded file_id',
  body: CreateTranscriptionBody,
  response: { 201: TranscriptionRecord, ...errors },
};
export const listSchema = {
  tags: ['transcriptions'],
  summary: 'List transcriptions, newest first',
  querystring: ListQuery,
  response: { 200: Type.Object({ transcriptions: Type.Array(TranscriptionRecord), next_page_cursor: Nullable(Type.String()) }), ...errors },
};
export const countSchema = {
  tags: ['transcriptions'],
  summary: 'Count transcriptions by source',
  response: { 200: Type.Object({ playground: Type.Integer(), public_api: Type.Integer(), total: Type.Integer() }), ...errors },
};
export const getSchema = { tags: ['transcriptions'], summary: 'Get a transcription', params: IdParams, response: { 200: TranscriptionRecord, ...errors } };
/** `format`: the JSON transcript (default), or a subtitle or text file of it (src/text/subtitles.ts). */
export const TranscriptQuery = Type.Object({
  format: Type.Optional(Type.Unsafe<'json' | 'srt' | 'vtt' | 'txt'>({ type: 'string', enum: ['json', 'srt', 'vtt', 'txt'], default: 'json' })),
});
const fileBody = (description: string) => ({ schema: Type.String({ description }) });
export const transcriptSchema = {
  tags: ['transcriptions'],
  summary: 'Get the transcript of a completed transcription: JSON, or ?format=srt|vtt|txt (speaker labels when diarized)',
  params: IdParams,
  querystring: TranscriptQuery,
  response: {
    200: {
      description: 'The transcript',
      content: {
        'application/json': { schema: Transcript },
        'application/x-subrip': fileBody('format=srt'),
        'text/vtt': fileBody('format=vtt'),
        'text/plain': fileBody('format=txt'),
      },
    },
    ...errors,
  },
};
export const deleteSchema = {
  tags: ['transcriptions'],
  summary: 'Delete a transcription (not while transcribing)',
  params: IdParams,
  response: { 204: Type.Null(), ...errors },
};
