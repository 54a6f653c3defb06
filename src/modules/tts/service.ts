// Text-to-speech rules behind POST /tts, /v1/audio/speech, /tts-websocket and Wyoming: admission (one Admission
// with the TTS rules), request resolution (request-config.ts, cloned voices through the voices module), the text
// (speech-text.ts), one synthesis with its slot, caps and metering (speak.ts), and the model and voice listings.
// No HTTP or WebSocket types here.
import type { TtsRegistry } from '../../engines/tts/registry.js';
import type { CursorCodec } from '../../lib/cursor.js';
import type { WorkGate } from '../../lib/work-gate.js';
import { ApiError } from '../../wire/api-error.js';
import type { AuthContext, AuthService } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import { Admission } from '../limits/admission.js';
import type { ConcurrencyLimits } from '../limits/concurrency.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { UsageMeter } from '../usage/service.js';
import { ttsModelRecords, type TtsModelRecord } from './model-records.js';
import { checkTtsText, checkVoiceLanguage, type ClonedVoiceResolver, resolveTtsConfig, type TtsConfig, type TtsRequestFields } from './request-config.js';
import { speak, type SpeechCaller, type SpeechRequest, type SpeechSink } from './speak.js';
import { LiveText, type SpeechText, wholeText } from './speech-text.js';
import { checkSsmlText, liveSsmlText, SSML_MARKUP_FACTOR, ssmlText, type TextFormat } from './ssml-text.js';
import { listVoices, type VoiceList, type VoiceQuery } from './voice-list.js';

export interface TtsServiceOptions {
  maxTextChars: number;
  maxAudioSeconds: number;
  /** Meters each finished request or stream (characters in, generated seconds out). */
  meter?: UsageMeter;
  /** The node's synthesizer processes, and how many requests and streams may share them before new ones get 429. */
  synthesis?: { gate: WorkGate; maxActive: number; onRefused?: () => void };
}

export class TtsService {
  private clonedVoices: ClonedVoiceResolver | undefined;
  /** Authentication, permission, rate limit, billing and the concurrency slot of every TTS request and stream. */
  readonly admission: Admission;

  constructor(
    readonly registry: TtsRegistry,
    auth: AuthService,
    rateLimits: RateLimits,
    billing: BillingGuard,
    private readonly cursors: CursorCodec,
    concurrency: ConcurrencyLimits,
    readonly opts: TtsServiceOptions,
  ) {
    const synthesis = opts.synthesis;
    this.admission = new Admission(
      { auth, rateLimits, billing, concurrency },
      {
        temporaryUsage: 'tts_rt',
        permission: 'tts_rt',
        rate: 'tts',
        slot: 'tts',
        node: synthesis && {
          maxActive: synthesis.maxActive,
          refusal: (active) => {
            const seconds = synthesis.gate.retryAfterSeconds();
            return new ApiError(
              'limit_exceeded',
              `This server is saturated with speech synthesis (${active} requests and streams in progress); retry in ${seconds} s.`,
              {
                headers: { 'retry-after': String(seconds) },
              },
            );
          },
          onRefused: synthesis.onRefused,
        },
      },
    );
  }

  /** Authenticate a request or stream start (API key or tts_rt temporary key), then admit it. */
  authorizeStart(key: unknown): Promise<AuthContext> {
    return this.admission.authorize(key);
  }

  /** The checks after authentication: permission, rate limit, billing. */
  admit(auth: AuthContext): Promise<AuthContext> {
    return this.admission.admit(auth);
  }

  /** HTTP requests and WebSocket streams in progress on this node. */
  get activeCount(): number {
    return this.admission.activeCount;
  }

  /** The voices module plugs in here: a uuid `voice` that is not a built-in name is looked up through it. */
  setClonedVoiceResolver(resolver: ClonedVoiceResolver): void {
    this.clonedVoices = resolver;
  }

  /**
   * Resolve a generation request (its fields checked by schema: parseTtsBody, parseTtsStart in request-config.ts) with
   * its defaults. Throws before any audio.
   */
  resolveConfig(fields: TtsRequestFields, allowCloned = false): TtsConfig {
    return resolveTtsConfig(this.registry, fields, allowCloned);
  }

  /** resolveConfig, then a cloned voice (a uuid) resolved within the caller's project. */
  async resolveConfigFor(auth: Pick<AuthContext, 'projectId'>, fields: TtsRequestFields): Promise<TtsConfig> {
    const cfg = this.resolveConfig(fields, true);
    if (!cfg.cloned) return cfg;
    const id = cfg.cloned.voiceId;
    if (!this.clonedVoices) throw new ApiError('voice_not_found', `Voice "${id}" not found.`);
    const { voice, style } = await this.clonedVoices(auth.projectId, id, cfg.model);
    checkVoiceLanguage(cfg.model, voice, cfg.language, cfg.requestedModel, id);
    return { ...cfg, voice: cfg.model.voiceIn?.(voice, cfg.language) ?? voice, cloned: style };
  }

  /** Validate the whole text of a request (for the resolved voice: festival's Hindi voice reads no Latin), plain or SSML. */
  checkText(text: unknown, cfg?: TtsConfig, format: TextFormat = 'text'): SpeechText {
    if (format === 'ssml') return ssmlText(checkSsmlText(text, this.opts.maxTextChars, cfg));
    return wholeText(checkTtsText(text, this.opts.maxTextChars, cfg));
  }

  /** The text of a stream, capped at the server's characters per request as it arrives (an SSML document: with its markup). */
  liveText(format: TextFormat = 'text'): LiveText {
    return new LiveText(this.opts.maxTextChars * (format === 'ssml' ? SSML_MARKUP_FACTOR : 1));
  }

  /** What a stream speaks: its text as it arrives, or (SSML) the document its whole text makes, checked once it ends. */
  streamText(live: LiveText, cfg: TtsConfig, format: TextFormat = 'text'): SpeechText {
    return format === 'ssml' ? liveSsmlText(live, this.opts.maxTextChars, cfg) : live;
  }

  /**
   * One synthesis for any surface: a concurrency slot (429 when full), the pipeline with its caps, the audio into
   * `sink`, the usage metered once (speak.ts). Stopped when `signal` aborts.
   */
  speak(request: SpeechRequest, caller: SpeechCaller, sink: SpeechSink, signal?: AbortSignal): Promise<void> {
    return speak({ admission: this.admission, meter: this.opts.meter, maxAudioSeconds: this.opts.maxAudioSeconds }, request, caller, sink, signal);
  }

  /** GET /v1/tts-models. */
  listModels(): { models: TtsModelRecord[] } {
    return { models: ttsModelRecords(this.registry) };
  }

  /** GET /v1/tts-voices: shared voices of one model, filtered, paged by voice id. */
  listVoices(q: VoiceQuery): VoiceList {
    return listVoices(this.registry, this.cursors, q);
  }
}
