// The real-time configuration message (the first text frame of /transcribe-websocket), validated field by field.
// Spec table "Real-time transcription WebSocket" plus the keys the official SDKs send (docs/wire-compat.md, "Real-time
// STT WebSocket"; the message's shape is SttConfigMessage in src/wire/stt-frames.ts).
// Unknown keys are ignored (a server that rejects them would fail SDK sessions); known keys of the wrong type or out
// of range give invalid_request naming the field.
import { ApiError, asApiError } from '../../wire/api-error.js';
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
  /** Parlance: enrolled speaker ids to recognise (with diarization). */
  speakers?: string[];
  enableLanguageIdentification: boolean;
  /** Parlance: formatted final tokens; unset = the server's setting. */
  enableTextFormatting?: boolean;
  clientReferenceId?: string;
  translation?: Translation;
}

export const isRawInputFormat = (format: string): boolean => RAW_INPUT_FORMATS.has(format);

const bad = (field: string, message: string) => new ApiError('invalid_request', `Invalid request: ${field}: ${message}`);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function optBool(c: Obj, key: string, dflt: boolean): boolean {
  const v = c[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw bad(key, 'must be a boolean.');
  return v;
}

function optNumber(c: Obj, key: string, min: number, max: number, opts: { integer?: boolean } = {}): number | undefined {
  const v = c[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(key, 'must be a number.');
  if (opts.integer && !Number.isInteger(v)) throw bad(key, 'must be an integer.');
  if (v < min || v > max) throw bad(key, `must be between ${min} and ${max}; got ${v}.`);
  return v;
}

/** Enrolled speaker ids (`speakers`): at most 32 strings, only with diarization; checked against the project later. */
function optSpeakers(c: Obj, diarization: boolean): string[] | undefined {
  const v = c.speakers;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((id) => typeof id !== 'string' || id.length === 0 || id.length > 64))
    throw bad('speakers', 'must be an array of enrolled speaker ids (strings).');
  if (v.length > 32) throw bad('speakers', `at most 32 speakers may be recognised at once; got ${v.length}.`);
  if (v.length > 0 && !diarization) throw bad('speakers', 'needs enable_speaker_diarization: true.');
  return v.length ? (v as string[]) : undefined;
}

function optString(c: Obj, key: string, maxLen: number): string | undefined {
  const v = c[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw bad(key, 'must be a string.');
  if (v.length > maxLen) throw bad(key, `must be at most ${maxLen} characters; got ${v.length}.`);
  return v;
}

/**
 * Approximate token count of a context: words and single punctuation marks, i.e. the text split at whitespace
 * with every non-alphanumeric character counted on its own. Real tokenizers split long words further; this is
 * a documented approximation (docs/guide/realtime.md), deliberately on the generous side for plain prose.
 */
export function approximateTokens(text: string): number {
  return (text.match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? []).length;
}

/** Every string inside the SDK object form, for the length and token caps. */
function contextText(ctx: Obj): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (isObj(v)) Object.values(v).forEach(walk);
  };
  walk(ctx);
  return parts.join(' ');
}

function validateContextObject(ctx: Obj): void {
  const { general, text, terms, translation_terms: tt } = ctx;
  if (general !== undefined && general !== null) {
    if (!Array.isArray(general)) throw bad('context.general', 'must be an array of {key, value} objects.');
    general.forEach((g, i) => {
      if (!isObj(g) || typeof g.key !== 'string' || typeof g.value !== 'string')
        throw bad(`context.general.${i}`, 'must be an object with string key and value.');
    });
  }
  if (text !== undefined && text !== null && typeof text !== 'string') throw bad('context.text', 'must be a string.');
  if (terms !== undefined && terms !== null) {
    if (!Array.isArray(terms) || terms.some((t) => typeof t !== 'string')) throw bad('context.terms', 'must be an array of strings.');
  }
  if (tt !== undefined && tt !== null) {
    if (!Array.isArray(tt)) throw bad('context.translation_terms', 'must be an array of {source, target} objects.');
    tt.forEach((t, i) => {
      if (!isObj(t) || typeof t.source !== 'string' || typeof t.target !== 'string')
        throw bad(`context.translation_terms.${i}`, 'must be an object with string source and target.');
    });
  }
}

function validateTranslation(v: unknown): Translation | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw bad('translation', 'must be an object.');
  const lang = (key: string): string => {
    const l = v[key];
    if (typeof l !== 'string' || !/^[a-z]{2,3}(-[A-Za-z0-9]+)*$/.test(l)) throw bad(`translation.${key}`, 'must be a language code such as "es".');
    return l;
  };
  if (v.type === 'one_way') return { type: 'one_way', target_language: lang('target_language') };
  if (v.type === 'two_way') {
    const a = lang('language_a');
    const b = lang('language_b');
    if (a === b) throw bad('translation', 'language_a and language_b must differ.');
    return { type: 'two_way', language_a: a, language_b: b };
  }
  throw bad('translation.type', 'must be "one_way" or "two_way".');
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
 * Validate the configuration message (already parsed JSON, api_key handled by the caller). Throws invalid_request
 * naming the first bad field. Model existence and translation availability are checked by the service.
 */
export function parseRealtimeConfig(c: unknown): RealtimeConfig {
  if (!isObj(c)) throw new ApiError('invalid_request', 'Invalid request: the first message must be a JSON object with the configuration.');
  const model = c.model;
  if (model === undefined || model === null || model === '') throw bad('model', 'is required.');
  if (typeof model !== 'string') throw bad('model', 'must be a string.');

  const audioFormat = c.audio_format;
  if (audioFormat === undefined || audioFormat === null || audioFormat === '')
    throw bad('audio_format', 'is required ("auto" or a raw format such as "pcm_s16le").');
  if (typeof audioFormat !== 'string') throw bad('audio_format', 'must be a string.');
  const raw = RAW_INPUT_FORMATS.has(audioFormat);
  if (audioFormat !== 'auto' && !raw && !CONTAINER_FORMATS.has(audioFormat))
    throw bad(
      'audio_format',
      `unknown format "${audioFormat}"; use "auto", a raw format (pcm_s16le, pcm_f32le, mulaw, ...) or a container (${[...CONTAINER_FORMATS].join(', ')}).`,
    );
  const numChannels = optNumber(c, 'num_channels', 1, 8, { integer: true });
  const sampleRate = optNumber(c, 'sample_rate', 1000, 384_000, { integer: true });
  if (raw && numChannels === undefined) throw bad('num_channels', `is required for raw audio format ${audioFormat}.`);
  if (raw && sampleRate === undefined) throw bad('sample_rate', `is required for raw audio format ${audioFormat}.`);

  let languageHints: string[] = [];
  if (c.language_hints !== undefined && c.language_hints !== null) {
    if (!Array.isArray(c.language_hints)) throw bad('language_hints', 'must be an array of language codes.');
    c.language_hints.forEach((h, i) => {
      if (typeof h !== 'string' || h.length === 0 || h.length > 16) throw bad(`language_hints.${i}`, 'must be a language code such as "en".');
    });
    languageHints = c.language_hints as string[];
  }
  const languageHintsStrict = optBool(c, 'language_hints_strict', false);

  let context: RealtimeConfig['context'];
  if (c.context !== undefined && c.context !== null) {
    let text: string;
    if (typeof c.context === 'string') text = c.context;
    else if (isObj(c.context)) {
      validateContextObject(c.context);
      text = contextText(c.context);
    } else throw bad('context', 'must be a string or an object {general, text, terms, translation_terms}.');
    if (text.length > MAX_CONTEXT_CHARS) throw bad('context', `must be at most ${MAX_CONTEXT_CHARS} characters; got ${text.length}.`);
    const tokens = approximateTokens(text);
    if (tokens > MAX_CONTEXT_TOKENS) throw bad('context', `is over ${MAX_CONTEXT_TOKENS} tokens (about ${tokens}).`);
    context = c.context as RealtimeConfig['context'];
  }

  const enableNonFinalTokens = optBool(c, 'enable_non_final_tokens', true);
  const maxNonFinalTokensDurationMs = optNumber(c, 'max_non_final_tokens_duration_ms', 360, 6000) ?? 4000;
  const enableEndpointDetection = optBool(c, 'enable_endpoint_detection', false);
  const maxEndpointDelayMs = optNumber(c, 'max_endpoint_delay_ms', 500, 3000) ?? 2000;
  optNumber(c, 'endpoint_sensitivity', -1, 1);
  optNumber(c, 'endpoint_latency_adjustment_level', 0, 3, { integer: true });
  const enableSpeakerDiarization = optBool(c, 'enable_speaker_diarization', false);
  const speakers = optSpeakers(c, enableSpeakerDiarization);
  const enableLanguageIdentification = optBool(c, 'enable_language_identification', false);
  const enableTextFormatting =
    c.enable_text_formatting === undefined || c.enable_text_formatting === null ? undefined : optBool(c, 'enable_text_formatting', true);
  const clientReferenceId = optString(c, 'client_reference_id', MAX_CLIENT_REFERENCE_ID);
  const translation = validateTranslation(c.translation);

  return {
    model,
    audioFormat,
    ...(numChannels !== undefined ? { numChannels } : {}),
    ...(sampleRate !== undefined ? { sampleRate } : {}),
    languageHints,
    languageHintsStrict,
    ...(context !== undefined ? { context } : {}),
    enableNonFinalTokens,
    maxNonFinalTokensDurationMs,
    enableEndpointDetection,
    maxEndpointDelayMs,
    enableSpeakerDiarization,
    ...(speakers ? { speakers } : {}),
    enableLanguageIdentification,
    ...(enableTextFormatting !== undefined ? { enableTextFormatting } : {}),
    ...(clientReferenceId !== undefined ? { clientReferenceId } : {}),
    ...(translation ? { translation } : {}),
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
    throw new ApiError(
      'invalid_request',
      `Invalid request: language_hints.${bad.index}: language "${bad.language}" is not supported by model ${modelId} (supported: ${languages.join(', ')}).`,
    );
  let plan: LanguageOptions['plan'];
  if (config.translation) {
    const r = catalog.planTranslation(config.translation, modelId, languages);
    if (!r.ok) throw new ApiError('invalid_request', `Invalid request: translation: ${r.message}.`);
    plan = r.plan;
  }
  return { language: languages[0] ?? 'en', plan, identifyLanguage: config.enableLanguageIdentification };
}
