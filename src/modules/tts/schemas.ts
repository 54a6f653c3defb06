// OpenAPI descriptions of the TTS routes. POST /tts's body is TtsHttpBody, the schema its handler checks
// (request-config.ts: after authentication, with the TTS error body); the voice listing's query is checked in
// voice-list.ts.
import { Type } from '@sinclair/typebox';
import { ErrorBody } from '../../wire/schemas.js';
import { TtsErrorBody, TtsWordTimestamp } from '../../wire/tts-frames.js';
import { TtsHttpBody } from './request-config.js';

const Voice = Type.Object({
  id: Type.String(),
  description: Type.String(),
  gender: Type.Union([Type.Literal('male'), Type.Literal('female'), Type.Literal('neutral')]),
});

const TtsModel = Type.Object({
  id: Type.String(),
  aliased_model_id: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  languages: Type.Array(Type.Object({ code: Type.String(), name: Type.String() })),
  voices: Type.Array(Voice),
  supports_timestamps: Type.Boolean(),
  supports_speed_adjustment: Type.Boolean(),
  speed_min: Type.Number(),
  speed_max: Type.Number(),
  supports_silence_reduction: Type.Boolean(),
});

export const listTtsModelsSchema = {
  tags: ['tts'],
  summary: 'List text-to-speech models with their languages and voices',
  response: { 200: Type.Object({ models: Type.Array(TtsModel) }), '4xx': ErrorBody, 500: ErrorBody },
};

const SharedVoice = Type.Object({
  id: Type.String(),
  description: Type.String(),
  gender: Type.String(),
  age: Type.String(),
  accent: Type.String(),
  use_case: Type.Array(Type.String()),
  style: Type.Array(Type.String()),
});

export const listTtsVoicesSchema = {
  tags: ['tts'],
  summary: 'List the built-in (shared) voices of one TTS model; every given filter must match',
  querystring: Type.Object({
    model: Type.String({ maxLength: 64, description: 'TTS model id (required)' }),
    gender: Type.Optional(Type.Union([Type.Literal('male'), Type.Literal('female'), Type.Literal('neutral')])),
    age: Type.Optional(Type.Union([Type.Literal('young'), Type.Literal('middle_aged'), Type.Literal('old')])),
    accent: Type.Optional(Type.String({ maxLength: 40 })),
    language: Type.Optional(Type.String({ maxLength: 16, description: 'only voices that speak this language code (a Parlance extension)' })),
    use_case: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10, description: 'repeated or comma-separated' })),
    style: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10, description: 'repeated or comma-separated' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 100 })),
    cursor: Type.Optional(Type.String()),
  }),
  response: {
    200: Type.Object({ voices: Type.Array(SharedVoice), next_page_cursor: Type.Union([Type.String(), Type.Null()]) }),
    '4xx': ErrorBody,
    500: ErrorBody,
  },
};

export const generateSpeechSchema = {
  // POST /tts belongs to the TTS interface ({tts_url}); Parlance serves it on the same origin, so it is described
  // here too. The handler checks the body against this schema (parseTtsBody, after authentication) and errors use the
  // TTS error body.
  tags: ['tts'],
  summary: 'Generate speech; the audio streams back as it is synthesized (TTS interface, not versioned)',
  description:
    'Answers 200 with the audio in the requested audio_format (Content-Type audio/mpeg, audio/wav, audio/pcm, ...), streamed as it is made. ' +
    'A streamed WAV header carries placeholder lengths (0xFFFFFFFF): read to the end of the response.',
  body: TtsHttpBody,
  response: { '4xx': TtsErrorBody, 500: TtsErrorBody },
};

export const generateSpeechWithTimestampsSchema = {
  tags: ['tts'],
  summary: 'Generate speech with the time of every spoken word, answered whole as JSON (TTS interface, not versioned)',
  description:
    "Takes POST /tts's body, with the same validation and errors. Answers once the audio is complete: the audio in the requested audio_format " +
    '(base64; a wav has exact sizes) and each word of the text with its start and end in the audio, in milliseconds, in order. ' +
    'espeak-ng, festival and flite voices time their words themselves; sherpa-onnx voices have them estimated from the audio.',
  body: TtsHttpBody,
  response: {
    200: Type.Object({
      audio_base64: Type.String({ contentEncoding: 'base64' }),
      audio_format: Type.String(),
      words: Type.Array(TtsWordTimestamp),
    }),
    '4xx': TtsErrorBody,
    500: TtsErrorBody,
  },
};
