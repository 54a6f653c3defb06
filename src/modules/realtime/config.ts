// The real-time configuration message (the first text frame of /transcribe-websocket): a TypeBox schema of its fields
// (RealtimeConfigFields, checked by src/wire/validate.ts), the rules between fields, and the defaults.
// Spec table "Real-time transcription WebSocket" plus the keys the official SDKs send (docs/wire-compat.md, "Real-time
// STT WebSocket"; the message's envelope is SttConfigMessage in src/wire/stt-frames.ts).
// Unknown keys are ignored (a server that rejects them would fail SDK sessions) and a null is an absent field; known
// keys of the wrong type or out of range give invalid_request naming each bad field by its dotted location.
import type { WordControls } from '../../text/word-controls.js';
import type { SpeakerCount } from '../../engines/diarization/interface.js';
import { ProfanityFilterField, RedactField, SpeakerCountField, speakerBounds, speakerCountIssues } from '../../wire/word-controls.js';
import { type Static, Type } from '@sinclair/typebox';
import { ApiError, asApiError, invalidField, invalidFields, type ValidationIssue } from '../../wire/api-error.js';
import { compileValidator } from '../../wire/validate.js';
import { type PlanResult, unsupportedHints } from '../translation/plan.js';
import type { LanguageOptions } from '../translation/tokens.js';

/** Raw PCM input formats and the companded ones, all converted in-process (src/audio/sample-decoder.ts). */
export const RAW_INPUT_FORMATS = new Set([
  'pcm_s8',
  'pcm_s8le',
  'pcm_s8be',
  'pcm_u8',
  'pcm_u8le',
  'pcm_u8be',
  'pcm_s16le',
  'pcm_s16be',
  'pcm_u16le',
  'pcm_u16be',
  'pcm_s24le',
  'pcm_s24be',
  'pcm_u24le',
  'pcm_u24be',
  'pcm_s32le',
  'pcm_s32be',
  'pcm_u32le',
  'pcm_u32be',
  'pcm_f32le',
  'pcm_f32be',
  'pcm_f64le',
  'pcm_f64be',
  'mulaw',
  'alaw',
]);

/** Container / compressed formats: WAV read in-process, the others decoded through ffmpeg (src/audio/live-pcm.ts). */
export const CONTAINER_FORMATS = new Set(['aac', 'aiff', 'amr', 'asf', 'wav', 'mp3', 'flac', 'ogg', 'webm']);

export const MAX_CONTEXT_CHARS = 10_000;
export const MAX_CONTEXT_TOKENS = 8_000;
export const MAX_CLIENT_REFERENCE_ID = 256;
/** Most channels of raw audio, and of a multichannel session (each channel has an engine stream of its own). */
export const MAX_CHANNELS = 8;

export type Translation = { type: 'one_way'; target_language: string } | { type: 'two_way'; language_a: string; language_b: string };

export interface RealtimeConfig {
  model: string;
  audioFormat: string;
  /** Present (validated) for raw formats. */
  numChannels?: number;
  sampleRate?: number;
  languageHints: string[];
  languageHintsStrict: boolean;
  /** As given: a string or the SDK's object form. */
  context?: string | Record<string, unknown>;
  enableNonFinalTokens: boolean;
  maxNonFinalTokensDurationMs: number;
  enableEndpointDetection: boolean;
  maxEndpointDelayMs: number;
  enableSpeakerDiarization: boolean;
  /** Parlance: bounds on the speaker count (num_speakers, min_speakers, max_speakers); a live stream honours max only. */
  speakerCount?: SpeakerCount;
  /** Parlance: enrolled speaker ids to recognise (with diarization). */
  speakers?: string[];
  enableLanguageIdentification: boolean;
  /** Parlance: formatted final tokens; unset = the server's setting. */
  enableTextFormatting?: boolean;
  /** Parlance: redaction and the profanity filter of every token sent. */
  wordControls: WordControls;
  /** Parlance: each channel recognised on its own (present only when asked for). */
  enableMultichannel?: true;
  clientReferenceId?: string;
  translation?: Translation;
}

export const isRawInputFormat = (format: string): boolean => RAW_INPUT_FORMATS.has(format);

const LanguageCode = Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]+)*$', errorMessage: 'must be a language code such as "es"' });
const Loose = { additionalProperties: true } as const;

/** The SDK's object form of `context`; its text counts toward the same caps as a string's. */
const ContextObject = Type.Object(
  {
    general: Type.Optional(Type.Array(Type.Object({ key: Type.String(), value: Type.String() }, Loose))),
    text: Type.Optional(Type.String()),
    terms: Type.Optional(Type.Array(Type.String())),
    translation_terms: Type.Optional(Type.Array(Type.Object({ source: Type.String(), target: Type.String() }, Loose))),
  },
  Loose,
);

/**
 * The rules of each field of the configuration message. Unknown keys are allowed, and a null is an absent field
 * (parseRealtimeConfig); the defaults are applied by parseRealtimeConfig.
 */
export const RealtimeConfigFields = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    audio_format: Type.Unsafe<string>({
      type: 'string',
      enum: ['auto', ...RAW_INPUT_FORMATS, ...CONTAINER_FORMATS],
      errorMessage: `must be "auto", a raw format (pcm_s16le, pcm_f32le, mulaw, ...) or a container (${[...CONTAINER_FORMATS].join(', ')})`,
    }),
    num_channels: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CHANNELS })),
    sample_rate: Type.Optional(Type.Integer({ minimum: 1000, maximum: 384_000 })),
    language_hints: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 16, errorMessage: 'must be a language code such as "en"' }))),
    language_hints_strict: Type.Optional(Type.Boolean()),
    context: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_CONTEXT_CHARS }), ContextObject], {
        errorMessage: 'must be a string or an object {general, text, terms, translation_terms}',
      }),
    ),
    enable_non_final_tokens: Type.Optional(Type.Boolean()),
    max_non_final_tokens_duration_ms: Type.Optional(Type.Number({ minimum: 360, maximum: 6000 })),
    enable_endpoint_detection: Type.Optional(Type.Boolean()),
    max_endpoint_delay_ms: Type.Optional(Type.Number({ minimum: 500, maximum: 3000 })),
    endpoint_sensitivity: Type.Optional(Type.Number({ minimum: -1, maximum: 1 })),
    endpoint_latency_adjustment_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 3 })),
    enable_speaker_diarization: Type.Optional(Type.Boolean()),
    num_speakers: Type.Optional(SpeakerCountField),
    min_speakers: Type.Optional(SpeakerCountField),
    max_speakers: Type.Optional(SpeakerCountField),
    /** Parlance: enrolled speaker ids, checked against the project later. */
    speakers: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 })),
    enable_language_identification: Type.Optional(Type.Boolean()),
    enable_text_formatting: Type.Optional(Type.Boolean()),
    redact: Type.Optional(RedactField),
    profanity_filter: Type.Optional(ProfanityFilterField),
    /** Parlance: recognise each channel on its own; needs audio of two or more channels. */
    enable_multichannel: Type.Optional(Type.Boolean()),
    client_reference_id: Type.Optional(Type.String({ maxLength: MAX_CLIENT_REFERENCE_ID })),
    translation: Type.Optional(
      Type.Union([
        Type.Object({ type: Type.Literal('one_way'), target_language: LanguageCode }, Loose),
        Type.Object({ type: Type.Literal('two_way'), language_a: LanguageCode, language_b: LanguageCode }, Loose),
      ]),
    ),
  },
  Loose,
);
type RealtimeConfigFields = Static<typeof RealtimeConfigFields>;

const configFields = compileValidator(RealtimeConfigFields, { nullAsAbsent: true, root: 'configuration' });

/**
 * Approximate token count of a context: words and single punctuation marks, i.e. the text split at whitespace
 * with every non-alphanumeric character counted on its own. Real tokenizers split long words further; this is
 * a documented approximation (docs/guide/realtime.md), deliberately on the generous side for plain prose.
 */
export function approximateTokens(text: string): number {
  return (text.match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? []).length;
}

/** Every string inside the SDK object form, for the length and token caps. */
function contextText(ctx: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  walk(ctx);
  return parts.join(' ');
}

/** The rules between fields, and the context's caps counted over its whole text. */
function crossFieldIssues(c: RealtimeConfigFields): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const issue = (location: string, message: string, errorType: string) => issues.push({ error_type: errorType, location, message });
  if (RAW_INPUT_FORMATS.has(c.audio_format)) {
    if (c.num_channels === undefined) issue('num_channels', `is required for raw audio format ${c.audio_format}`, 'missing');
    if (c.sample_rate === undefined) issue('sample_rate', `is required for raw audio format ${c.audio_format}`, 'missing');
  }
  if (c.context !== undefined) {
    const text = typeof c.context === 'string' ? c.context : contextText(c.context);
    const tokens = approximateTokens(text);
    if (text.length > MAX_CONTEXT_CHARS) issue('context', `must be at most ${MAX_CONTEXT_CHARS} characters; got ${text.length}`, 'invalid_length');
    else if (tokens > MAX_CONTEXT_TOKENS) issue('context', `is over ${MAX_CONTEXT_TOKENS} tokens (about ${tokens})`, 'invalid_length');
  }
  if (c.speakers?.length && !c.enable_speaker_diarization) issue('speakers', 'needs enable_speaker_diarization: true', 'invalid_value');
  for (const i of speakerCountIssues(c)) issue(i.location, i.message, i.errorType);
  // A container's channels are known from its header (live-channels.ts refuses one channel then).
  if (c.enable_multichannel && RAW_INPUT_FORMATS.has(c.audio_format) && c.num_channels !== undefined && c.num_channels < 2)
    issue('enable_multichannel', `needs audio with two or more channels; num_channels is ${c.num_channels}`, 'invalid_value');
  if (c.translation?.type === 'two_way' && c.translation.language_a === c.translation.language_b)
    issue('translation', 'language_a and language_b must differ', 'invalid_value');
  return issues;
}

/**
 * The configuration, or why it is refused: a live session reports the refusal after authentication, so that a caller
 * without a valid key learns nothing from its configuration's errors.
 */
export function checkRealtimeConfig(c: unknown): RealtimeConfig | ApiError {
  try {
    return parseRealtimeConfig(c);
  } catch (err) {
    return asApiError(err);
  }
}

/**
 * Validate the configuration message (already parsed JSON, api_key handled by the caller): the schema, then the rules
 * between fields; throws invalid_request naming every bad field. The defaults are applied here, once. Model existence
 * and translation availability are checked by the service.
 */
export function parseRealtimeConfig(body: unknown): RealtimeConfig {
  const c = configFields.parse(body);
  const issues = crossFieldIssues(c);
  if (issues.length > 0) throw invalidFields(issues);
  const t = c.translation;
  return {
    model: c.model,
    audioFormat: c.audio_format,
    ...(c.num_channels !== undefined ? { numChannels: c.num_channels } : {}),
    ...(c.sample_rate !== undefined ? { sampleRate: c.sample_rate } : {}),
    languageHints: c.language_hints ?? [],
    languageHintsStrict: c.language_hints_strict ?? false,
    ...(c.context !== undefined ? { context: c.context } : {}),
    enableNonFinalTokens: c.enable_non_final_tokens ?? true,
    maxNonFinalTokensDurationMs: c.max_non_final_tokens_duration_ms ?? 4000,
    enableEndpointDetection: c.enable_endpoint_detection ?? false,
    maxEndpointDelayMs: c.max_endpoint_delay_ms ?? 2000,
    enableSpeakerDiarization: c.enable_speaker_diarization ?? false,
    ...(speakerBounds(c) ? { speakerCount: speakerBounds(c) } : {}),
    ...(c.speakers?.length ? { speakers: c.speakers } : {}),
    enableLanguageIdentification: c.enable_language_identification ?? false,
    ...(c.enable_text_formatting !== undefined ? { enableTextFormatting: c.enable_text_formatting } : {}),
    wordControls: { redact: c.redact ?? [], profanityFilter: c.profanity_filter ?? false },
    ...(c.enable_multichannel ? { enableMultichannel: true as const } : {}),
    ...(c.client_reference_id !== undefined ? { clientReferenceId: c.client_reference_id } : {}),
    ...(t
      ? {
          translation:
            t.type === 'one_way'
              ? { type: 'one_way' as const, target_language: t.target_language }
              : { type: 'two_way' as const, language_a: t.language_a, language_b: t.language_b },
        }
      : {}),
  };
}

/**
 * Language identification and translation of a session, checked against what the model recognises and the installed
 * translation directions: invalid_request naming a strict hint the model lacks, or the unsupported pair.
 */
export function languageOptions(
  config: RealtimeConfig,
  modelId: string,
  languages: readonly string[],
  catalog: { planTranslation(t: Translation, modelId: string, languages: readonly string[]): PlanResult },
): LanguageOptions {
  // Hints are hints: a language the model lacks is ignored, unless the client asked for strict hints.
  const bad = config.languageHintsStrict ? unsupportedHints(config.languageHints, languages, config.translation)[0] : undefined;
  if (bad)
    throw invalidField(
      `language_hints.${bad.index}`,
      `language "${bad.language}" is not supported by model ${modelId} (supported: ${languages.join(', ')})`,
      'unsupported',
    );
  let plan: LanguageOptions['plan'];
  if (config.translation) {
    const r = catalog.planTranslation(config.translation, modelId, languages);
    if (!r.ok) throw invalidField('translation', r.message, 'unsupported');
    plan = r.plan;
  }
  return { language: languages[0] ?? 'en', plan, identifyLanguage: config.enableLanguageIdentification };
}
