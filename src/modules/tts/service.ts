// Text-to-speech rules: request validation (before any audio), model / voice resolution, the synthesis
// pipeline (engine → silence reduction → 2-minute cap → streaming encoder) with character timings, the
// model and voice listings. No HTTP or WebSocket types here.
import { PitchShifter } from '../../audio/pitch-shift.js';
import type { TtsModel, TtsRegistry, TtsVoice } from '../../engines/tts/registry.js';
import { AGES } from '../../engines/tts/registry.js';
import { type CursorCodec, invalidCursor } from '../../lib/cursor.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import { requirePermission } from '../auth/permissions.js';
import type { AuthContext, AuthService } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import type { ConcurrencyLimits } from '../limits/concurrency.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { UsageMeter } from '../usage/service.js';
import { AUDIO_FORMATS, type AudioFormat, contentTypeOf, encode } from './encoder.js';
import { SPEED_MAX, SPEED_MIN, ttsModelRecords, type TtsModelRecord } from './model-records.js';
import { RAW_FORMATS, rawEncode } from './pcm.js';
import { trimSilenceOffThread } from '../../audio/audio-thread.js';
import type { WorkGate } from '../../lib/work-gate.js';

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
/** Engine speed bounds once a cloned voice's rate multiplies the request's speed. */
const ENGINE_SPEED_MIN = 0.5;
const ENGINE_SPEED_MAX = 2;

export interface Timestamps {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

export interface TtsOutputChunk {
  audio: Buffer;
  /** Characters whose audio was handed to the encoder since the previous chunk. */
  timestamps?: Timestamps;
}

export interface TtsOutput {
  chunks: AsyncGenerator<TtsOutputChunk>;
  /** True once the 2-minute cap cut the audio. */
  truncated(): boolean;
  /** Timings not yet attached to a chunk (for the final frame). */
  takeTimestamps(): Timestamps | undefined;
  /** Seconds of audio generated so far. */
  seconds(): number;
}

export interface TtsServiceOptions {
  maxTextChars: number;
  maxAudioSeconds: number;
  /** Meters each finished request or stream (characters in, generated seconds out). */
  meter?: UsageMeter;
  /** The node's synthesizer processes, and how many requests and streams may share them before new ones get 429. */
  synthesis?: { gate: WorkGate; maxActive: number; onRefused?: () => void };
}

const invalid = (msg: string) => new ApiError('invalid_request', msg);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A voice that speaks only some of the model's languages (festival: one each) refuses the others before any
 * audio, as the model refuses a language it lacks: 400 invalid_request naming the voices that speak it.
 */
function checkVoiceLanguage(model: TtsModel, voice: TtsVoice, language: string, modelId: string, voiceName: string): void {
  if (!voice.languages || voice.languages.includes(language)) return;
  const speakers = model.voices.filter((v) => !v.languages || v.languages.includes(language)).map((v) => v.id);
  throw invalid(
    `voice "${voiceName}" of model ${modelId} speaks ${voice.languages.join(', ')}, not "${language}"; voices for "${language}": ${speakers.join(', ') || 'none'}.`,
  );
}

function charTimings(text: string, startSec: number, durSec: number): Timestamps {
  const chars = Array.from(text);
  const step = chars.length ? durSec / chars.length : 0;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    characters: chars,
    character_start_times_seconds: chars.map((_, i) => r(startSec + i * step)),
    character_end_times_seconds: chars.map((_, i) => r(startSec + (i + 1) * step)),
  };
}

function mergeTimestamps(list: Timestamps[]): Timestamps | undefined {
  if (!list.length) return undefined;
  return {
    characters: list.flatMap((t) => t.characters),
    character_start_times_seconds: list.flatMap((t) => t.character_start_times_seconds),
    character_end_times_seconds: list.flatMap((t) => t.character_end_times_seconds),
  };
}

export interface VoiceQuery {
  model?: unknown;
  gender?: unknown;
  age?: unknown;
  accent?: unknown;
  use_case?: unknown;
  style?: unknown;
  limit?: unknown;
  cursor?: unknown;
  /** Extension: only voices that speak this language code. */
  language?: unknown;
}

export class TtsService {
  private clonedVoices: ClonedVoiceResolver | undefined;
  /** HTTP requests and WebSocket streams holding a slot on this node (admission: `synthesis.maxActive`). */
  private active = 0;
  constructor(
    readonly registry: TtsRegistry,
    private readonly auth: AuthService,
    private readonly rateLimits: RateLimits,
    private readonly billing: BillingGuard,
    private readonly cursors: CursorCodec,
    private readonly concurrency: ConcurrencyLimits,
    readonly opts: TtsServiceOptions,
  ) {}

  /** Authenticate a stream or request start: API key or tts_rt temporary key, tts_rt:write, rate, billing. */
  async authorizeStart(key: unknown): Promise<AuthContext> {
    if (key !== undefined && typeof key !== 'string') throw new ApiError('unauthenticated', 'api_key must be a string.');
    const auth = await this.auth.authenticate(key, { temporaryUsage: 'tts_rt', consume: true });
    return this.admit(auth);
  }

  /** The checks after authentication: permission, rate limit, billing. */
  async admit(auth: AuthContext): Promise<AuthContext> {
    requirePermission(auth.permissions, 'tts_rt', 'write');
    await this.rateLimits.consume('tts', auth.organizationId, auth.projectId);
    await this.billing.assertCanStart(auth.organizationId, auth.projectId);
    return auth;
  }

  /** HTTP requests and WebSocket streams in progress on this node. */
  get activeCount(): number {
    return this.active;
  }

  /**
   * Take a concurrency slot for one HTTP request or WebSocket stream; 429 limit_exceeded when the
   * organization or project is at its cap, or this node's synthesizers are saturated. The returned release is
   * idempotent.
   */
  async acquire(auth: AuthContext): Promise<() => void> {
    const synthesis = this.opts.synthesis;
    if (synthesis && this.active >= synthesis.maxActive) {
      const seconds = synthesis.gate.retryAfterSeconds();
      synthesis.onRefused?.();
      throw new ApiError('limit_exceeded', `This server is saturated with speech synthesis (${this.active} requests and streams in progress); retry in ${seconds} s.`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
    this.active++;
    let releaseSlot: () => void;
    try {
      releaseSlot = await this.concurrency.acquire('tts', auth);
    } catch (err) {
      this.active--;
      throw err;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      releaseSlot();
    };
  }

  /** The voices module plugs in here: a uuid `voice` that is not a built-in name is looked up through it. */
  setClonedVoiceResolver(resolver: ClonedVoiceResolver): void {
    this.clonedVoices = resolver;
  }

  /** resolveConfig, then a cloned voice (a uuid) resolved within the caller's project. */
  async resolveConfigFor(auth: Pick<AuthContext, 'projectId'>, body: unknown): Promise<TtsConfig> {
    const cfg = this.resolveConfig(body, true);
    if (!cfg.cloned) return cfg;
    const id = cfg.cloned.voiceId;
    if (!this.clonedVoices) throw new ApiError('voice_not_found', `Voice "${id}" not found.`);
    const { voice, style } = await this.clonedVoices(auth.projectId, id, cfg.model);
    checkVoiceLanguage(cfg.model, voice, cfg.language, cfg.requestedModel, id);
    return { ...cfg, voice: cfg.model.voiceIn?.(voice, cfg.language) ?? voice, cloned: style };
  }

  /** Meter one finished (or stopped) HTTP request or WebSocket stream: the characters sent and the audio generated. */
  async recordUsage(auth: AuthContext, cfg: TtsConfig, u: { requestId: string; startedAt: Date; characters: number; seconds: number }): Promise<void> {
    if (!this.opts.meter || (u.characters <= 0 && u.seconds <= 0)) return;
    await this.opts.meter.meter({
      kind: 'tts',
      actor: auth,
      requestId: u.requestId,
      clientReferenceId: cfg.clientReferenceId ?? auth.temporary?.clientReferenceId ?? null,
      model: cfg.model.id,
      startTime: u.startedAt,
      inputCharacters: u.characters,
      outputAudioMs: u.seconds * 1000,
    });
  }

  /** Validate a generation request (the HTTP body or a WebSocket start message). Throws before any audio. */
  resolveConfig(body: unknown, allowCloned = false): TtsConfig {
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
    const model = this.registry.resolve(modelId);
    if (!model) {
      const offered = [...this.registry.models().map((m) => m.id), ...this.registry.aliases.keys()];
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
        if (body.bitrate !== undefined && body.bitrate !== null) throw invalid(`bitrate ${bitrate} is not valid for ${format} at sample_rate ${sampleRate} (at most ${max}).`);
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
    const base = { model, requestedModel: modelId, language, format, contentType: contentTypeOf(format), sampleRate, bitrate, speed, reduceSilence, clientReferenceId };
    // A cloned voice is a uuid: resolveConfigFor looks it up (the voice here is a placeholder until then).
    if (!voice && allowCloned && UUID_RE.test(voiceName) && model.voices[0])
      return { ...base, voice: model.voices[0], cloned: { voiceId: voiceName.toLowerCase(), pitchSemitones: 0, pitchRange: 1, rate: 1 } };
    if (!voice) throw new ApiError('voice_not_found', `Voice "${voiceName}" not found for model ${modelId}.`);
    checkVoiceLanguage(model, voice, language, modelId, voice.id);
    // The engine voice that speaks this language (the routed default model's English voices are flite's).
    return { ...base, voice: model.voiceIn?.(voice, language) ?? voice };
  }

  /** Validate the whole text of an HTTP request (for the resolved voice: festival's Hindi voice reads no Latin). */
  checkText(text: unknown, cfg?: TtsConfig): string {
    if (text === undefined || text === null) throw invalid('text is required.');
    if (typeof text !== 'string') throw invalid('text must be a string.');
    if (!/[\p{L}\p{N}]/u.test(text)) throw invalid('text must contain something to speak.');
    if (text.length > this.opts.maxTextChars) throw invalid(`text is longer than ${this.opts.maxTextChars} characters.`);
    if (cfg?.model.engine.speaks && !cfg.model.engine.speaks(text, cfg.voice.engineVoice))
      throw invalid(`text has nothing voice "${cfg.voice.id}" can pronounce in "${cfg.language}" (check the text's script and the language).`);
    return text;
  }

  /** Start synthesis. The returned chunks stream as the engine produces audio; stopping them stops the engine. */
  synthesize(cfg: TtsConfig, text: AsyncIterable<string> | string, signal?: AbortSignal): TtsOutput {
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const inRate = cfg.voice.sampleRate;
    const maxSamples = Math.round(this.opts.maxAudioSeconds * inRate);
    const state = { samples: 0, truncated: false, pending: [] as Timestamps[] };
    const engine = cfg.model.engine;
    const style = cfg.cloned;
    const speed = style ? Math.min(ENGINE_SPEED_MAX, Math.max(ENGINE_SPEED_MIN, cfg.speed * style.rate)) : cfg.speed;
    const pitchRange = style && engine.supportsPitchRange ? { pitchRange: style.pitchRange } : {};

    // Ended with the synthesis: chunks() aborts `ac` when the output finishes, fails or is dropped.
    const shifter = style ? new PitchShifter(inRate, style.pitchSemitones, ac.signal) : undefined;

    async function* pcm(): AsyncGenerator<Buffer> {
      for await (const ch of engine.synthesize(text, cfg.voice.engineVoice, cfg.language, { speed, ...pitchRange, signal: ac.signal })) {
        let p = ch.pcm;
        // A cloned voice's pitch: shifted after synthesis, segment by segment, keeping length and formants.
        if (shifter && p.length) p = await shifter.shift(p);
        if (cfg.reduceSilence) p = await trimSilenceOffThread(p, inRate);
        let n = p.length >> 1;
        let segText = ch.text;
        if (state.samples + n > maxSamples) {
          const keep = Math.max(0, maxSamples - state.samples);
          segText = segText.slice(0, Math.floor((segText.length * keep) / Math.max(1, n)));
          p = p.subarray(0, keep * 2);
          n = keep;
          state.truncated = true;
        }
        const start = state.samples / inRate;
        // A space between segments keeps the character stream equal to the spoken text.
        const spoken = state.samples > 0 && segText ? ` ${segText}` : segText;
        if (spoken) state.pending.push(charTimings(spoken, start, n / inRate));
        state.samples += n;
        if (p.length) yield p;
        if (state.truncated) return;
      }
    }

    // Uncompressed formats are converted in-process; codecs go through a streaming ffmpeg encoder.
    const encoded = RAW_FORMATS.includes(cfg.format)
      ? rawEncode(pcm(), { inputRate: inRate, outputRate: cfg.sampleRate, format: cfg.format })
      : encode(pcm(), { inputRate: inRate, outputRate: cfg.sampleRate, format: cfg.format, bitrate: cfg.bitrate });
    async function* chunks(): AsyncGenerator<TtsOutputChunk> {
      try {
        for await (const audio of encoded) {
          const ts = mergeTimestamps(state.pending.splice(0));
          yield ts ? { audio, timestamps: ts } : { audio };
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        ac.abort();
      }
    }
    return {
      chunks: chunks(),
      truncated: () => state.truncated,
      takeTimestamps: () => mergeTimestamps(state.pending.splice(0)),
      seconds: () => state.samples / inRate,
    };
  }

  /** GET /v1/tts-models. */
  listModels(): { models: TtsModelRecord[] } {
    return { models: ttsModelRecords(this.registry) };
  }

  /** Shared voices of one model, filtered, paged by voice id. */
  listVoices(q: VoiceQuery): { voices: Omit<TtsVoice, 'engineVoice' | 'sampleRate' | 'languages'>[]; next_page_cursor: string | null } {
    const one = (k: string, max?: number): string | undefined => {
      let v = q[k as keyof VoiceQuery];
      if (Array.isArray(v)) {
        if (v.length !== 1) throw invalidField(k, 'must be given once', 'invalid_value');
        v = v[0];
      }
      if (v === undefined) return undefined;
      if (typeof v !== 'string') throw invalidField(k, 'must be a string', 'invalid_type');
      if (max !== undefined && v.length > max) throw invalidField(k, `must be at most ${max} characters`, 'invalid_length');
      return v;
    };
    const many = (k: 'use_case' | 'style'): string[] => {
      const raw = q[k];
      if (raw === undefined) return [];
      const list = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter(Boolean);
      if (list.length > 10) throw invalidField(k, 'at most 10 values', 'invalid_length');
      for (const v of list) if (v.length > 40) throw invalidField(k, 'each value must be at most 40 characters', 'invalid_length');
      return list;
    };
    const modelId = one('model', 64);
    if (modelId === undefined || modelId === '') throw invalidField('model', 'is required', 'missing');
    const gender = one('gender');
    if (gender !== undefined && !['male', 'female', 'neutral'].includes(gender)) throw invalidField('gender', 'must be male, female or neutral');
    const age = one('age', 40);
    if (age !== undefined && !(AGES as readonly string[]).includes(age)) throw invalidField('age', `must be one of ${AGES.join(', ')}`);
    const accent = one('accent', 40);
    const language = one('language', 16);
    const useCases = many('use_case');
    const styles = many('style');
    const limitRaw = one('limit');
    let limit = 100;
    if (limitRaw !== undefined) {
      if (!/^\d+$/.test(limitRaw)) throw invalidField('limit', 'must be an integer from 1 to 200', 'invalid_type');
      limit = Number(limitRaw);
      if (limit < 1 || limit > 200) throw invalidField('limit', 'must be from 1 to 200', 'out_of_range');
    }
    const cursor = one('cursor');
    const model = this.registry.resolve(modelId);
    if (!model) throw new ApiError('invalid_request', `No TTS model with id "${modelId}".`, { status: 404 });
    const list = `tts-voices:${modelId}`;
    const pos = this.cursors.positionOf(cursor, list);
    const after = pos?.key[0];
    if (pos !== undefined && typeof after !== 'string') throw invalidCursor();
    const lower = (s: string) => s.toLowerCase();
    const matches = model.voices
      .filter((v) => gender === undefined || v.gender === gender)
      .filter((v) => age === undefined || v.age === age)
      .filter((v) => accent === undefined || lower(v.accent) === lower(accent))
      .filter((v) => language === undefined || (v.languages ?? model.engine.languages.map((l) => l.code)).includes(language))
      .filter((v) => useCases.every((u) => v.use_case.map(lower).includes(lower(u))))
      .filter((v) => styles.every((s) => v.style.map(lower).includes(lower(s))))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .filter((v) => after === undefined || v.id > after);
    const page = matches.slice(0, limit);
    const next = matches.length > limit ? this.cursors.encode({ list, key: [page[page.length - 1]!.id] }) : null;
    return {
      voices: page.map((v) => ({ id: v.id, description: v.description, gender: v.gender, age: v.age, accent: v.accent, use_case: v.use_case, style: v.style })),
      next_page_cursor: next,
    };
  }
}
