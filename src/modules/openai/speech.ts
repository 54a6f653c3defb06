// The rules of POST /v1/audio/speech: an OpenAI speech request turned into a native TTS request (model aliases,
// OpenAI voice names, formats at 24 kHz, speed clamped into the engines' range), synthesized by TtsService like
// POST /tts (same validation, cloned voices, admission, metering). No HTTP types here.
import type { AudioFormat } from '../../audio/speech-encoder.js';
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import { SPEED_MAX, SPEED_MIN } from '../tts/model-records.js';
import type { TtsConfig } from '../tts/request-config.js';
import type { TtsService } from '../tts/service.js';
import type { SpeechText } from '../tts/speech-text.js';

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];
export const SPEECH_STREAM_FORMATS = ['audio', 'sse'] as const;
export const SPEECH_MAX_INPUT = 4096;
export const SPEECH_SPEED_MIN = 0.25;
export const SPEECH_SPEED_MAX = 4;
/** OpenAI's speech output rate (pcm is raw 24 kHz s16le mono). */
export const SPEECH_SAMPLE_RATE = 24000;

/** OpenAI's model names: aliases of the default TTS model unless the alias table names them itself. */
export const OPENAI_TTS_MODELS = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15'] as const;
/** The default TTS model: the first of these the registry offers, else its first model. */
export const DEFAULT_TTS_IDS = ['tts-1', 'tts-rt-v2', 'tts-rt-v1'];

const NATIVE_FORMAT: Record<SpeechFormat, AudioFormat> = { mp3: 'mp3', opus: 'opus', aac: 'aac', flac: 'flac', wav: 'wav', pcm: 'pcm_s16le' };
/** The Content-Type OpenAI answers with for each response_format. */
export const SPEECH_CONTENT_TYPE: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

type Gender = 'male' | 'female' | 'neutral';
/**
 * OpenAI's voices: the gender they are heard as and the built-in voices they become, first offered wins (the default
 * model's English voices Adrian, Maya, Oliver and Noah are flite's, the most intelligible). A model without any of
 * them gets one of its voices of that gender.
 */
export const OPENAI_VOICES: Readonly<Record<string, { gender: Gender; prefer: readonly string[] }>> = {
  alloy: { gender: 'neutral', prefer: ['Rowan', 'Maya'] },
  ash: { gender: 'male', prefer: ['Noah', 'Kevin'] },
  ballad: { gender: 'male', prefer: ['Oliver', 'Alan'] },
  coral: { gender: 'female', prefer: ['Maya', 'Sarah'] },
  echo: { gender: 'male', prefer: ['Adrian', 'Richard'] },
  fable: { gender: 'male', prefer: ['Oliver', 'Alan'] },
  onyx: { gender: 'male', prefer: ['Adrian', 'Kenneth'] },
  nova: { gender: 'female', prefer: ['Maya', 'Sarah'] },
  sage: { gender: 'female', prefer: ['Clara', 'Sarah'] },
  shimmer: { gender: 'female', prefer: ['Fiona', 'Maya'] },
  verse: { gender: 'male', prefer: ['Noah', 'Keith'] },
  marin: { gender: 'female', prefer: ['Grace', 'Maya'] },
  cedar: { gender: 'male', prefer: ['Adrian', 'Keith'] },
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SpeechRequest {
  model: string;
  input: string;
  voice: string | { id: string };
  instructions?: string;
  response_format?: SpeechFormat;
  speed?: number;
  stream_format?: 'audio' | 'sse';
}

export interface SpeechPlan {
  cfg: TtsConfig;
  text: SpeechText;
  format: SpeechFormat;
  contentType: string;
  sse: boolean;
}

/** The engines' speed for an OpenAI speed (0.25–4): clamped into the range every model accepts (0.7–1.3). */
export function engineSpeed(speed: number | undefined): number {
  if (speed === undefined) return 1;
  return Math.min(SPEED_MAX, Math.max(SPEED_MIN, speed));
}

/** The built-in voice an OpenAI voice name stands for in `model`. */
export function voiceForOpenAiName(model: TtsModel, name: string, map: Readonly<Record<string, string>> = {}): TtsVoice | undefined {
  const key = name.toLowerCase();
  const spec = OPENAI_VOICES[key];
  if (!spec && !map[key]) return undefined;
  const byId = (id: string) => model.voices.find((v) => v.id.toLowerCase() === id.toLowerCase());
  const configured = map[key] ? byId(map[key]) : undefined;
  if (configured) return configured;
  if (!spec) return undefined;
  for (const id of spec.prefer) {
    const v = byId(id);
    if (v && (v.gender === spec.gender || spec.gender === 'neutral')) return v;
  }
  const curated = model.voices.filter((v) => !v.variant);
  const pool = [curated, model.voices].map((vs) => vs.filter((v) => v.gender === spec.gender)).find((vs) => vs.length) ?? curated;
  if (!pool.length) return model.voices[0];
  // Spread the names of one gender over the voices of that gender, the same way every time.
  const names = Object.keys(OPENAI_VOICES).filter((n) => OPENAI_VOICES[n]!.gender === spec.gender);
  return pool[Math.max(0, names.indexOf(key)) % pool.length];
}

export class OpenAiSpeech {
  constructor(
    private readonly tts: TtsService,
    /** OpenAI voice name → built-in voice id overrides (lower-case names). */
    private readonly voiceMap: Readonly<Record<string, string>> = {},
  ) {}

  /** The model `tts-1` and its siblings name: the alias table's own entry, else the default TTS model. */
  defaultModelId(): string | undefined {
    const reg = this.tts.registry;
    return DEFAULT_TTS_IDS.find((id) => reg.resolve(id)) ?? reg.models()[0]?.id;
  }

  private modelId(requested: string): string {
    const reg = this.tts.registry;
    if (reg.resolve(requested)) return requested;
    if ((OPENAI_TTS_MODELS as readonly string[]).includes(requested)) {
      const id = this.defaultModelId();
      if (id) return id;
    }
    const offered = [...OPENAI_TTS_MODELS, ...reg.models().map((m) => m.id), ...reg.aliases.keys()];
    throw new ApiError('model_not_available', `Text-to-speech model "${requested}" is not available. Available: ${offered.join(', ')}.`, {
      validationErrors: [{ error_type: 'invalid_value', location: 'model', message: 'is not a text-to-speech model' }],
    });
  }

  /** Validate and resolve a request into the native synthesis config; every refusal comes before any audio. */
  async plan(auth: AuthContext, req: SpeechRequest): Promise<SpeechPlan> {
    const modelId = this.modelId(req.model);
    const model = this.tts.registry.resolve(modelId)!;
    const requestedVoice = typeof req.voice === 'string' ? req.voice : req.voice.id;
    const own = model.voices.find((v) => v.id === requestedVoice) ?? model.voices.find((v) => v.id.toLowerCase() === requestedVoice.toLowerCase());
    const voice = own ?? voiceForOpenAiName(model, requestedVoice, this.voiceMap);
    if (!voice && !UUID_RE.test(requestedVoice)) {
      const names = Object.keys(OPENAI_VOICES).join(', ');
      throw invalidField(
        'voice',
        `"${requestedVoice}" is not a voice of model ${req.model}: use an OpenAI voice (${names}), a voice id from GET /v1/audio/voices, or a cloned voice id`,
      );
    }
    const codes = model.engine.languages.map((l) => l.code);
    const spoken = voice?.languages ?? codes;
    const language = spoken.includes('en') ? 'en' : (spoken[0] ?? 'en');
    const format = req.response_format ?? 'mp3';
    const native = {
      model: modelId,
      language,
      voice: voice?.id ?? requestedVoice,
      audio_format: NATIVE_FORMAT[format],
      sample_rate: SPEECH_SAMPLE_RATE,
      speed: engineSpeed(req.speed),
    };
    let cfg: TtsConfig;
    try {
      cfg = await this.tts.resolveConfigFor(auth, native);
    } catch (err) {
      // OpenAI answers an unknown voice with 400 naming `voice`; the native API's 404 would be a NotFoundError.
      if (err instanceof ApiError && err.type === 'voice_not_found') throw invalidField('voice', err.message);
      throw err;
    }
    let text: SpeechText;
    try {
      text = this.tts.checkText(req.input, cfg);
    } catch (err) {
      // The native request's `text` is OpenAI's `input`.
      const issue = err instanceof ApiError ? err.validationErrors.find((v) => v.location === 'text') : undefined;
      if (issue) throw invalidField('input', issue.message, issue.error_type);
      throw err;
    }
    return { cfg, text, format, contentType: SPEECH_CONTENT_TYPE[format], sse: req.stream_format === 'sse' };
  }
}

/** OpenAI's usage of a speech request: the characters read as input tokens, one output token per 20 ms of audio. */
export function speechUsage(characters: number, seconds: number): { input_tokens: number; output_tokens: number; total_tokens: number } {
  const output = Math.round(seconds * 50);
  return { input_tokens: characters, output_tokens: output, total_tokens: characters + output };
}
