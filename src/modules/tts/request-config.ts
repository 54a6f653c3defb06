// Text-to-speech request rules: the generation parameters of POST /tts, /v1/audio/speech and a /tts-websocket start
// (model, language, voice, format, sample rate, bitrate, speed, silence reduction), validated before any audio and
// resolved once with their defaults into a TtsConfig; and the checks on the text to speak.
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import { AUDIO_FORMATS, type AudioFormat, contentTypeOf } from '../../audio/speech-encoder.js';
import { ApiError } from '../../wire/api-error.js';
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
const invalid = (msg: string) => new ApiError('invalid_request', msg);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A voice that speaks only some of the model's languages (festival: one each) refuses the others before any
 * audio, as the model refuses a language it lacks: 400 invalid_request naming the voices that speak it.
 */
export function checkVoiceLanguage(model: TtsModel, voice: TtsVoice, language: string, modelId: string, voiceName: string): void {
  if (!voice.languages || voice.languages.includes(language)) return;
  const speakers = model.voices.filter((v) => !v.languages || v.languages.includes(language)).map((v) => v.id);
  throw invalid(
    `voice "${voiceName}" of model ${modelId} speaks ${voice.languages.join(', ')}, not "${language}"; voices for "${language}": ${speakers.join(', ') || 'none'}.`,
  );
}

/** Validate a generation request (the HTTP body or a WebSocket start message). Throws before any audio. */
export function resolveTtsConfig(registry: TtsRegistry, body: unknown, allowCloned = false): TtsConfig {
  if (!isObject(body)) throw invalid('Request body must be a JSON object.');
  const str = (k: string, required: boolean, max = 256): string | undefined => {
    const v = body[k];
    if (v === undefined || v === null) {
      if (required) throw invalid(`${k} is required.`);
      return undefined;
    }
    if (typeof v !== 'string') throw invalid(`${k} must be a string.`);
    if (required && v.length === 0) throw invalid(`${k} must not be empty.`);
    if (v.length > max) throw invalid(`${k} is longer than ${max} characters.`);
    return v;
  };
  const modelId = str('model', true)!;
  const model = registry.resolve(modelId);
  if (!model) {
    const offered = [...registry.models().map((m) => m.id), ...registry.aliases.keys()];
    throw new ApiError('model_not_available', `TTS model "${modelId}" is not available. Available: ${offered.join(', ')}.`);
  }
  const language = str('language', true, 16)!;
  if (!model.engine.languages.some((l) => l.code === language))
    throw invalid(`language "${language}" is not supported by model ${modelId}; GET /v1/tts-models lists the languages.`);
  const fmt = str('audio_format', true, 32)!;
  if (!(AUDIO_FORMATS as readonly string[]).includes(fmt)) throw invalid(`audio_format must be one of ${AUDIO_FORMATS.join(', ')}.`);
  const format = fmt as AudioFormat;

  let sampleRate = DEFAULT_SAMPLE_RATE;
  if (body.sample_rate !== undefined && body.sample_rate !== null) {
    const sr = body.sample_rate;
    if (typeof sr !== 'number' || !(SAMPLE_RATES as readonly number[]).includes(sr)) throw invalid(`sample_rate must be one of ${SAMPLE_RATES.join(', ')}.`);
    if (format === 'opus' && sr === 44100) throw invalid('sample_rate 44100 is not valid for opus; use 8000, 16000, 24000 or 48000.');
    sampleRate = sr;
  }
  let bitrate: number | undefined;
  if (body.bitrate !== undefined && body.bitrate !== null) {
    const br = body.bitrate;
    if (typeof br !== 'number' || !(BITRATES as readonly number[]).includes(br)) throw invalid(`bitrate must be one of ${BITRATES.join(', ')}.`);
    if (!COMPRESSED.includes(format)) throw invalid(`bitrate applies only to mp3, aac and opus, not ${format}.`);
    bitrate = br;
  } else bitrate = DEFAULT_BITRATE[format];
  if (bitrate !== undefined) {
    // What each encoder can produce at the sample rate (MPEG-2/2.5 layer III, AAC, mono Opus).
    const max = format === 'mp3' ? (sampleRate <= 8000 ? 64000 : sampleRate <= 24000 ? 160000 : 320000) : format === 'aac' ? 6 * sampleRate : 256000;
    if (bitrate > max) {
      if (body.bitrate !== undefined && body.bitrate !== null)
        throw invalid(`bitrate ${bitrate} is not valid for ${format} at sample_rate ${sampleRate} (at most ${max}).`);
      bitrate = BITRATES.filter((b) => b <= max).pop();
    }
  }
  let speed = 1;
  if (body.speed !== undefined && body.speed !== null) {
    if (typeof body.speed !== 'number' || !Number.isFinite(body.speed) || body.speed < SPEED_MIN || body.speed > SPEED_MAX)
      throw invalid(`speed must be a number from ${SPEED_MIN} to ${SPEED_MAX}.`);
    speed = body.speed;
  }
  let reduceSilence = false;
  if (body.reduce_silence !== undefined && body.reduce_silence !== null) {
    if (typeof body.reduce_silence !== 'boolean') throw invalid('reduce_silence must be a boolean.');
    if (body.reduce_silence && !model.supportsSilenceReduction) throw invalid(`reduce_silence is not supported by model ${modelId}.`);
    reduceSilence = body.reduce_silence;
  }
  const clientReferenceId = str('client_reference_id', false, 256) ?? null;
  const voiceName = str('voice', true)!;
  const voice = model.voices.find((v) => v.id === voiceName) ?? model.voices.find((v) => v.id.toLowerCase() === voiceName.toLowerCase());
  const base = {
    model,
    requestedModel: modelId,
    language,
    format,
    contentType: contentTypeOf(format),
    sampleRate,
    bitrate,
    speed,
    reduceSilence,
    clientReferenceId,
  };
  // A cloned voice is a uuid: resolveConfigFor looks it up (the voice here is a placeholder until then).
  if (!voice && allowCloned && UUID_RE.test(voiceName) && model.voices[0])
    return { ...base, voice: model.voices[0], cloned: { voiceId: voiceName.toLowerCase(), pitchSemitones: 0, pitchRange: 1, rate: 1 } };
  if (!voice) throw new ApiError('voice_not_found', `Voice "${voiceName}" not found for model ${modelId}.`);
  checkVoiceLanguage(model, voice, language, modelId, voice.id);
  // The engine voice that speaks this language (the routed default model's English voices are flite's).
  return { ...base, voice: model.voiceIn?.(voice, language) ?? voice };
}

/** Validate the whole text of an HTTP request (for the resolved voice: festival's Hindi voice reads no Latin). */
export function checkTtsText(text: unknown, maxTextChars: number, cfg?: TtsConfig): string {
  if (text === undefined || text === null) throw invalid('text is required.');
  if (typeof text !== 'string') throw invalid('text must be a string.');
  if (!/[\p{L}\p{N}]/u.test(text)) throw invalid('text must contain something to speak.');
  if (text.length > maxTextChars) throw invalid(`text is longer than ${maxTextChars} characters.`);
  if (cfg?.model.engine.speaks && !cfg.model.engine.speaks(text, cfg.voice.engineVoice))
    throw invalid(`text has nothing voice "${cfg.voice.id}" can pronounce in "${cfg.language}" (check the text's script and the language).`);
  return text;
}
