// What the Wyoming server does, without sockets: the `info` answer, one utterance's transcription and one text's
// synthesis, whole (`synthesize`) or streamed as it is written (`synthesize-start` … `synthesize-stop`). The work
// itself goes through the native API's services: a live transcription session per utterance (transcription.ts, over
// the real-time core: admission, metering) and TtsService.speak (as POST /tts: slot, caps, metering), all for the
// configured project and checked against its balance and budgets first.
import type { Logger } from 'pino';
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import { abortable } from '../../lib/abortable.js';
import { newRequestId } from '../../lib/ids.js';
import { formatTranscript } from '../../text/format.js';
import type { BillingGuard } from '../billing/guard.js';
import { failedToLoad, type ModelCatalog } from '../models/catalog.js';
import type { TtsConfig } from '../tts/request-config.js';
import type { SpeechCaller, SpeechSink } from '../tts/speak.js';
import type { SpeechText } from '../tts/speech-text.js';
import type { TextFormat } from '../tts/ssml-text.js';
import type { TtsService } from '../tts/service.js';
import type { RealtimeService } from '../realtime/service.js';
import type { UsageMeter } from '../usage/service.js';

/** 16 kHz mono s16le: what the recognizers take. */
const STT_BYTES_PER_SECOND = 32_000;
import { sniffFormat, WyomingStreamText } from './stream-text.js';
import { type SendEvent, WyomingRequestError, WyomingUtterance } from './transcription.js';

/** The project every Wyoming request is metered to (Wyoming itself carries no credentials). */
export interface WyomingTenant {
  organizationId: string;
  projectId: string;
}

export interface WyomingServiceDeps {
  models: ModelCatalog;
  tts: TtsService;
  billing: BillingGuard;
  /** The live transcription core: an utterance of a real-time model is one of its sessions. */
  realtime: Pick<RealtimeService, 'open'>;
  /** Meters the utterances decoded whole (a live session meters itself). */
  meter?: UsageMeter;
  formatText: boolean;
  tenant: WyomingTenant;
  version: string;
  /** Where this server is (the `attribution.url` of every artifact in `info`). */
  attributionUrl: string;
  maxAudioSeconds: number;
  /** Where usage that could not be recorded after a stopped synthesis is logged. */
  log: Pick<Logger, 'error'>;
}

const primary = (language: string) => language.toLowerCase().split(/[-_]/)[0] ?? '';

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

  /**
   * The STT models Wyoming offers, aliases left out: the async (whole-file) ones, which a request without a model name
   * gets, then the real-time ones not already listed. Id, description, languages, and whether it is async.
   */
  private sttModels(): { id: string; name: string; languages: string[]; async: boolean }[] {
    const list = this.deps.models.list().filter((m) => m.aliased_model_id === null);
    const of = (m: Record<string, unknown>, async: boolean) => ({
      id: m.id as string,
      name: m.name as string,
      languages: (m.languages as { code: string }[]).map((l) => l.code),
      async,
    });
    const async = list.filter((m) => m.transcription_mode === 'async').map((m) => of(m, true));
    const live = list.filter((m) => m.transcription_mode === 'real_time' && !async.some((a) => a.id === m.id)).map((m) => of(m, false));
    return [...async, ...live];
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

  /**
   * The model of a `transcribe` request and how it is recognised. By name: a model offered in real time streams as a
   * live session (its words as they become final); an async-only one is decoded whole at audio-stop. Without a name:
   * the first async model that speaks the language, decoded whole (the built-in engine's live words are less accurate:
   * npm run bench -- wyoming).
   */
  private sttModelFor(name: string | undefined, language: string | undefined): { id: string; languages: string[]; live: boolean } {
    const models = this.sttModels();
    if (name) {
      for (const mode of ['real_time', 'async'] as const) {
        try {
          const resolved = this.deps.models.resolve(name, mode);
          return { id: resolved.model.id, languages: [...resolved.languages], live: mode === 'real_time' };
        } catch (err) {
          if (failedToLoad(err)) throw err;
        }
      }
      throw new WyomingRequestError(
        'model_not_available',
        `Speech-to-text model "${name}" is not available. Available: ${models.map((m) => m.id).join(', ')}.`,
      );
    }
    const lang = language ? primary(language) : undefined;
    const offered = models.filter((m) => m.async);
    const pick = (lang && offered.find((m) => m.languages.includes(lang))) || offered[0];
    if (!pick) throw new WyomingRequestError('model_not_available', 'This server offers no speech-to-text model.');
    return { ...pick, live: false };
  }

  /** Who every request is for: the configured project, with no key. */
  private caller(): SpeechCaller {
    return { ...this.deps.tenant, apiKeyId: null, source: 'public_api' };
  }

  /** Whether the project may start billable work (budget); a refusal is an `error` event. */
  async admit(): Promise<void> {
    await this.deps.billing.assertCanStart(this.deps.tenant.organizationId, this.deps.tenant.projectId);
  }

  /** A new utterance of `request`'s model and language, its answers written with `send`. */
  utterance(request: { name?: string; language?: string }, send: SendEvent): WyomingUtterance {
    const model = this.sttModelFor(request.name, request.language);
    const lang = request.language && model.languages.includes(primary(request.language)) ? primary(request.language) : (model.languages[0] ?? 'en');
    const recognition = model.live
      ? { live: this.deps.realtime }
      : { file: (pcm: Buffer[], signal: AbortSignal) => this.transcribeWhole(pcm, model.id, lang, signal) };
    return new WyomingUtterance(this.caller(), { model: model.id, language: lang, recognition }, this.deps.maxAudioSeconds, send);
  }

  /** One utterance (16 kHz mono s16le) decoded whole by `modelId`'s file recognizer, metered as async audio. */
  private async transcribeWhole(pcm: Buffer[], modelId: string, lang: string, signal: AbortSignal): Promise<string> {
    const startedAt = new Date();
    const bytes = pcm.reduce((n, b) => n + b.length, 0);
    await this.admit();
    const recognizer = await this.deps.models.resolve(modelId, 'async').open({ language: lang, signal });
    let words = await recognizer.transcribe(
      (async function* () {
        yield* pcm;
      })(),
      { signal },
    );
    if (this.deps.formatText) words = formatTranscript(words, { language: lang });
    await this.deps.meter?.meter({
      kind: 'stt_async',
      actor: this.caller(),
      requestId: newRequestId(),
      clientReferenceId: null,
      model: modelId,
      startTime: startedAt,
      inputAudioMs: Math.round((bytes / STT_BYTES_PER_SECOND) * 1000),
      outputTextTokens: words.length,
    });
    return words
      .map((w) => w.text.trim())
      .filter(Boolean)
      .join(' ');
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
    textFormat?: unknown,
  ): Promise<void> {
    const startedAt = new Date();
    const cfg = this.ttsConfig(voice);
    const ssml = ssmlFormat(text, textFormat);
    // Home Assistant may send a text with newlines: one line, as the engines read it (SSML reads its own whitespace).
    const checked = ssml
      ? this.deps.tts.checkText(text, cfg, 'ssml')
      : this.deps.tts.checkText(typeof text === 'string' ? text.replace(/\s*\n\s*/g, ' ').trim() : text, cfg);
    await this.admit();
    const sink: SpeechSink = { start: () => out.start(cfg.sampleRate), audio: (c) => out.chunk(c.audio), end: () => out.end() };
    await this.speak(cfg, checked, startedAt, sink, signal);
  }

  /**
   * A streamed synthesis (synthesize-start … synthesize-stop): the voice, `text_format` and the budget are checked
   * now; the text is pushed into `text` as it arrives, capped as a TTS WebSocket stream's is (PARLANCE_TTS_MAX_TEXT_CHARS
   * in all, an SSML document with its markup), and `speak` runs one synthesis over all of it once its format is known
   * (stream-text.ts): plain text sentence by sentence as the text completes them, SSML once the document is whole.
   */
  async openStream(voice: Record<string, unknown> | undefined, textFormat?: unknown): Promise<WyomingTextStream> {
    const startedAt = new Date();
    const cfg = this.ttsConfig(voice);
    const format = textFormatOf(textFormat);
    await this.admit();
    const text = new WyomingStreamText(this.deps.tts, cfg, format);
    return {
      rate: cfg.sampleRate,
      maxAudioSeconds: this.deps.tts.opts.maxAudioSeconds,
      text,
      // The slot is taken once the format is known: a stop before that ends the wait.
      speak: async (sink, signal) => this.speak(cfg, await abortable(text.text(), signal), startedAt, sink, signal),
    };
  }
}

/** `text_format` of a `synthesize` or `synthesize-start` (a Parlance extension of the event's data), if given. */
function textFormatOf(textFormat: unknown): TextFormat | undefined {
  if (textFormat === undefined || textFormat === null) return undefined;
  if (textFormat === 'text' || textFormat === 'ssml') return textFormat;
  throw new WyomingRequestError('invalid_request', 'text_format must be "text" or "ssml".');
}

/**
 * Whether a `synthesize` is SSML: `text_format` says so, or, without one, the text is a <speak> document (as Home
 * Assistant's SSML-aware integrations send it).
 */
function ssmlFormat(text: unknown, textFormat: unknown): boolean {
  const format = textFormatOf(textFormat);
  if (format) return format === 'ssml';
  return typeof text === 'string' && sniffFormat(text) === 'ssml';
}

/** A streamed synthesis, opened: push its text into `text` (end() it at synthesize-stop) while `speak` runs. */
export interface WyomingTextStream {
  /** The audio's sample rate (16-bit mono PCM). */
  rate: number;
  /** The cap on its audio (PARLANCE_TTS_MAX_AUDIO_SECONDS). */
  maxAudioSeconds: number;
  text: Pick<WyomingStreamText, 'push' | 'end'>;
  /** The synthesis: settles once the text ended and all its audio went into `sink` and was metered. */
  speak(sink: SpeechSink, signal: AbortSignal): Promise<void>;
}
