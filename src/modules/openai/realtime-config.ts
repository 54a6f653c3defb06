// The configuration of one OpenAI Realtime transcription session: defaults, the GA and beta updates applied to it,
// how each shape renders it back (session.updated / transcription_session.updated), and the native real-time
// configuration message it becomes when the recognizer starts.
import type { AudioTranscription, BetaFormat, BetaSession, GaSession, TurnDetection } from './realtime-schemas.js';
import { fieldError } from './realtime-schemas.js';

export interface TranscriptionSettings {
  format: BetaFormat;
  /** transcription.model as the client named it (an OpenAI name or one of ours). */
  model: string;
  language: string | null;
  prompt: string | null;
  /** Terms to expect (OpenAI's `keywords`): the context's terms, the prompt its text. */
  keywords: string[];
  turnDetection: TurnDetection | null;
  noiseReduction: { type?: 'near_field' | 'far_field' } | null;
  logprobs: boolean;
}

export const DEFAULT_TRANSCRIPTION_MODEL = 'gpt-4o-transcribe';
/** OpenAI's server VAD defaults. */
const SERVER_VAD = { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 } as const;

export function defaultSettings(model?: string): TranscriptionSettings {
  return {
    format: 'pcm16',
    model: model || DEFAULT_TRANSCRIPTION_MODEL,
    language: null,
    prompt: null,
    keywords: [],
    turnDetection: { ...SERVER_VAD },
    noiseReduction: null,
    logprobs: false,
  };
}

/** Bytes per millisecond of each input format (pcm16 at 24 kHz; G.711 at 8 kHz, one byte a sample). */
export const BYTES_PER_MS: Record<BetaFormat, number> = { pcm16: 48, g711_ulaw: 8, g711_alaw: 8 };

const GA_FORMAT: Record<BetaFormat, Record<string, unknown>> = {
  pcm16: { type: 'audio/pcm', rate: 24000 },
  g711_ulaw: { type: 'audio/pcmu' },
  g711_alaw: { type: 'audio/pcma' },
};

function fromGaFormat(type: 'audio/pcm' | 'audio/pcmu' | 'audio/pcma'): BetaFormat {
  return type === 'audio/pcm' ? 'pcm16' : type === 'audio/pcmu' ? 'g711_ulaw' : 'g711_alaw';
}

function withTranscription(s: TranscriptionSettings, t: AudioTranscription | null | undefined): TranscriptionSettings {
  if (t === undefined) return s;
  // null turns transcription "off" in OpenAI; a transcription session has nothing else to do, so it keeps the defaults.
  if (t === null) return { ...s, model: DEFAULT_TRANSCRIPTION_MODEL, language: null, prompt: null, keywords: [] };
  return {
    ...s,
    model: t.model ?? s.model,
    language: t.language === undefined ? s.language : t.language || null,
    prompt: t.prompt === undefined ? s.prompt : t.prompt || null,
    keywords: t.keywords === undefined ? s.keywords : [...(t.keywords ?? [])],
  };
}

function withTurnDetection(s: TranscriptionSettings, t: TurnDetection | null | undefined): TranscriptionSettings {
  if (t === undefined) return s;
  if (t === null) return { ...s, turnDetection: null };
  return { ...s, turnDetection: t.type === 'server_vad' ? { ...SERVER_VAD, ...t } : { eagerness: 'auto', ...t } };
}

/** Apply a GA `session.update` (only the fields present change). */
export function applyGa(s: TranscriptionSettings, session: GaSession, eventId: string | null): TranscriptionSettings {
  if (session.type !== 'transcription')
    throw fieldError('invalid_value', 'session.type', 'only transcription sessions are served here; send "transcription"', eventId);
  const input = session.audio?.input;
  let next = { ...s };
  if (input?.format) next.format = fromGaFormat(input.format.type);
  next = withTranscription(next, input?.transcription);
  next = withTurnDetection(next, input?.turn_detection);
  if (input?.noise_reduction !== undefined) next.noiseReduction = input.noise_reduction;
  if (session.include) next.logprobs = session.include.length > 0;
  return next;
}

/** Apply a beta `transcription_session.update`. */
export function applyBeta(s: TranscriptionSettings, session: BetaSession): TranscriptionSettings {
  let next = { ...s };
  if (session.input_audio_format) next.format = session.input_audio_format;
  next = withTranscription(next, session.input_audio_transcription);
  next = withTurnDetection(next, session.turn_detection);
  if (session.input_audio_noise_reduction !== undefined) next.noiseReduction = session.input_audio_noise_reduction;
  if (session.include) next.logprobs = session.include.length > 0;
  return next;
}

function transcription(s: TranscriptionSettings): Record<string, unknown> {
  return { model: s.model, language: s.language, prompt: s.prompt ?? '', ...(s.keywords.length ? { keywords: s.keywords } : {}) };
}

const include = (s: TranscriptionSettings) => (s.logprobs ? ['item.input_audio_transcription.logprobs'] : []);

/** The GA session object (session.created / session.updated). */
export function renderGa(s: TranscriptionSettings, id: string, expiresAt: number): Record<string, unknown> {
  return {
    type: 'transcription',
    object: 'realtime.transcription_session',
    id,
    expires_at: expiresAt,
    audio: { input: { format: GA_FORMAT[s.format], transcription: transcription(s), turn_detection: s.turnDetection, noise_reduction: s.noiseReduction } },
    include: include(s),
  };
}

/** The beta session object (transcription_session.created / .updated). */
export function renderBeta(s: TranscriptionSettings, id: string, expiresAt: number): Record<string, unknown> {
  return {
    id,
    object: 'realtime.transcription_session',
    expires_at: expiresAt,
    modalities: ['text'],
    input_audio_format: s.format,
    input_audio_transcription: transcription(s),
    turn_detection: s.turnDetection,
    input_audio_noise_reduction: s.noiseReduction,
    include: include(s),
  };
}

/** What the running recognizer was started with, by the update's field names: these cannot change once audio flows. */
export function lockedFields(s: TranscriptionSettings, shape: 'ga' | 'beta'): Record<string, string | string[] | null> {
  const [format, transcription] =
    shape === 'ga' ? ['session.audio.input.format', 'session.audio.input.transcription'] : ['session.input_audio_format', 'session.input_audio_transcription'];
  return {
    [format]: s.format,
    [`${transcription}.model`]: s.model,
    [`${transcription}.language`]: s.language,
    [`${transcription}.prompt`]: s.prompt,
    [`${transcription}.keywords`]: s.keywords,
  };
}

/** Silence that ends a turn: server VAD's silence_duration_ms, semantic VAD's eagerness (its max timeouts, shortened). */
export function turnSilenceMs(t: TurnDetection | null): number {
  if (!t) return SERVER_VAD.silence_duration_ms;
  if (t.type === 'server_vad') return t.silence_duration_ms ?? SERVER_VAD.silence_duration_ms;
  return { low: 2000, medium: 1000, auto: 1000, high: 500 }[t.eagerness ?? 'auto'];
}

/** OpenAI's transcription model names: served by the configured real-time model. */
const OPENAI_MODEL = /^(whisper-|gpt-)/;

/** The real-time model id (or alias) serving a transcription model name. */
export function nativeModel(model: string, defaultModel: string): string {
  return OPENAI_MODEL.test(model) ? defaultModel : model;
}

/** The live session's configuration (src/modules/realtime/config.ts, checked there) for these settings. */
export function nativeConfig(s: TranscriptionSettings, defaultModel: string): Record<string, unknown> {
  const raw =
    s.format === 'pcm16' ? { audio_format: 'pcm_s16le', sample_rate: 24000 } : { audio_format: s.format === 'g711_ulaw' ? 'mulaw' : 'alaw', sample_rate: 8000 };
  return {
    model: nativeModel(s.model, defaultModel),
    ...raw,
    num_channels: 1,
    // Engine endpoints always come: with turn detection off they are ignored, so it can be switched either way mid-session.
    enable_endpoint_detection: true,
    max_endpoint_delay_ms: Math.min(3000, Math.max(500, turnSilenceMs(s.turnDetection))),
    enable_non_final_tokens: true,
    ...(s.language ? { language_hints: [s.language] } : {}),
    ...(s.keywords.length ? { context: { ...(s.prompt ? { text: s.prompt } : {}), terms: s.keywords } } : s.prompt ? { context: s.prompt } : {}),
  };
}
