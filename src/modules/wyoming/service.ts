// What the Wyoming server does, without sockets: the `info` answer, one utterance's transcription and one text's
// synthesis, whole (`synthesize`) or streamed as it is written (`synthesize-start` … `synthesize-stop`). The work itself goes through the native API's engines: the STT model catalog and its recognizers (as
// async transcriptions, metered here), and TtsService.speak (as POST /tts: slot, caps, metering), all for the
// configured project and checked against its balance and budgets first.
import type { Logger } from 'pino';
import { createPcmSource, type PcmSource } from '../../audio/live-pcm.js';
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import { newRequestId } from '../../lib/ids.js';
import { formatTranscript } from '../../text/format.js';
import type { BillingGuard } from '../billing/guard.js';
import { failedToLoad, type ModelCatalog, type ResolvedCatalogModel } from '../models/catalog.js';
import type { TtsConfig } from '../tts/request-config.js';
import type { SpeechCaller, SpeechSink } from '../tts/speak.js';
import type { LiveText, SpeechText } from '../tts/speech-text.js';
import type { TtsService } from '../tts/service.js';
import type { UsageMeter } from '../usage/service.js';

/** 16 kHz mono s16le: what the recognizers take. */
const STT_BYTES_PER_SECOND = 32_000;
/** Formats one utterance may use: each starts a converter of its own, which chunks of no audio could start without end. */
export const MAX_FORMATS_PER_UTTERANCE = 4;

/** The project every Wyoming request is metered to (Wyoming itself carries no credentials). */
export interface WyomingTenant {
  organizationId: string;
  projectId: string;
}

export interface WyomingServiceDeps {
  models: ModelCatalog;
  tts: TtsService;
  billing: BillingGuard;
  meter?: UsageMeter;
  tenant: WyomingTenant;
  version: string;
  /** Where this server is (the `attribution.url` of every artifact in `info`). */
  attributionUrl: string;
  maxAudioSeconds: number;
  formatText: boolean;
  /** Where usage that could not be recorded after a stopped synthesis is logged. */
  log: Pick<Logger, 'error'>;
}

/** A request the client got wrong (unknown model or voice, audio too long, ...): an `error` event, connection kept. */
export class WyomingRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Wyoming audio format: rate (Hz), width (bytes per sample), channels. */
export interface WyomingAudioFormat {
  rate: number;
  width: number;
  channels: number;
}

const RAW_BY_WIDTH: Record<number, string> = { 1: 'pcm_s8', 2: 'pcm_s16le', 3: 'pcm_s24le', 4: 'pcm_s32le' };

/** The audio fields of an audio-start / audio-chunk event, checked. */
export function audioFormatOf(data: Record<string, unknown>): WyomingAudioFormat {
  const int = (k: string, min: number, max: number): number => {
    const v = data[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      throw new WyomingRequestError('invalid_audio_format', `${k} must be an integer from ${min} to ${max}.`);
    return v;
  };
  const rate = int('rate', 1000, 384_000);
  const width = int('width', 1, 4);
  const channels = int('channels', 1, 16);
  return { rate, width, channels };
}

const primary = (language: string) => language.toLowerCase().split(/[-_]/)[0] ?? '';

const sameFormat = (a: WyomingAudioFormat, b: WyomingAudioFormat) => a.rate === b.rate && a.width === b.width && a.channels === b.channels;

/**
 * One utterance's audio: chunks in any Wyoming format, converted as they arrive (in-process, audio/live-pcm.ts) to
 * 16 kHz mono s16le and kept until audio-stop. Capped at `maxSeconds`.
 */
export class UtteranceAudio {
  private source: PcmSource | undefined;
  private format: WyomingAudioFormat | undefined;
  private readonly drains: Promise<void>[] = [];
  private readonly pcm: Buffer[] = [];
  private inputSeconds = 0;
  private failure: Error | undefined;

  constructor(private readonly maxSeconds: number) {}

  write(format: WyomingAudioFormat, payload: Buffer): void {
    if (this.failure) throw this.failure;
    this.inputSeconds += payload.length / (format.rate * format.width * format.channels);
    if (this.inputSeconds > this.maxSeconds) {
      this.failure = new WyomingRequestError('audio_too_long', `The audio is longer than this server's limit of ${this.maxSeconds} s.`);
      this.abort();
      throw this.failure;
    }
    // A chunk in a new format (rare: the client changed it mid-stream) ends the converter of the old one.
    if (!this.format || !sameFormat(this.format, format)) {
      if (this.drains.length >= MAX_FORMATS_PER_UTTERANCE) {
        this.failure = new WyomingRequestError(
          'invalid_audio_format',
          `The audio format changed more than ${MAX_FORMATS_PER_UTTERANCE - 1} times in one utterance: send audio-stop, then audio-start with the new format.`,
        );
        this.abort();
        throw this.failure;
      }
      this.source?.end();
      this.format = format;
      const source = createPcmSource('raw', { format: RAW_BY_WIDTH[format.width]!, sampleRate: format.rate, channels: format.channels });
      this.source = source;
      this.drains.push(
        (async () => {
          for await (const item of source.output) if (Buffer.isBuffer(item)) this.pcm.push(item);
        })(),
      );
    }
    if (payload.length) this.source!.write(payload);
  }

  /** All the converted audio (16 kHz mono s16le). */
  async finish(): Promise<Buffer[]> {
    if (this.failure) throw this.failure;
    this.source?.end();
    await Promise.all(this.drains);
    return this.pcm;
  }

  abort(): void {
    this.source?.abort();
    for (const d of this.drains) d.catch(() => undefined);
  }
}

/** A TTS voice as Wyoming names it: `<model>/<voice>`, unique across models. */
interface NamedVoice {
  name: string;
  model: TtsModel;
  voice: TtsVoice;
  languages: string[];
}

export class WyomingService {
  constructor(private readonly deps: WyomingServiceDeps) {}

  get tenant(): WyomingTenant {
    return this.deps.tenant;
  }

  get maxAudioSeconds(): number {
    return this.deps.maxAudioSeconds;
  }

  /** Async (whole-file) catalog models, aliases left out: id, description, languages. */
  private sttModels(): { id: string; name: string; languages: string[] }[] {
    return this.deps.models
      .list()
      .filter((m) => m.transcription_mode === 'async' && m.aliased_model_id === null)
      .map((m) => ({ id: m.id as string, name: m.name as string, languages: (m.languages as { code: string }[]).map((l) => l.code) }));
  }

  private voices(): NamedVoice[] {
    return this.deps.tts.registry.models().flatMap((model) =>
      model.voices.map((voice) => ({
        name: `${model.id}/${voice.id}`,
        model,
        voice,
        languages: [...(voice.languages ?? model.engine.languages.map((l) => l.code))],
      })),
    );
  }

  /** The `info` event's data (wyoming info.py: asr and tts programs with their models and voices). */
  info(): Record<string, unknown> {
    const artifact = (name: string, description: string) => ({
      name,
      description,
      attribution: { name: 'Parlance', url: this.deps.attributionUrl },
      installed: true,
      version: this.deps.version,
    });
    return {
      asr: [
        {
          ...artifact('parlance', 'Parlance speech-to-text'),
          supports_transcript_streaming: true,
          models: this.sttModels().map((m) => ({ ...artifact(m.id, m.name), languages: m.languages })),
        },
      ],
      tts: [
        {
          ...artifact('parlance', 'Parlance text-to-speech'),
          supports_synthesize_streaming: true,
          voices: this.voices().map((v) => ({
            ...artifact(v.name, `${v.voice.id} (${v.model.name})${v.voice.description ? `: ${v.voice.description}` : ''}`),
            languages: v.languages,
            speakers: null,
          })),
        },
      ],
      handle: [],
      intent: [],
      wake: [],
      mic: [],
      snd: [],
    };
  }

  /** The async catalog model for a `transcribe` request: by name, else the first one speaking the language. */
  private sttModelFor(name: string | undefined, language: string | undefined): { id: string; languages: string[] } {
    const models = this.sttModels();
    if (name) {
      let resolved: ResolvedCatalogModel;
      try {
        resolved = this.deps.models.resolve(name, 'async');
      } catch (err) {
        if (failedToLoad(err)) throw err;
        throw new WyomingRequestError(
          'model_not_available',
          `Speech-to-text model "${name}" is not available. Available: ${models.map((m) => m.id).join(', ')}.`,
        );
      }
      return { id: resolved.model.id, languages: [...resolved.languages] };
    }
    const lang = language ? primary(language) : undefined;
    const pick = (lang && models.find((m) => m.languages.includes(lang))) || models[0];
    if (!pick) throw new WyomingRequestError('model_not_available', 'This server offers no speech-to-text model.');
    return pick;
  }

  /** Who every request is for: the configured project, with no key. */
  private caller(): SpeechCaller {
    return { ...this.deps.tenant, apiKeyId: null, source: 'public_api' };
  }

  /** Whether the project may start billable work (budget); a refusal is an `error` event. */
  async admit(): Promise<void> {
    await this.deps.billing.assertCanStart(this.deps.tenant.organizationId, this.deps.tenant.projectId);
  }

  /** Transcribe one utterance (16 kHz mono s16le) and meter it. */
  async transcribe(pcm: Buffer[], request: { name?: string; language?: string }, signal: AbortSignal): Promise<{ text: string; language: string }> {
    const startedAt = new Date();
    const model = this.sttModelFor(request.name, request.language);
    const resolved = this.deps.models.resolve(model.id, 'async');
    const bytes = pcm.reduce((n, b) => n + b.length, 0);
    const lang = request.language && model.languages.includes(primary(request.language)) ? primary(request.language) : (model.languages[0] ?? 'en');
    if (bytes < 2) return { text: '', language: lang };
    await this.admit();
    const recognizer = await resolved.open({ language: lang, signal });
    let words = await recognizer.transcribe(
      (async function* () {
        yield* pcm;
      })(),
      { signal },
    );
    if (this.deps.formatText) words = formatTranscript(words, { language: lang });
    const text = words
      .map((w) => w.text.trim())
      .filter(Boolean)
      .join(' ');
    await this.deps.meter?.meter({
      kind: 'stt_async',
      actor: this.caller(),
      requestId: newRequestId(),
      clientReferenceId: null,
      model: model.id,
      startTime: startedAt,
      inputAudioMs: Math.round((bytes / STT_BYTES_PER_SECOND) * 1000),
      outputTextTokens: words.length,
    });
    return { text, language: lang };
  }

  /** The voice a `synthesize` asks for: `<model>/<voice>`, a bare voice id, a language, or the default. */
  private voiceFor(voice: Record<string, unknown> | undefined): { v: NamedVoice; language: string } {
    const all = this.voices();
    if (!all.length) throw new WyomingRequestError('voice_not_found', 'This server offers no text-to-speech voice.');
    const name = typeof voice?.name === 'string' && voice.name ? voice.name : undefined;
    const language = typeof voice?.language === 'string' && voice.language ? primary(voice.language) : undefined;
    let v: NamedVoice | undefined;
    if (name) {
      v = all.find((x) => x.name === name) ?? all.find((x) => x.voice.id === name) ?? all.find((x) => x.voice.id.toLowerCase() === name.toLowerCase());
      // wyoming's SynthesizeVoice turns a language-only voice into {name: language}.
      if (!v && all.some((x) => x.languages.includes(primary(name)))) return this.voiceFor({ language: name });
      if (!v) throw new WyomingRequestError('voice_not_found', `Voice "${name}" not found; the info event lists the voices.`);
    } else if (language) {
      v = all.find((x) => x.languages.includes(language));
      if (!v) throw new WyomingRequestError('voice_not_found', `No voice speaks "${language}".`);
    } else v = all[0]!;
    const lang = language && v.languages.includes(language) ? language : v.languages.includes('en') ? 'en' : (v.languages[0] ?? 'en');
    return { v, language: lang };
  }

  /** The TTS configuration for a voice: 16-bit mono PCM at the voice's own rate (no resampling). */
  private ttsConfig(voice: Record<string, unknown> | undefined): TtsConfig {
    const { v, language } = this.voiceFor(voice);
    const resolved = this.deps.tts.resolveConfig({ model: v.model.id, voice: v.voice.id, language, audio_format: 'pcm_s16le', sample_rate: 16000 });
    return { ...resolved, sampleRate: resolved.voice.sampleRate };
  }

  /** One synthesis through TtsService.speak: its slot, the audio cap, the usage metered once. */
  private speak(cfg: TtsConfig, text: SpeechText, startedAt: Date, sink: SpeechSink, signal: AbortSignal): Promise<void> {
    const request = { cfg, text, requestId: newRequestId(), startedAt, log: this.deps.log, label: 'wyoming' };
    return this.deps.tts.speak(request, this.caller(), sink, signal);
  }

  /**
   * Synthesize `text`: 16-bit mono PCM at the voice's own rate, through TtsService.speak. `start` gets the rate with
   * the first audio; `end` follows the last chunk once the work is metered.
   */
  async synthesize(
    text: unknown,
    voice: Record<string, unknown> | undefined,
    out: { start(rate: number): Promise<void>; chunk(pcm: Buffer): Promise<void>; end(): Promise<void> },
    signal: AbortSignal,
  ): Promise<void> {
    const startedAt = new Date();
    const cfg = this.ttsConfig(voice);
    // Home Assistant may send a text with newlines: one line, as the engines read it.
    const checked = this.deps.tts.checkText(typeof text === 'string' ? text.replace(/\s*\n\s*/g, ' ').trim() : text, cfg);
    await this.admit();
    const sink: SpeechSink = { start: () => out.start(cfg.sampleRate), audio: (c) => out.chunk(c.audio), end: () => out.end() };
    await this.speak(cfg, checked, startedAt, sink, signal);
  }

  /**
   * A streamed synthesis (synthesize-start … synthesize-stop): the voice and the budget are checked now; the text is
   * pushed into `text` as it arrives, capped as a TTS WebSocket stream's is (PARLANCE_TTS_MAX_TEXT_CHARS in all), and
   * `speak` runs one synthesis over all of it, sentence by sentence as the text completes them.
   */
  async openStream(voice: Record<string, unknown> | undefined): Promise<WyomingTextStream> {
    const startedAt = new Date();
    const cfg = this.ttsConfig(voice);
    await this.admit();
    const text = this.deps.tts.liveText();
    return {
      rate: cfg.sampleRate,
      maxAudioSeconds: this.deps.tts.opts.maxAudioSeconds,
      text,
      speak: (sink, signal) => this.speak(cfg, text, startedAt, sink, signal),
    };
  }
}

/** A streamed synthesis, opened: push its text into `text` (end() it at synthesize-stop) while `speak` runs. */
export interface WyomingTextStream {
  /** The audio's sample rate (16-bit mono PCM). */
  rate: number;
  /** The cap on its audio (PARLANCE_TTS_MAX_AUDIO_SECONDS). */
  maxAudioSeconds: number;
  text: LiveText;
  /** The synthesis: settles once the text ended and all its audio went into `sink` and was metered. */
  speak(sink: SpeechSink, signal: AbortSignal): Promise<void>;
}
