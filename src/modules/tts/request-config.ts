// Text-to-speech request rules: the generation parameters of POST /tts, /v1/audio/speech and a /tts-websocket start
// (model, language, voice, format, sample rate, bitrate, speed, silence reduction): a TypeBox schema checked through
// src/wire/validate.ts, then the rules between fields and against the model, before any audio, resolved once with
// their defaults into a TtsConfig; and the checks on the text to speak.
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import { type Static, Type } from '@sinclair/typebox';
import { AUDIO_FORMATS, type AudioFormat, contentTypeOf } from '../../audio/speech-encoder.js';
import { ApiError, invalidField, invalidFields, type ValidationIssue } from '../../wire/api-error.js';
import { compileValidator } from '../../wire/validate.js';
import { SPEED_MAX, SPEED_MIN } from './model-records.js';

export const SAMPLE_RATES = [8000, 16000, 24000, 44100, 48000] as const;
export const BITRATES = [32000, 64000, 96000, 128000, 192000, 256000, 320000] as const;
const COMPRESSED: readonly AudioFormat[] = ['mp3', 'aac', 'opus'];
const DEFAULT_BITRATE: Partial<Record<AudioFormat, number>> = { mp3: 128000, aac: 128000, opus: 64000 };
const DEFAULT_SAMPLE_RATE = 24000;

export interface TtsConfig {
  model: TtsModel;
  /** The id the client sent (an alias or the model id). */
  requestedModel: string;
  voice: TtsVoice;
  language: string;
  format: AudioFormat;
  contentType: string;
  sampleRate: number;
  bitrate?: number;
  speed: number;
  reduceSilence: boolean;
  clientReferenceId: string | null;
  /** Set when `voice` named a cloned voice: `voice` is then its base built-in voice. */
  cloned?: ClonedVoiceStyle;
}

/** How a cloned voice adapts its base voice (from the voices module, once ready for the model). */
export interface ClonedVoiceStyle {
  voiceId: string;
  /** Pitch shift after synthesis (formant-preserving), in semitones. */
  pitchSemitones: number;
  /** Intonation range relative to the base voice (engines with supportsPitchRange). */
  pitchRange: number;
  /** Speaking-rate multiplier, on top of the request's speed. */
  rate: number;
}

/**
 * Resolves a cloned voice id for a model in a project: the base built-in voice and the adaptation, or an
 * ApiError (voice_not_found, voice_not_prepared, voice_not_ready, voice_failed).
 */
export type ClonedVoiceResolver = (projectId: string, voiceId: string, model: TtsModel) => Promise<{ voice: TtsVoice; style: ClonedVoiceStyle }>;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const Loose = { additionalProperties: true } as const;

/**
 * The generation parameters of POST /tts, a /tts-websocket start and /v1/audio/speech (spec "Text-to-speech over
 * HTTP"): the rules of each field. Unknown keys are ignored, a null is an absent field; the rules between fields and
 * against the model, and the defaults, are resolveTtsConfig's.
 */
export const TtsRequestFields = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    language: Type.String({ minLength: 1, maxLength: 16 }),
    voice: Type.String({ minLength: 1, maxLength: 256 }),
    audio_format: Type.Unsafe<AudioFormat>({ type: 'string', enum: [...AUDIO_FORMATS] }),
    sample_rate: Type.Optional(Type.Unsafe<number>({ type: 'integer', enum: [...SAMPLE_RATES] })),
    bitrate: Type.Optional(Type.Unsafe<number>({ type: 'integer', enum: [...BITRATES] })),
    speed: Type.Optional(Type.Number({ minimum: SPEED_MIN, maximum: SPEED_MAX })),
    reduce_silence: Type.Optional(Type.Boolean()),
    client_reference_id: Type.Optional(Type.String({ maxLength: 256 })),
    text_format: Type.Optional(
      Type.Union([Type.Literal('text'), Type.Literal('ssml')], {
        description:
          'How to read `text` (a Parlance extension): "text" (default) or "ssml", a <speak> document with <break>, <prosody rate pitch volume>, ' +
          '<say-as interpret-as="characters|digits">, <sub alias> and <phoneme>; invalid SSML is invalid_request naming the line and column.',
      }),
    ),
  },
  Loose,
);
export type TtsRequestFields = Static<typeof TtsRequestFields>;

/** The JSON body of POST /tts: the generation parameters and the text (checked further by checkTtsText). */
export const TtsHttpBody = Type.Composite([TtsRequestFields, Type.Object({ text: Type.String() })], Loose);
export type TtsHttpBody = Static<typeof TtsHttpBody>;

/**
 * A /tts-websocket stream start: the generation parameters, return_timestamps (character timings on the audio frames)
 * and word_timestamps (word frames before the audio); stream_id and api_key: tts-frames.ts.
 */
export const TtsStartFields = Type.Composite(
  [TtsRequestFields, Type.Object({ return_timestamps: Type.Optional(Type.Boolean()), word_timestamps: Type.Optional(Type.Boolean()) })],
  Loose,
);
export type TtsStartFields = Static<typeof TtsStartFields>;

const httpBody = compileValidator(TtsHttpBody, { nullAsAbsent: true });
const startFields = compileValidator(TtsStartFields, { nullAsAbsent: true, root: 'message' });

/** A POST /tts body, or invalid_request naming each bad field. */
export const parseTtsBody = (body: unknown): TtsHttpBody => httpBody.parse(body);

/** A stream start's fields, or invalid_request (an error of that stream) naming each bad field. */
export const parseTtsStart = (message: unknown): TtsStartFields => startFields.parse(message);

/**
 * A voice that speaks only some of the model's languages (festival: one each) refuses the others before any
 * audio, as the model refuses a language it lacks: 400 invalid_request naming the voices that speak it.
 */
export function checkVoiceLanguage(model: TtsModel, voice: TtsVoice, language: string, modelId: string, voiceName: string): void {
  if (!voice.languages || voice.languages.includes(language)) return;
  const speakers = model.voices.filter((v) => !v.languages || v.languages.includes(language)).map((v) => v.id);
  throw invalidField(
    'voice',
    `voice "${voiceName}" of model ${modelId} speaks ${voice.languages.join(', ')}, not "${language}"; voices for "${language}": ${speakers.join(', ') || 'none'}`,
    'unsupported',
  );
}

/** The largest bitrate each encoder can produce at the sample rate (MPEG-2/2.5 layer III, AAC, mono Opus). */
function maxBitrate(format: AudioFormat, sampleRate: number): number {
  return format === 'mp3' ? (sampleRate <= 8000 ? 64000 : sampleRate <= 24000 ? 160000 : 320000) : format === 'aac' ? 6 * sampleRate : 256000;
}

/** The rules between the fields and against the model, the schema's checks passed. */
function crossFieldIssues(req: TtsRequestFields, model: TtsModel): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const issue = (location: string, message: string, errorType = 'invalid_value') => issues.push({ error_type: errorType, location, message });
  const format = req.audio_format;
  if (!model.engine.languages.some((l) => l.code === req.language))
    issue('language', `"${req.language}" is not supported by model ${req.model}; GET /v1/tts-models lists the languages`, 'unsupported');
  if (format === 'opus' && req.sample_rate === 44100) issue('sample_rate', '44100 is not valid for opus; use 8000, 16000, 24000 or 48000');
  if (req.bitrate !== undefined) {
    const max = maxBitrate(format, req.sample_rate ?? DEFAULT_SAMPLE_RATE);
    if (!COMPRESSED.includes(format)) issue('bitrate', `applies only to mp3, aac and opus, not ${format}`);
    else if (req.bitrate > max)
      issue('bitrate', `${req.bitrate} is not valid for ${format} at sample_rate ${req.sample_rate ?? DEFAULT_SAMPLE_RATE} (at most ${max})`, 'out_of_range');
  }
  if (req.reduce_silence && !model.supportsSilenceReduction) issue('reduce_silence', `is not supported by model ${req.model}`, 'unsupported');
  return issues;
}

/**
 * Resolve a generation request (its fields checked by schema: parseTtsBody, parseTtsStart, or built by the server)
 * against the registry, with the defaults, applied here once. Throws before any audio: model_not_available,
 * invalid_request naming each field against the rules between fields, voice_not_found.
 */
export function resolveTtsConfig(registry: TtsRegistry, req: TtsRequestFields, allowCloned = false): TtsConfig {
  const modelId = req.model;
  const model = registry.resolve(modelId);
  if (!model) {
    const offered = [...registry.models().map((m) => m.id), ...registry.aliases.keys()];
    throw new ApiError('model_not_available', `TTS model "${modelId}" is not available. Available: ${offered.join(', ')}.`);
  }
  const issues = crossFieldIssues(req, model);
  if (issues.length > 0) throw invalidFields(issues);
  const format = req.audio_format;
  const sampleRate = req.sample_rate ?? DEFAULT_SAMPLE_RATE;
  // A compressed format's default bitrate, lowered to what the encoder can produce at the sample rate.
  const bitrate =
    req.bitrate ?? (DEFAULT_BITRATE[format] && BITRATES.filter((b) => b <= Math.min(DEFAULT_BITRATE[format]!, maxBitrate(format, sampleRate))).pop());
  const voiceName = req.voice;
  const voice = model.voices.find((v) => v.id === voiceName) ?? model.voices.find((v) => v.id.toLowerCase() === voiceName.toLowerCase());
  const base = {
    model,
    requestedModel: modelId,
    language: req.language,
    format,
    contentType: contentTypeOf(format),
    sampleRate,
    bitrate,
    speed: req.speed ?? 1,
    reduceSilence: req.reduce_silence ?? false,
    clientReferenceId: req.client_reference_id ?? null,
  };
  // A cloned voice is a uuid: resolveConfigFor looks it up (the voice here is a placeholder until then).
  if (!voice && allowCloned && UUID_RE.test(voiceName) && model.voices[0])
    return { ...base, voice: model.voices[0], cloned: { voiceId: voiceName.toLowerCase(), pitchSemitones: 0, pitchRange: 1, rate: 1 } };
  if (!voice) throw new ApiError('voice_not_found', `Voice "${voiceName}" not found for model ${modelId}.`);
  checkVoiceLanguage(model, voice, req.language, modelId, voice.id);
  // The engine voice that speaks this language (the routed default model's English voices are flite's).
  return { ...base, voice: model.voiceIn?.(voice, req.language) ?? voice };
}

/**
 * Validate the whole text of a request (for the resolved voice: festival's Hindi voice reads no Latin). `text` as
 * received (Wyoming's is unchecked); its errors are located at `text`.
 */
export function checkTtsText(text: unknown, maxTextChars: number, cfg?: TtsConfig): string {
  if (text === undefined || text === null) throw invalidField('text', 'is required', 'missing');
  if (typeof text !== 'string') throw invalidField('text', 'must be string', 'invalid_type');
  if (!/[\p{L}\p{N}]/u.test(text)) throw invalidField('text', 'must contain something to speak');
  if (text.length > maxTextChars) throw invalidField('text', `must NOT have more than ${maxTextChars} characters`, 'invalid_length');
  if (cfg?.model.engine.speaks && !cfg.model.engine.speaks(text, cfg.voice.engineVoice))
    throw invalidField('text', `has nothing voice "${cfg.voice.id}" can pronounce in "${cfg.language}" (check the text's script and the language)`);
  return text;
}
