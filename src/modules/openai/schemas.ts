// Wire types of the OpenAI-compatible audio surface (/v1/audio/*), in OpenAI's shapes: the multipart request fields
// (validated here, from the parsed form), the responses and the OpenAI error body.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { MAX_CONTEXT_CHARS } from '../realtime/config.js';
import { MAX_SPEAKER_NAME_LENGTH } from '../speakers/service.js';
import { SPEECH_FORMATS, SPEECH_MAX_INPUT, SPEECH_SPEED_MAX, SPEECH_SPEED_MIN, SPEECH_STREAM_FORMATS } from './speech.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** A string enum as `enum` (Ajv then names the allowed values) rather than a union of literals. */
const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];
export const TRANSLATION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;

/** `keywords`: at most this many, each at most MAX_KEYWORD_CHARS (a native context term's cap). */
export const MAX_KEYWORDS = 500;
export const MAX_KEYWORD_CHARS = 256;

/** `keywords` (REST form and Realtime `transcription`): words or phrases to expect, the transcription's context terms. */
export const Keywords = Type.Array(Type.String({ maxLength: MAX_KEYWORD_CHARS }), {
  maxItems: MAX_KEYWORDS,
  description: `Words or phrases to expect (names, jargon): the context terms, written as given (\`keywords[]\`). The prompt and the keywords together: at most ${MAX_CONTEXT_CHARS} characters`,
});

/** Characters of the context a prompt and keywords make (what MAX_CONTEXT_CHARS caps). */
export const contextChars = (prompt: string | null | undefined, keywords: readonly string[] | null | undefined) =>
  (prompt?.length ?? 0) + (keywords ?? []).reduce((n, k) => n + k.length, 0);

/** OpenAI's known speakers (gpt-4o-transcribe-diarize): at most this many names, each with one reference clip. */
export const MAX_KNOWN_SPEAKERS = 4;
/** Largest reference clip, bytes of audio: 10 s of 48 kHz 16-bit stereo WAV fit. */
export const MAX_REFERENCE_BYTES = 2 * 1024 * 1024;
/** Longest reference data URL: the clip in base64, and room for its media type and parameters. */
export const MAX_REFERENCE_CHARS = Math.ceil(MAX_REFERENCE_BYTES / 3) * 4 + 256;

const common = {
  model: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'whisper-1, gpt-4o-transcribe, gpt-4o-mini-transcribe, gpt-4o-transcribe-diarize (aliases) or any async model id',
  }),
  prompt: Type.Optional(Type.String({ maxLength: 10_000, description: 'Used as the transcription context (terms, names)' })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Accepted and ignored' })),
};

/** The text fields of POST /v1/audio/transcriptions; unknown OpenAI fields (chunking_strategy, ...) are ignored. */
export const TranscriptionFields = Type.Object(
  {
    ...common,
    language: Type.Optional(Type.String({ maxLength: 16, description: 'ISO-639-1 code of the speech (a language hint)' })),
    response_format: Type.Optional(OneOf(TRANSCRIPTION_FORMATS)),
    timestamp_granularities: Type.Optional(
      Type.Array(OneOf(['word', 'segment'] as const), { maxItems: 2, description: 'verbose_json: `timestamp_granularities[]` (or the field repeated)' }),
    ),
    stream: Type.Optional(Type.Boolean({ description: 'Server-sent events transcript.text.delta ... transcript.text.done' })),
    include: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 4, description: '`logprobs`: per-token log probabilities (json)' })),
    keywords: Type.Optional(Keywords),
    known_speaker_names: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_SPEAKER_NAME_LENGTH }), {
        maxItems: MAX_KNOWN_SPEAKERS,
        description:
          'diarized_json: names of speakers to recognise (`known_speaker_names[]`), each with its clip in known_speaker_references at the same index; a segment of that voice carries the name as `speaker`',
      }),
    ),
    known_speaker_references: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_REFERENCE_CHARS }), {
        maxItems: MAX_KNOWN_SPEAKERS,
        description:
          'diarized_json: a clip of each known speaker (`known_speaker_references[]`), 2 to 10 s of audio as a data URL (`data:audio/wav;base64,...`), used for this request only',
      }),
    ),
  },
  { additionalProperties: true },
);
export type TranscriptionFields = Static<typeof TranscriptionFields>;

export const TranslationFields = Type.Object({ ...common, response_format: Type.Optional(OneOf(TRANSLATION_FORMATS)) }, { additionalProperties: true });
export type TranslationFields = Static<typeof TranslationFields>;

const FilePart = Type.Object({ file: Type.String({ format: 'binary', description: 'The audio file' }) });

export const OpenAiErrorBody = Type.Object({
  error: Type.Object({ message: Type.String(), type: Type.String(), param: Nullable(Type.String()), code: Nullable(Type.String()) }),
});
export type OpenAiErrorBody = Static<typeof OpenAiErrorBody>;

const DurationUsage = Type.Object({ type: Type.Literal('duration'), seconds: Type.Number() });

export const Transcription = Type.Object({
  text: Type.String(),
  logprobs: Type.Optional(Type.Array(Type.Object({ token: Type.String(), logprob: Type.Number(), bytes: Type.Array(Type.Integer()) }))),
  usage: DurationUsage,
});

export const Segment = Type.Object({
  id: Type.Integer(),
  seek: Type.Integer(),
  start: Type.Number(),
  end: Type.Number(),
  text: Type.String(),
  tokens: Type.Array(Type.Integer()),
  temperature: Type.Number(),
  avg_logprob: Type.Number(),
  compression_ratio: Type.Number(),
  no_speech_prob: Type.Number(),
});
export type Segment = Static<typeof Segment>;

export const Word = Type.Object({ word: Type.String(), start: Type.Number(), end: Type.Number() });
export type Word = Static<typeof Word>;

export const TranscriptionVerbose = Type.Object({
  task: OneOf(['transcribe', 'translate'] as const),
  language: Type.String(),
  duration: Type.Number(),
  text: Type.String(),
  segments: Type.Optional(Type.Array(Segment)),
  words: Type.Optional(Type.Array(Word)),
  usage: Type.Optional(DurationUsage),
});
export type TranscriptionVerbose = Static<typeof TranscriptionVerbose>;

export const DiarizedSegment = Type.Object({
  type: Type.Literal('transcript.text.segment'),
  id: Type.String(),
  start: Type.Number(),
  end: Type.Number(),
  text: Type.String(),
  speaker: Type.String(),
});
export type DiarizedSegment = Static<typeof DiarizedSegment>;

export const TranscriptionDiarized = Type.Object({
  task: Type.Literal('transcribe'),
  duration: Type.Number(),
  text: Type.String(),
  segments: Type.Array(DiarizedSegment),
  usage: DurationUsage,
});
export type TranscriptionDiarized = Static<typeof TranscriptionDiarized>;

const errors = { '4xx': OpenAiErrorBody, '5xx': OpenAiErrorBody };
const textBody = (description: string) => ({ schema: Type.String({ description }) });

export const transcriptionsSchema = {
  tags: ['openai'],
  summary: 'OpenAI-compatible transcription of an uploaded file (runs as an async transcription and waits for it)',
  consumes: ['multipart/form-data'],
  body: Type.Composite([FilePart, TranscriptionFields]),
  response: {
    200: {
      description: 'json, verbose_json or diarized_json; text, srt or vtt as text; stream=true: server-sent events',
      content: {
        'application/json': { schema: Type.Union([TranscriptionVerbose, TranscriptionDiarized, Transcription]) },
        'text/plain': textBody('response_format text, srt or vtt'),
        'text/event-stream': textBody('data: {"type":"transcript.text.delta","delta":...} ... data: {"type":"transcript.text.done","text":...}'),
      },
    },
    ...errors,
  },
};

export const translationsSchema = {
  tags: ['openai'],
  summary: 'OpenAI-compatible translation into English: transcribed, then translated where a pair into English is installed',
  consumes: ['multipart/form-data'],
  body: Type.Composite([FilePart, TranslationFields]),
  response: {
    200: {
      description: 'json or verbose_json; text, srt or vtt as text',
      content: {
        'application/json': { schema: Type.Union([TranscriptionVerbose, Type.Object({ text: Type.String() })]) },
        'text/plain': textBody('response_format text, srt or vtt'),
      },
    },
    ...errors,
  },
};

export const audioModelsSchema = {
  tags: ['openai'],
  summary: 'Speech models for OpenAI-compatible clients (Open WebUI): transcription and speech model ids, aliases included',
  response: { 200: Type.Object({ models: Type.Array(Type.Object({ id: Type.String(), type: OneOf(['stt', 'tts'] as const) })) }), ...errors },
};

export const audioVoicesSchema = {
  tags: ['openai'],
  summary: 'Voices of a text-to-speech model (default: the one `tts-1` names) for OpenAI-compatible clients',
  querystring: Type.Object({ model: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }),
  response: { 200: Type.Object({ voices: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })) }), ...errors },
};

/** The JSON body of POST /v1/audio/speech; unknown OpenAI fields are ignored. */
export const SpeechBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 64, description: 'tts-1, tts-1-hd, gpt-4o-mini-tts (the default TTS model) or any TTS model id or alias' }),
    input: Type.String({ minLength: 1, maxLength: SPEECH_MAX_INPUT, description: 'The text to speak' }),
    voice: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })], {
      description:
        'An OpenAI voice name (alloy, ash, ballad, coral, echo, fable, onyx, nova, sage, shimmer, verse, marin, cedar: mapped to built-in voices), a built-in voice id or a cloned voice id',
    }),
    instructions: Type.Optional(Type.String({ maxLength: 4096, description: 'Accepted and ignored' })),
    response_format: Type.Optional(OneOf(SPEECH_FORMATS, 'Default mp3; pcm is raw 24 kHz 16-bit little-endian mono')),
    speed: Type.Optional(
      Type.Number({ minimum: SPEECH_SPEED_MIN, maximum: SPEECH_SPEED_MAX, description: 'Clamped into the range the engines speak at (0.7 to 1.3)' }),
    ),
    stream_format: Type.Optional(OneOf(SPEECH_STREAM_FORMATS, 'audio (default): the audio as the response body; sse: speech.audio.delta events')),
  },
  { additionalProperties: true },
);
export type SpeechBody = Static<typeof SpeechBody>;

const binaryBody = (description: string) => ({ schema: Type.String({ format: 'binary', description }) });

export const speechSchema = {
  tags: ['openai'],
  summary: 'OpenAI-compatible text-to-speech: the audio streams back as it is synthesized',
  body: SpeechBody,
  response: {
    200: {
      description: 'The audio in response_format (24 kHz); stream_format sse: server-sent events',
      content: {
        'audio/mpeg': binaryBody('mp3'),
        'audio/opus': binaryBody('opus (Ogg)'),
        'audio/aac': binaryBody('aac (ADTS)'),
        'audio/flac': binaryBody('flac'),
        'audio/wav': binaryBody('wav'),
        'audio/pcm': binaryBody('pcm: raw 24 kHz 16-bit little-endian mono'),
        'text/event-stream': textBody('data: {"type":"speech.audio.delta","audio":"<base64>"} ... data: {"type":"speech.audio.done","usage":{...}}'),
      },
    },
    ...errors,
  },
};
