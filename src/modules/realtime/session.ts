// One live transcription session, the protocol-neutral core behind /transcribe-websocket and OpenAI Realtime: typed
// inputs in (start, audio, finalize, keepalive, end), typed events out (live-events.ts), no wire format.
//
//   awaiting_config ──start──▶ starting ──(admission, engine)──▶ streaming ──end of stream──▶ finishing ──▶ closed
//          │                      │                                  │                            │
//          └──────────── any error: ONE `error` event, then nothing ─┴────────────────────────────┘
//
// A protocol renderer (soniox-socket.ts, modules/openai/realtime-session.ts) parses its client's messages into the
// inputs and renders the events (`LiveSink`). Admission, limits, usage, metering and timeouts are all here. Its
// parts: the timers (session-clock.ts), the audio intake (audio-intake.ts), usage (session-usage.ts), the recognizer
// stream (recognizer-stream.ts), the transcript updates (tokens.ts) and the translation step.
import { createPcmSource, type PcmSource } from '../../audio/live-pcm.js';
import type { DiarizationStream } from '../../engines/diarization/interface.js';
import type { FinalInfo, StreamingSession, Token } from '../../engines/stt/interface.js';
import { TranslationError } from '../../engines/translate/interface.js';
import { TranscriptFormatter } from '../../text/format.js';
import { applyWordControls, hasWordControls } from '../../text/word-controls.js';
import { ApiError, shuttingDownError } from '../../wire/api-error.js';
import { RealtimeTranslationStep } from '../translation/realtime-step.js';
import { AudioIntake } from './audio-intake.js';
import { isRawInputFormat, languageOptions, type RealtimeConfig } from './config.js';
import { isMark, type LiveSink, type LiveStart, type TranscriptUpdate } from './live-events.js';
import { openRecognizerStream } from './recognizer-stream.js';
import { SessionClock } from './session-clock.js';
import type { SessionHost } from './session-host.js';
import { SessionUsage } from './session-usage.js';
import { liveDiarization } from './speaker-names.js';
import { TokenTracker } from './tokens.js';
import { UtteranceLanguage } from './utterance-language.js';

type State = 'awaiting_config' | 'starting' | 'streaming' | 'finishing' | 'closed';

/** An input that came while the session was starting, handled once it streams. */
type Input = { type: 'audio'; data: Uint8Array } | { type: 'finalize' } | { type: 'keepalive' } | { type: 'end' };

export class RealtimeSession {
  private state: State = 'awaiting_config';
  private pending: Input[] = [];
  private config!: RealtimeConfig;
  private source: PcmSource | undefined;
  private engine: StreamingSession | undefined;
  private intake: AudioIntake | undefined;
  private tracker!: TokenTracker;
  private translation!: RealtimeTranslationStep;
  private diarization: DiarizationStream | undefined;
  /** Written form of final tokens (capitals, punctuation, digits), carried across the session's utterances. */
  private formatter: TranscriptFormatter | undefined;
  /** The end of the stream is being processed: the finals that come now close the transcript. */
  private endingStream = false;
  /** Speaker of a span of audio, with diarization (for tokens and the translations that follow them). */
  private speakerOf: ((startMs: number, endMs: number) => string) | undefined;
  /** enable_language_identification with a language-id model: each closed utterance's language. */
  private utteranceLanguage: UtteranceLanguage | undefined;
  /** Final utterances waiting for their language go out in order; finalize and end of stream wait for them. */
  private finals: Promise<void> = Promise.resolve();
  private release: (() => void) | undefined;
  private readonly abort = new AbortController();
  private control: Promise<void> = Promise.resolve();
  /** The server began stopping while this session was starting: end it once started. */
  private drainWhenStarted = false;
  private readonly clock: SessionClock;
  private startedAt = 0;
  private usage: SessionUsage | undefined;

  constructor(
    private readonly service: SessionHost<RealtimeSession>,
    private readonly sink: LiveSink,
    readonly requestId: string,
  ) {
    this.clock = new SessionClock(service.opts, {
      running: () => (this.state === 'starting' || this.state === 'streaming' ? this.state : false),
      queued: () => this.pending.length,
      fail: (err) => this.fail(err),
    });
  }

  get backlogBytes(): number {
    return this.source?.backlogBytes ?? 0;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** Whether the session still takes the client's inputs (not ending, not closed). */
  get accepting(): boolean {
    return this.state !== 'closed' && this.state !== 'finishing';
  }

  /** Whether `start` was called. */
  get started(): boolean {
    return this.state !== 'awaiting_config';
  }

  /** The session's configuration: admission, then the engine; inputs that come meanwhile wait for it. */
  start(request: LiveStart): void {
    if (this.state !== 'awaiting_config') return;
    void this.configure(request);
  }

  /** Audio in the configured format (never empty: the end of the stream is `end`). */
  audio(data: Uint8Array): void {
    this.input({ type: 'audio', data });
  }

  /** Make every word so far final; a `finalized` mark follows them. */
  finalize(): void {
    this.input({ type: 'finalize' });
  }

  /** The client is still there (while it sends no audio). */
  keepalive(): void {
    this.input({ type: 'keepalive' });
  }

  /** The end of the client's audio: final words, then `finished`. */
  end(): void {
    this.input({ type: 'end' });
  }

  private input(input: Input): void {
    if (!this.accepting) return;
    if (this.state === 'awaiting_config')
      return this.fail(new ApiError('invalid_request', 'Invalid request: the configuration must come before anything else.'));
    if (this.state === 'starting') return void this.pending.push(input);
    this.handle(input);
  }

  /** The server is stopping: finish what the client sent (final words, then `finished`). */
  drain(): void {
    if (this.state === 'awaiting_config') return this.fail(shuttingDownError('no new real-time sessions are accepted'));
    if (this.state === 'starting') this.drainWhenStarted = true;
    else if (this.state === 'streaming') this.finish();
  }

  /** The client went away: free everything at once, send nothing. */
  gone(): void {
    if (this.state === 'closed') return;
    this.teardown();
  }

  private async configure(request: LiveStart): Promise<void> {
    this.state = 'starting';
    this.startedAt = Date.now();
    this.clock.touch();
    this.clock.armIdleTimer();
    const { deps, opts, admission } = this.service;
    try {
      const ctx = await admission.authenticate(request.apiKey);
      if (this.closed) return;
      await admission.permit(ctx);
      if (request.config instanceof ApiError) throw request.config;
      const config = request.config;
      const resolved = deps.models.resolve(config.model, 'real_time');
      const language = languageOptions(config, resolved.model.id, resolved.languages, deps.models);
      const enrolled = config.speakers && deps.speakers && opts.speakerMatch ? await deps.speakers.forRecognition(ctx.projectId, config.speakers) : [];
      await admission.assertCanStart(ctx);
      if (this.closed) return;
      const release = await admission.acquire(ctx);
      if (this.closed) return release(); // the client left while the slot was being taken
      this.release = release;
      this.config = config;
      const clientReferenceId = config.clientReferenceId ?? ctx.temporary?.clientReferenceId ?? null;
      this.usage = new SessionUsage(deps, { ctx, model: resolved.model.id, clientReferenceId }, this.requestId, this.startedAt, {
        closed: () => this.closed,
        audioMs: () => this.engine?.audioMs ?? 0,
        fail: (err) => this.fail(err),
      });
      this.usage.arm(opts.usageCheckIntervalMs);
      this.clock.armCapTimer(ctx, this.startedAt);
      this.translation = new RealtimeTranslationStep(language, deps.models.translation, this.abort.signal, {
        emit: (tokens) => {
          this.tracker.translated(tokens);
          this.flush();
        },
        fail: (err) =>
          this.fail(err instanceof TranslationError ? new ApiError('internal_error', 'Internal error: the translation engine failed.', { cause: err }) : err),
      });
      const { diarizer, speakerMatch } = opts;
      const diarization = config.enableSpeakerDiarization && diarizer ? liveDiarization(diarizer, enrolled, speakerMatch, config.speakerCount) : undefined;
      this.diarization = diarization?.stream;
      this.speakerOf = diarization?.speakerOf;
      const lid = config.enableLanguageIdentification ? opts.languageId : undefined;
      // Loaded now (a first load checks the model in a child process), not when the first utterance ends.
      void lid?.ready().catch(() => {}); // a failure is logged by the utterances that need the model
      if (lid)
        this.utteranceLanguage = new UtteranceLanguage({
          lid,
          fallback: language.language,
          waitMs: opts.languageIdWaitMs,
          signal: this.abort.signal,
          log: { logger: deps.log, requestId: this.requestId },
        });
      if (config.enableTextFormatting ?? opts.formatText) this.formatter = new TranscriptFormatter({ language: resolved.languages[0] });
      this.tracker = new TokenTracker(config.enableNonFinalTokens, this.translation.labels, this.speakerOf, config.maxNonFinalTokensDurationMs);
      const raw = isRawInputFormat(config.audioFormat)
        ? { format: config.audioFormat, sampleRate: config.sampleRate!, channels: config.numChannels! }
        : undefined;
      this.source = createPcmSource(config.audioFormat, raw, { ffmpegPath: opts.ffmpegPath });
      const engine = await openRecognizerStream(resolved, language.language, config, opts, this.abort.signal);
      if (this.closed) {
        engine.abort();
        return;
      }
      this.engine = engine;
      engine.on('partial', (t) => this.onPartial(t));
      engine.on('final', (t, info) => this.onFinal(t, info));
      engine.on('error', (err) => this.fail(new ApiError('internal_error', 'Speech recognition failed.', { cause: err })));
      this.state = 'streaming';
      this.intake = new AudioIntake(
        this.source,
        engine,
        this.diarization,
        config.maxNonFinalTokensDurationMs,
        {
          closed: () => this.closed,
          touch: () => this.clock.touch(),
          fail: (err) => this.fail(err),
          nonFinalStartMs: () => this.tracker.nonFinalStartMs,
          whileFinalizing: (step) => this.clock.whileFinalizing(step),
          finalizedUpTo: async (audioMs) => {
            await this.finals;
            this.tracker.finalizedUpTo(audioMs);
            this.flush();
          },
          audio: this.utteranceLanguage ? (pcm) => this.utteranceLanguage!.push(pcm) : undefined,
        },
        { logger: deps.log, requestId: this.requestId },
      );
      deps.log.debug({ request_id: this.requestId, model: resolved.model.id, audio_format: config.audioFormat }, 'real-time session started');
      const queued = this.pending;
      this.pending = [];
      if (queued.length) this.clock.touch();
      for (const input of queued) {
        if (this.state !== 'streaming') break;
        this.handle(input);
      }
      if (this.drainWhenStarted) this.finish();
    } catch (err) {
      this.fail(err);
    }
  }

  /** A client input while streaming. */
  private handle(msg: Input): void {
    // A keepalive keeps a stream that paused open (the SDK's pause()); before any audio it does not: the first
    // audio is due within the timeout of the configuration, or a socket sending only keepalives would hold its slot.
    if (msg.type === 'keepalive') {
      if (this.intake!.heardAudio) this.clock.touch();
      return;
    }
    this.clock.touch();
    if (msg.type === 'finalize') return this.clientFinalize();
    if (msg.type === 'end') return this.finish();
    this.intake!.write(msg.data);
  }

  private onPartial(tokens: Token[]): void {
    if (this.closed) return;
    this.tracker.partial(this.controlled ? applyWordControls(tokens, this.config.wordControls, { partial: true }) : tokens);
    this.flush();
  }

  /** The session asked for redaction or the profanity filter. */
  private get controlled(): boolean {
    return hasWordControls(this.config.wordControls);
  }

  private onFinal(words: Token[], info: FinalInfo): void {
    if (this.closed) return;
    this.clock.touch(); // the engine was still working on this client's audio
    // Non-final tokens stay raw words; final ones are written out (a formatted token spans the words it replaced).
    const formatted = this.formatter ? this.formatter.format(words, { endsUtterance: info.endpoint, endsStream: this.endingStream }) : words;
    // Redaction and the profanity filter before the words go anywhere (the client, translation, metering counts).
    const tokens = this.controlled ? applyWordControls(formatted, this.config.wordControls) : formatted;
    // Final tokens the engine closed at a pause are an endpoint, sent once the utterance's translation (if any) is out.
    // A pause just before the end of the stream is one too, even when its final tokens arrive after the end frame: the
    // engine's own close at the end of audio (or at finalize) says endpoint: false.
    const endpoint = this.config.enableEndpointDetection && info.endpoint;
    const identify = this.utteranceLanguage;
    if (!identify) return this.emitFinal(tokens, endpoint);
    // The utterance's audio is cut out now; its finals wait (at most languageIdWaitMs) for its language, in order.
    const language = words.length ? identify.identify(words[0]!.start_ms, words.at(-1)!.end_ms) : undefined;
    const openFrom = words.at(-1)?.end_ms;
    this.finals = this.finals.then(async () => {
      const heard = await language;
      if (!this.closed) this.emitFinal(tokens, endpoint, heard, openFrom);
    });
  }

  /** Final tokens of one utterance (labelled with `language` when it was identified), then its translation and `<end>`. */
  private emitFinal(tokens: Token[], endpoint: boolean, language?: string, openFrom?: number): void {
    this.tracker.final(tokens, language === undefined ? undefined : this.translation.labelsFor(language), openFrom);
    const speakerOf = this.speakerOf;
    this.translation.final(
      speakerOf ? tokens.map((t) => ({ ...t, speaker: speakerOf(t.start_ms, t.end_ms) })) : tokens,
      endpoint
        ? () => {
            this.tracker.mark('endpoint');
            this.flush();
          }
        : undefined,
      language,
    );
    this.flush();
  }

  /** A client finalization, in turn with the others and the end of stream (counted while it runs). */
  private clientFinalize(): void {
    this.enqueue(() =>
      this.clock.whileFinalizing(async () => {
        await this.source!.mark();
        if (this.closed) return;
        await this.engine!.finalize();
        // The finalized mark promises everything before it is final, translations included.
        await this.finals;
        await this.translation.drained();
        if (this.closed) return;
        this.tracker.finalizedUpTo(this.engine!.audioMs);
        this.tracker.mark('finalized');
        this.flush();
      }),
    );
  }

  private finish(): void {
    if (this.state !== 'streaming') return;
    this.state = 'finishing';
    this.clock.clearIdleTimer();
    this.enqueue(async () => {
      this.source!.end();
      await this.intake!.done;
      if (this.closed) return;
      await this.diarization?.flush();
      this.endingStream = true;
      await this.engine!.end();
      await this.finals;
      await this.translation.drained();
      if (this.closed) return;
      const audioMs = this.engine!.audioMs;
      this.tracker.finalizedUpTo(audioMs);
      if (this.tracker.hasNews()) this.sink.update(this.observed(this.tracker.update(audioMs)));
      const last = this.tracker.update(audioMs);
      const secondPass = this.engine!.secondPass;
      if (secondPass) this.service.deps.observe?.secondPass(secondPass);
      this.service.deps.log.info(
        { request_id: this.requestId, audio_ms: audioMs, ms: Date.now() - this.startedAt, ...(secondPass ? { second_pass: secondPass } : {}) },
        'real-time session finished',
      );
      this.teardown();
      this.sink.finished(last);
    });
  }

  /** Serialise finalizations and the end of stream. */
  private enqueue(step: () => Promise<void>): void {
    this.control = this.control
      .then(async () => {
        if (!this.closed) await step();
      })
      .catch((err: unknown) => this.fail(err));
  }

  private flush(): void {
    if (this.closed || !this.tracker.hasNews()) return;
    this.sink.update(this.observed(this.tracker.update(this.engine?.audioMs ?? 0)));
  }

  /** Report the lag of the update's final words behind their audio (for a client streaming in real time). */
  private observed(update: TranscriptUpdate): TranscriptUpdate {
    const observe = this.service.deps.observe;
    const firstAudioAt = this.intake?.firstAudioAt;
    if (observe && firstAudioAt !== undefined) {
      const now = Date.now();
      for (const item of update.final)
        if (!isMark(item) && item.end_ms !== undefined) observe.finalTokenLag(Math.max(0, now - firstAudioAt - item.end_ms) / 1000);
    }
    return update;
  }

  /** One `error` event; everything is released. */
  fail(err: unknown): void {
    if (this.closed) return;
    const apiErr = err instanceof ApiError ? err : new ApiError('internal_error', 'Internal server error.', { cause: err });
    if (apiErr.type === 'internal_error') this.service.deps.log.error({ err: apiErr.cause ?? err, request_id: this.requestId }, 'real-time session failed');
    this.teardown();
    this.sink.error(apiErr);
  }

  private teardown(): void {
    // One usage record per session, whatever ended it: the audio the engine received.
    this.usage?.record(this.engine?.audioMs ?? 0, this.tracker?.finalCount ?? 0);
    this.state = 'closed';
    this.clock.stop();
    this.abort.abort();
    this.source?.abort();
    this.engine?.abort();
    this.diarization?.close();
    this.release?.();
    this.release = undefined;
    this.pending = [];
    this.service.forget(this);
  }
}
