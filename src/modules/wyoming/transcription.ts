// One Wyoming utterance (`transcribe`? `audio-start` `audio-chunk`* `audio-stop`) as a renderer over the live
// transcription core (modules/realtime/session.ts), as the Soniox WebSocket and OpenAI Realtime are: the audio goes to
// a live session while it arrives, each final word comes back at once as a `transcript-chunk` (wyoming asr.py's
// streaming events), and `audio-stop` ends the session, so only the last words are decoded after the client stops.
// Admission (billing, the concurrency slot), metering (as real-time audio) and timeouts are the session's.
//
//   audio-chunk … ─▶ converted to 16 kHz mono s16le ─▶ session.audio
//   final words   ─▶ transcript-start (once), transcript-chunk {text}
//   audio-stop    ─▶ session.end ─▶ finished ─▶ transcript-stop, transcript {text, language}
//   session error ─▶ `error` event at once; the utterance's later chunks are dropped and audio-stop gets no answer
import { createPcmSource, type PcmSource } from '../../audio/live-pcm.js';
import { newRequestId } from '../../lib/ids.js';
import type { ApiError } from '../../wire/api-error.js';
import type { Caller } from '../auth/service.js';
import { parseRealtimeConfig } from '../realtime/config.js';
import { isMark, type LiveSink, type TranscriptUpdate } from '../realtime/live-events.js';
import type { RealtimeService } from '../realtime/service.js';
import type { RealtimeSession } from '../realtime/session.js';

/** Formats one utterance may use: each starts a converter of its own, which chunks of no audio could start without end. */
export const MAX_FORMATS_PER_UTTERANCE = 4;

/** Wyoming audio format: rate (Hz), width (bytes per sample), channels. */
export interface WyomingAudioFormat {
  rate: number;
  width: number;
  channels: number;
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

const RAW_BY_WIDTH: Record<number, string> = { 1: 'pcm_s8', 2: 'pcm_s16le', 3: 'pcm_s24le', 4: 'pcm_s32le' };
const sameFormat = (a: WyomingAudioFormat, b: WyomingAudioFormat) => a.rate === b.rate && a.width === b.width && a.channels === b.channels;

/**
 * One utterance's audio: chunks in any Wyoming format, converted as they arrive (in-process, audio/live-pcm.ts) to
 * 16 kHz mono s16le and handed on in order. Capped at `maxSeconds`.
 */
export class UtteranceAudio {
  private source: PcmSource | undefined;
  private format: WyomingAudioFormat | undefined;
  private formats = 0;
  /** The converters' output, one converter after the other. */
  private drained: Promise<void> = Promise.resolve();
  private inputSeconds = 0;
  private failure: Error | undefined;

  constructor(
    private readonly maxSeconds: number,
    private readonly onPcm: (pcm: Buffer) => void,
  ) {}

  write(format: WyomingAudioFormat, payload: Buffer): void {
    if (this.failure) throw this.failure;
    this.inputSeconds += payload.length / (format.rate * format.width * format.channels);
    if (this.inputSeconds > this.maxSeconds)
      this.fail(new WyomingRequestError('audio_too_long', `The audio is longer than this server's limit of ${this.maxSeconds} s.`));
    // A chunk in a new format (rare: the client changed it mid-stream) ends the converter of the old one.
    if (!this.format || !sameFormat(this.format, format)) {
      if (this.formats >= MAX_FORMATS_PER_UTTERANCE)
        this.fail(
          new WyomingRequestError(
            'invalid_audio_format',
            `The audio format changed more than ${MAX_FORMATS_PER_UTTERANCE - 1} times in one utterance: send audio-stop, then audio-start with the new format.`,
          ),
        );
      this.formats++;
      this.source?.end();
      this.format = format;
      const source = createPcmSource('raw', { format: RAW_BY_WIDTH[format.width]!, sampleRate: format.rate, channels: format.channels });
      this.source = source;
      this.drained = this.drained.then(async () => {
        for await (const item of source.output) if (Buffer.isBuffer(item)) this.onPcm(item);
      });
    }
    if (payload.length) this.source!.write(payload);
  }

  /** Settles once all the audio written was handed on. */
  async finish(): Promise<void> {
    if (this.failure) throw this.failure;
    this.source?.end();
    await this.drained;
  }

  abort(): void {
    this.source?.abort();
    this.drained.catch(() => undefined);
  }

  private fail(err: Error): never {
    this.failure = err;
    this.abort();
    throw err;
  }
}

/** Where an utterance's answers go: the connection's event writer. */
export type SendEvent = (type: string, data?: Record<string, unknown>) => Promise<void>;

/** The service side of a transcription: an utterance of a request's model and language, and the audio format check. */
export interface UtteranceOpener {
  utterance(request: { name?: string; language?: string }, send: SendEvent): WyomingUtterance;
}

/**
 * What an utterance is opened with: the model and language chosen for it, and how it is recognised: as a live session
 * of a real-time model (`live`), or whole at audio-stop by a file recognizer (`file`, which returns the text; it
 * meters the work itself).
 */
export interface UtteranceRequest {
  model: string;
  language: string;
  recognition: { live: Pick<RealtimeService, 'open'> } | { file: (pcm: Buffer[], signal: AbortSignal) => Promise<string> };
}

export class WyomingUtterance implements LiveSink {
  private readonly audio: UtteranceAudio;
  private session: RealtimeSession | undefined;
  /** The answers in order: transcript-start, the chunks, then the end or the error. */
  private sending: Promise<void> = Promise.resolve();
  private started = false;
  private text = '';
  private failure: ApiError | undefined;
  private over!: () => void;
  /** Settles once the session finished or failed. */
  private readonly ended = new Promise<void>((resolve) => (this.over = resolve));

  /** File recognition: the converted audio, kept until audio-stop. */
  private readonly kept: Buffer[] = [];
  private readonly stopped = new AbortController();

  constructor(
    private readonly caller: Caller,
    private readonly request: UtteranceRequest,
    maxSeconds: number,
    private readonly send: SendEvent,
  ) {
    this.audio = new UtteranceAudio(maxSeconds, (pcm) => (this.session ? this.session.audio(pcm) : this.kept.push(pcm)));
  }

  /** Whether the utterance failed and said so (its later chunks are dropped, its audio-stop unanswered). */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** A chunk of the client's audio; the first one with any audio opens the live session. */
  write(format: WyomingAudioFormat, payload: Buffer): void {
    const { recognition } = this.request;
    if (payload.length && !this.session && 'live' in recognition) this.open(recognition.live);
    this.audio.write(format, payload);
  }

  /** audio-stop: the last words, then transcript-stop and the whole transcript (unless the utterance failed). */
  async stop(): Promise<void> {
    if (this.failure) return;
    try {
      await this.audio.finish();
    } catch (err) {
      if (!this.failure) throw err; // else the session failed meanwhile, and said so
    }
    if (this.session) {
      this.session.end();
      await this.ended;
    } else if ('file' in this.request.recognition && this.kept.length) {
      const text = await this.request.recognition.file(this.kept, this.stopped.signal);
      if (text) this.update({ final: [{ text, confidence: 1 }], partial: [], finalAudioMs: 0, totalAudioMs: 0 });
    }
    await this.sending;
    if (this.failure) return;
    this.openTranscript();
    await this.queue('transcript-stop');
    await this.queue('transcript', { text: this.text.trim(), language: this.request.language });
  }

  /** The client went away or began another utterance: the session ends without answers (its audio is metered). */
  abort(): void {
    this.audio.abort();
    this.stopped.abort(new Error('the utterance was left'));
    this.session?.gone();
    this.over();
  }

  update(update: TranscriptUpdate): void {
    const words = update.final.flatMap((item) => (isMark(item) ? [] : [item.text]));
    if (!words.length) return;
    const text = words.join('');
    this.text += text;
    this.openTranscript();
    void this.queue('transcript-chunk', { text: this.text === text ? text.trimStart() : text });
  }

  finished(update: TranscriptUpdate): void {
    this.update(update);
    this.over();
  }

  error(err: ApiError): void {
    this.failure = err;
    this.audio.abort();
    void this.queue('error', { text: err.message, code: err.type });
    this.over();
  }

  private open(live: Pick<RealtimeService, 'open'>): void {
    const config = parseRealtimeConfig({
      model: this.request.model,
      audio_format: 'pcm_s16le',
      sample_rate: 16_000,
      num_channels: 1,
      language_hints: [this.request.language],
      enable_non_final_tokens: false,
    });
    this.session = live.open(this, newRequestId());
    this.session.start({ caller: this.caller, config });
  }

  private openTranscript(): void {
    if (this.started) return;
    this.started = true;
    void this.queue('transcript-start', { language: this.request.language });
  }

  private queue(type: string, data?: Record<string, unknown>): Promise<void> {
    this.sending = this.sending.then(() => this.send(type, data));
    return this.sending;
  }
}

/**
 * A connection's transcription events: `transcribe` (model, language), `audio-start` (format), `audio-chunk`s,
 * `audio-stop`. A refusal throws (the connection answers it with an `error` event); once an utterance failed its later
 * chunks are dropped and its `audio-stop` is not answered.
 */
export class WyomingTranscriber {
  private request: { name?: string; language?: string } = {};
  /** Opened by the first audio-chunk. */
  private utterance: WyomingUtterance | undefined;
  private format: WyomingAudioFormat | undefined;
  /** The utterance failed here (too long, bad format, refused model): chunks until audio-stop are dropped. */
  private failed = false;
  /** An utterance was begun (transcribe, audio-start or a chunk): audio-stop is answered. */
  private begun = false;

  constructor(
    private readonly service: UtteranceOpener,
    private readonly send: SendEvent,
  ) {}

  async handle(event: { type: string; data: Record<string, unknown>; payload?: Buffer }): Promise<void> {
    const d = event.data;
    if (event.type !== 'audio-stop') this.begun = true;
    switch (event.type) {
      case 'transcribe':
        this.reset();
        this.request = { name: str(d.name), language: str(d.language) };
        return;
      case 'audio-start':
        this.reset(this.request);
        try {
          this.format = audioFormatOf(d);
        } catch (err) {
          this.failed = true;
          throw err;
        }
        return;
      case 'audio-chunk': {
        if (this.failed || this.utterance?.failed) return;
        try {
          // A chunk carries its own format; one without falls back to audio-start's.
          const format = d.rate === undefined && this.format ? this.format : audioFormatOf(d);
          this.utterance ??= this.service.utterance(this.request, this.send);
          this.utterance.write(format, event.payload ?? Buffer.alloc(0));
        } catch (err) {
          this.failed = true;
          this.utterance?.abort();
          throw err;
        }
        return;
      }
      case 'audio-stop': {
        const { failed, request, begun } = this;
        if (!begun) return;
        const utterance = failed ? undefined : (this.utterance ?? this.service.utterance(request, this.send));
        this.utterance = undefined;
        this.reset();
        this.begun = false;
        // No chunk at all: an empty transcript, as the live session would give for no audio.
        if (utterance && !utterance.failed) await utterance.stop();
        return;
      }
    }
  }

  /** The client went away: the utterance under way ends without answers. */
  abort(): void {
    this.utterance?.abort();
  }

  private reset(request: { name?: string; language?: string } = {}): void {
    this.utterance?.abort();
    this.utterance = undefined;
    this.request = request;
    this.format = undefined;
    this.failed = false;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
