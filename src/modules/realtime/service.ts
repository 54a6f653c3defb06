// Real-time transcription sessions: the state machine behind /transcribe-websocket, free of WebSocket types.
//
//   awaiting_config ──config──▶ starting ──(auth, limits, engine)──▶ streaming ──empty frame──▶ finishing ──▶ closed
//          │                       │                                     │                          │
//          └──────────── any error: ONE error frame, then close ─────────┴──────────────────────────┘
//
// The transport hands over every client message (`text`, `binary`) and the socket's close (`gone`); the session
// answers through `SessionIO.send` (JSON frames) and `SessionIO.close` (close 1000, always after a finished or an
// error frame: the legacy web SDK has no close handler, D22). One place owns the timers: request_timeout (no audio
// or keepalive for N seconds while streaming; the clock starts at the config message), the fixed session cap
// (max_duration_reached) and the temporary key's max_session_duration (temp_api_key_session_expired).
import type { Logger } from 'pino';
import type { DiarizationEngine, DiarizationStream } from '../../engines/diarization/interface.js';
import type { MatchThresholds } from '../../engines/diarization/voice-print.js';
import type { EnrolledSpeaker } from '../speakers/service.js';
import { liveSpeakerLabels } from './speaker-names.js';
import {
  EngineBusyError,
  type FinalInfo,
  type Recognizer,
  type SecondPassReport,
  STT_SAMPLE_RATE,
  type StreamingSession,
  type Token,
} from '../../engines/stt/interface.js';
import { LiveSet, type LiveSurface } from '../../lib/live-set.js';
import { ApiError, shuttingDownError } from '../../wire/api-error.js';
import { sttErrorFrame } from '../../wire/stt-frames.js';
import { type AuthContext, type AuthService, sessionDeadline } from '../auth/service.js';
import { requirePermission } from '../auth/permissions.js';
import type { BillingGuard } from '../billing/guard.js';
import type { ConcurrencyLimits } from '../limits/concurrency.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { UsageMeter } from '../usage/service.js';
import { TranslationError } from '../../engines/translate/interface.js';
import { RealtimeTranslationStep } from '../translation/realtime-step.js';
import { isRawFormat, languageOptions, parseRealtimeConfig, type RealtimeConfig } from './config.js';
import { AudioDecodeError, createPcmSource, type PcmSource } from '../../audio/live-pcm.js';
import { TranscriptFormatter } from '../../text/format.js';
import { recognitionContext } from '../../engines/stt/context.js';
import { END_TOKEN, FIN_TOKEN, type ResultFrame, TokenTracker } from './tokens.js';

/** Bytes of engine audio (s16le mono) per millisecond. */
const BYTES_PER_MS = (STT_SAMPLE_RATE / 1000) * 2;
/**
 * A finalization forced by max_non_final_tokens_duration_ms stops the intake until its final tokens are out. It
 * waits for the accurate second pass only while the session is less than this far behind real time; past that the
 * streaming decoder's words become final, so a busy machine costs accuracy, not a live stream falling behind.
 */
const MAX_BEHIND_MS = 1000;

export interface RealtimeOptions {
  /** request_timeout after this long without audio (or a keepalive / control message) while streaming. */
  audioTimeoutMs: number;
  /** Fixed session cap (max_duration_reached). */
  maxDurationMs: number;
  /** Audio between two non-final results, ms (engine default when unset). */
  partialIntervalMs?: number;
  /** Silence that ends an utterance (engine endpoint) when the client asks for nothing shorter. */
  endpointSilenceMs?: number;
  ffmpegPath?: string;
  /** How often a running session re-checks balance and budgets with the cost it accrued (default 5 s). */
  usageCheckIntervalMs?: number;
  /** Speaker labels for sessions with enable_speaker_diarization. */
  diarizer?: DiarizationEngine;
  /** How close a live voice must be to an enrolled speaker's profile to carry its name. */
  speakerMatch?: MatchThresholds;
  /** Format final tokens unless the session's configuration says otherwise (PARLANCE_TEXT_FORMATTING). */
  formatText?: boolean;
}

/** What sessions report for monitoring (the node's metrics). */
export interface RealtimeObserver {
  /** A final token went out this long after its audio arrived (a client streaming in real time), seconds. */
  finalTokenLag(seconds: number): void;
  /** How a finished session's utterances got their final tokens. */
  secondPass(report: SecondPassReport): void;
}

export interface RealtimeDeps {
  auth: AuthService;
  models: ModelCatalog;
  rateLimits: RateLimits;
  billing: BillingGuard;
  /** Concurrent-session caps per organization and project (shared with TTS, across nodes with Redis). */
  concurrency: ConcurrencyLimits;
  /** Meters each session (audio seconds streamed) when it ends. */
  meter?: UsageMeter;
  /** Resolves a session's `speakers` (404 speaker_not_found, 409 speaker_not_ready). */
  speakers?: { forRecognition(projectId: string, ids: readonly string[]): Promise<EnrolledSpeaker[]> };
  log: Logger;
  observe?: RealtimeObserver;
  errorReferenceUrl(): string;
}

export interface SessionIO {
  send(frame: object): void;
  /** Close the connection normally (1000) after the frames sent so far. */
  close(): void;
}

type State = 'awaiting_config' | 'starting' | 'streaming' | 'finishing' | 'closed';

type Incoming = { kind: 'text'; text: string } | { kind: 'binary'; data: Uint8Array };

const CONTROL = /^\s*\{/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class RealtimeService implements LiveSurface {
  private readonly live = new LiveSet<RealtimeSession>();
  private draining = false;

  constructor(
    readonly deps: RealtimeDeps,
    readonly opts: RealtimeOptions,
  ) {}

  /** A new connection: the session waits for its configuration message. */
  open(io: SessionIO, requestId: string, handshakeKey?: string): RealtimeSession {
    const s = new RealtimeSession(this, io, requestId, handshakeKey);
    this.live.add(s);
    if (this.draining) s.fail(shuttingDownError('no new real-time sessions are accepted'));
    return s;
  }

  /** Sessions currently open (any state), for stats and tests. */
  get openSessions(): number {
    return this.live.size;
  }

  /** Graceful shutdown: every live session ends as if its client had sent the end frame (final tokens, then finished). */
  drain(): Promise<void> {
    this.draining = true;
    for (const s of this.live) s.drain();
    return this.live.empty();
  }

  abortAll(): void {
    for (const s of this.live) s.fail(shuttingDownError('the session could not be finished in time'));
  }

  /** @internal */
  forget(s: RealtimeSession): void {
    this.live.delete(s);
  }
}

export class RealtimeSession {
  private state: State = 'awaiting_config';
  private pending: Incoming[] = [];
  private config!: RealtimeConfig;
  private source: PcmSource | undefined;
  private engine: StreamingSession | undefined;
  private tracker!: TokenTracker;
  private translation!: RealtimeTranslationStep;
  private diarization: DiarizationStream | undefined;
  /** Written form of final tokens (capitals, punctuation, digits), carried across the session's utterances. */
  private formatter: TranscriptFormatter | undefined;
  /** The end of the stream is being processed: the finals that come now close the transcript. */
  private endingStream = false;
  /** Speaker of a span of audio, with diarization (for tokens and the translations that follow them). */
  private speakerOf: ((startMs: number, endMs: number) => string) | undefined;
  private release: (() => void) | undefined;
  private readonly abort = new AbortController();
  private control: Promise<void> = Promise.resolve();
  private pumpDone: Promise<void> = Promise.resolve();
  /** Finalizations the server is working on: the client is waiting for us, not idle (request_timeout). */
  private finalizing = 0;
  /** The server began stopping while this session was starting: end it once started. */
  private drainWhenStarted = false;
  private lastActivity = 0;
  /** Some audio came (keepalives keep the stream open only after that). */
  private heardAudio = false;
  /** When the first audio arrived (Date.now()): a client streaming in real time has sent this much audio since. */
  private firstAudioAt: number | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private capTimer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private usage: { ctx: AuthContext; model: string; clientReferenceId: string | null; timer?: NodeJS.Timeout } | undefined;

  constructor(
    private readonly service: RealtimeService,
    private readonly io: SessionIO,
    readonly requestId: string,
    private readonly handshakeKey: string | undefined,
  ) {}

  get backlogBytes(): number {
    return this.source?.backlogBytes ?? 0;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** A text message from the client. */
  text(text: string): void {
    if (this.state === 'closed' || this.state === 'finishing') return;
    if (this.state === 'awaiting_config') return void this.configure(text);
    if (this.state === 'starting') return void this.pending.push({ kind: 'text', text });
    this.handleText(text);
  }

  /** A binary message from the client. */
  binary(data: Uint8Array): void {
    if (this.state === 'closed' || this.state === 'finishing') return;
    if (this.state === 'awaiting_config')
      return this.fail(new ApiError('invalid_request', 'Invalid request: the first message must be the JSON configuration (a text frame), not audio.'));
    if (this.state === 'starting') return void this.pending.push({ kind: 'binary', data });
    this.handleBinary(data);
  }

  /** The server is stopping: finish what the client sent (final tokens, then the completion frame). */
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

  private async configure(text: string): Promise<void> {
    this.state = 'starting';
    this.startedAt = Date.now();
    this.touch();
    this.armIdleTimer();
    const { deps, opts } = this.service;
    try {
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        throw new ApiError('invalid_request', 'Invalid request: the configuration message is not valid JSON.');
      }
      if (!msg || typeof msg !== 'object' || Array.isArray(msg))
        throw new ApiError('invalid_request', 'Invalid request: the configuration message must be a JSON object.');
      const key = (msg as Record<string, unknown>).api_key;
      if (key !== undefined && typeof key !== 'string') throw new ApiError('unauthenticated', 'api_key must be a string.');
      const ctx = await deps.auth.authenticate(key ?? this.handshakeKey, { temporaryUsage: 'transcribe_websocket', consume: true });
      requirePermission(ctx.permissions, 'stt_rt', 'write');
      if (this.closed) return;
      await deps.rateLimits.consume('transcribe_websocket', ctx.organizationId, ctx.projectId);
      const config = parseRealtimeConfig(msg);
      const resolved = deps.models.resolve(config.model, 'real_time');
      const language = languageOptions(config, resolved.model.id, resolved.engine.model.languages, deps.models);
      const enrolled = config.speakers && deps.speakers && opts.speakerMatch ? await deps.speakers.forRecognition(ctx.projectId, config.speakers) : [];
      await deps.billing.assertCanStart(ctx.organizationId, ctx.projectId);
      if (this.closed) return;
      const release = await deps.concurrency.acquire('stt', ctx);
      if (this.closed) return release(); // the client left while the slot was being taken
      this.release = release;
      this.config = config;
      this.usage = { ctx, model: resolved.model.id, clientReferenceId: config.clientReferenceId ?? ctx.temporary?.clientReferenceId ?? null };
      this.armUsageCheck();
      this.armCapTimer(ctx);
      this.translation = new RealtimeTranslationStep(language, deps.models.translation, this.abort.signal, {
        emit: (tokens) => {
          this.tracker.translated(tokens);
          this.flush();
        },
        fail: (err) =>
          this.fail(err instanceof TranslationError ? new ApiError('internal_error', 'Internal error: the translation engine failed.', { cause: err }) : err),
      });
      this.speakerOf = this.startDiarization(config, enrolled);
      if (config.enableTextFormatting ?? opts.formatText ?? false) this.formatter = new TranscriptFormatter({ language: resolved.engine.model.languages[0] });
      this.tracker = new TokenTracker(config.enableNonFinalTokens, this.translation.labels, this.speakerOf, config.maxNonFinalTokensDurationMs);
      const raw = isRawFormat(config.audioFormat) ? { format: config.audioFormat, sampleRate: config.sampleRate!, channels: config.numChannels! } : undefined;
      this.source = createPcmSource(config.audioFormat, raw, { ffmpegPath: opts.ffmpegPath });
      // No abort signal here: the load is shared with every other session of the model.
      const recognizer: Recognizer = await resolved.engine.engine.load(resolved.engine.model.engineModel);
      const endpointSilenceMs = Math.min(opts.endpointSilenceMs ?? 600, config.maxEndpointDelayMs);
      // All recognizers busy: wait at most the audio timeout for one, then refuse rather than queue audio forever.
      // Loading one (a cold start) is the server's delay and does not count.
      const engine = await recognizer
        .stream({
          language: 'en',
          context: recognitionContext(config.context),
          endpointSilenceMs,
          partialIntervalMs: opts.partialIntervalMs,
          signal: this.abort.signal,
          busyWaitMs: opts.audioTimeoutMs,
        })
        .catch((err: unknown) => {
          if (err instanceof EngineBusyError)
            throw new ApiError('limit_exceeded', 'Concurrent real-time transcription streams limit reached for this server: every recognizer is busy.');
          throw err;
        });
      if (this.closed) {
        engine.abort();
        return;
      }
      this.engine = engine;
      engine.on('partial', (t) => this.onPartial(t));
      engine.on('final', (t, info) => this.onFinal(t, info));
      engine.on('error', (err) => this.fail(new ApiError('internal_error', 'Speech recognition failed.', { cause: err })));
      this.state = 'streaming';
      this.pumpDone = this.pump(this.source, engine);
      deps.log.debug({ request_id: this.requestId, model: resolved.model.id, audio_format: config.audioFormat }, 'real-time session started');
      const queued = this.pending;
      this.pending = [];
      if (queued.length) this.touch();
      for (const m of queued) {
        if (this.state !== 'streaming') break;
        if (m.kind === 'text') this.handleText(m.text);
        else this.handleBinary(m.data);
      }
      if (this.drainWhenStarted) this.finish();
    } catch (err) {
      this.fail(err);
    }
  }

  private handleBinary(data: Uint8Array): void {
    this.touch();
    if (data.byteLength === 0) return this.finish();
    this.heardAudio = true;
    this.firstAudioAt ??= Date.now();
    this.source!.write(data);
  }

  private handleText(text: string): void {
    if (CONTROL.test(text)) {
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        return this.fail(new ApiError('invalid_request', 'Invalid request: malformed JSON control message.'));
      }
      const type = msg && typeof msg === 'object' && !Array.isArray(msg) ? (msg as Record<string, unknown>).type : undefined;
      // A keepalive keeps a stream that paused open (the SDK's pause()); before any audio it does not: the first
      // audio is due within the timeout of the configuration, or a socket sending only keepalives would hold its slot.
      if (type === 'keepalive') {
        if (this.heardAudio) this.touch();
        return;
      }
      this.touch();
      if (type === 'finalize') {
        const trailing = (msg as Record<string, unknown>).trailing_silence_ms;
        if (trailing !== undefined && trailing !== null && (typeof trailing !== 'number' || !Number.isFinite(trailing) || trailing < 0))
          return this.fail(new ApiError('invalid_request', 'Invalid request: trailing_silence_ms must be a non-negative number.'));
        return this.clientFinalize();
      }
      return this.fail(
        new ApiError('invalid_request', `Invalid request: unknown control message type ${JSON.stringify(type ?? null)}; expected "finalize" or "keepalive".`),
      );
    }
    this.touch();
    if (text.length === 0) return this.finish();
    const b64 = text.replace(/\s+/g, '');
    if (b64.length % 4 === 1 || !BASE64.test(b64))
      return this.fail(new ApiError('invalid_request', 'Invalid request: text audio message is not valid base64.'));
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length) {
      this.heardAudio = true;
      this.firstAudioAt ??= Date.now();
      this.source!.write(bytes);
    }
  }

  /** Feed the engine from the PCM source, in order; markers resolve once the audio before them was written. */
  private async pump(source: PcmSource, engine: StreamingSession): Promise<void> {
    try {
      for await (const item of source.output) {
        if (this.closed) return;
        if (Buffer.isBuffer(item)) {
          // The diarizer sees audio before the recognizer, so it has clustered a token's audio by the time it is final.
          await this.diarization?.push(item);
          await this.writeBounded(engine, item);
          // The request_timeout clock runs from the audio the engine took in, not from its arrival: a busy server
          // that is still working through a client's audio must not call that client idle.
          this.touch();
        } else item.mark();
      }
    } catch (err) {
      if (this.closed) return;
      if (err instanceof AudioDecodeError) {
        // The client hears what failed in words; the decoder's own message (addresses, paths) is for the log.
        this.service.deps.log.info({ request_id: this.requestId, detail: err.detail }, 'real-time audio could not be decoded');
        this.fail(new ApiError('invalid_request', `Invalid request: ${err.message}`));
      } else this.fail(new ApiError('internal_error', 'Audio processing failed.', { cause: err }));
    }
  }

  /** Speaker labelling for the token tracker when the client asked for diarization. */
  private startDiarization(config: RealtimeConfig, enrolled: EnrolledSpeaker[]): ((startMs: number, endMs: number) => string) | undefined {
    const { diarizer, speakerMatch } = this.service.opts;
    if (!config.enableSpeakerDiarization || !diarizer) return undefined;
    const stream = diarizer.createStream(
      enrolled.length && speakerMatch ? { enrolled: { prints: enrolled.map((e) => e.print), thresholds: speakerMatch } } : {},
    );
    this.diarization = stream;
    return liveSpeakerLabels(
      stream,
      enrolled.map((e) => e.name),
    );
  }

  private onPartial(tokens: Token[]): void {
    if (this.closed) return;
    this.tracker.partial(tokens);
    this.flush();
  }

  /**
   * Hand audio to the engine, finalizing exactly where the oldest non-final token would otherwise stay non-final for
   * more than max_non_final_tokens_duration_ms of audio. No audio goes in while that finalization (second pass
   * included) runs, so the bound holds in audio whatever the machine's load.
   */
  private async writeBounded(engine: StreamingSession, pcm: Buffer): Promise<void> {
    let rest = pcm;
    let forcedAt = -1;
    while (rest.length > 0 && !this.closed) {
      const start = this.tracker.nonFinalStartMs;
      const roomMs = start === undefined || forcedAt === engine.audioMs ? Infinity : start + this.config.maxNonFinalTokensDurationMs - engine.audioMs;
      if (roomMs * BYTES_PER_MS >= rest.length) return engine.write(rest);
      const head = Math.max(0, Math.floor(roomMs) * BYTES_PER_MS);
      if (head > 0) await engine.write(rest.subarray(0, head));
      rest = rest.subarray(head);
      forcedAt = engine.audioMs;
      await this.forcedFinalize(engine);
    }
  }

  private forcedFinalize(engine: StreamingSession): Promise<void> {
    // How far the engine's intake is behind a client sending in real time (negative when it sends faster).
    const behindMs = Date.now() - (this.firstAudioAt ?? Date.now()) - engine.audioMs;
    return this.whileFinalizing(async () => {
      await engine.finalize({ waitMs: Math.max(0, MAX_BEHIND_MS - behindMs) });
      if (this.closed) return;
      this.tracker.finalizedUpTo(engine.audioMs);
      this.flush();
    });
  }

  private onFinal(words: Token[], info: FinalInfo): void {
    if (this.closed) return;
    this.touch(); // the engine was still working on this client's audio
    // Non-final tokens stay raw words; final ones are written out (a formatted token spans the words it replaced).
    const tokens = this.formatter ? this.formatter.format(words, { endsUtterance: info.endpoint, endsStream: this.endingStream }) : words;
    this.tracker.final(tokens);
    // Final tokens the engine closed at a pause are an endpoint, sent once the utterance's translation (if any) is out.
    // A pause just before the end of the stream is one too, even when its final tokens arrive after the end frame: the
    // engine's own close at the end of audio (or at finalize) says endpoint: false.
    const endpoint = this.config.enableEndpointDetection && info.endpoint;
    const speakerOf = this.speakerOf;
    this.translation.final(
      speakerOf ? tokens.map((t) => ({ ...t, speaker: speakerOf(t.start_ms, t.end_ms) })) : tokens,
      endpoint
        ? () => {
            this.tracker.marker(END_TOKEN);
            this.flush();
          }
        : undefined,
    );
    this.flush();
  }

  /** Run a finalization; the request_timeout clock stands still while it runs. */
  private async whileFinalizing(step: () => Promise<void>): Promise<void> {
    this.finalizing++;
    try {
      await step();
    } finally {
      this.finalizing--;
      this.touch();
    }
  }

  /** A client finalization, in turn with the others and the end of stream (each counted while it runs). */
  private finalizeStep(step: () => Promise<void>): void {
    this.enqueue(() => this.whileFinalizing(step));
  }

  private clientFinalize(): void {
    this.finalizeStep(async () => {
      await this.source!.mark();
      if (this.closed) return;
      await this.engine!.finalize();
      // <fin> promises everything before it is final, translations included.
      await this.translation.drained();
      if (this.closed) return;
      this.tracker.finalizedUpTo(this.engine!.audioMs);
      this.tracker.marker(FIN_TOKEN);
      this.flush();
    });
  }

  private finish(): void {
    if (this.state !== 'streaming') return;
    this.state = 'finishing';
    this.clearIdleTimer();
    this.enqueue(async () => {
      this.source!.end();
      await this.pumpDone;
      if (this.closed) return;
      await this.diarization?.flush();
      this.endingStream = true;
      await this.engine!.end();
      await this.translation.drained();
      if (this.closed) return;
      const audioMs = this.engine!.audioMs;
      this.tracker.finalizedUpTo(audioMs);
      if (this.tracker.hasNews()) this.send(this.observed(this.tracker.frame(audioMs)));
      this.send({ ...this.tracker.frame(audioMs), finished: true });
      const secondPass = this.engine!.secondPass;
      if (secondPass) this.service.deps.observe?.secondPass(secondPass);
      this.service.deps.log.info(
        { request_id: this.requestId, audio_ms: audioMs, ms: Date.now() - this.startedAt, ...(secondPass ? { second_pass: secondPass } : {}) },
        'real-time session finished',
      );
      this.teardown();
      this.io.close();
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
    this.send(this.observed(this.tracker.frame(this.engine?.audioMs ?? 0)));
  }

  /** Report the lag of the frame's final tokens behind their audio (for a client streaming in real time). */
  private observed(frame: ResultFrame): ResultFrame {
    const observe = this.service.deps.observe;
    if (observe && this.firstAudioAt !== undefined) {
      const now = Date.now();
      for (const t of frame.tokens) if (t.is_final && t.end_ms !== undefined) observe.finalTokenLag(Math.max(0, now - this.firstAudioAt - t.end_ms) / 1000);
    }
    return frame;
  }

  private send(frame: object): void {
    if (this.state !== 'closed') this.io.send(frame);
  }

  /** One error frame, then close; everything is released. */
  fail(err: unknown): void {
    if (this.closed) return;
    const apiErr = err instanceof ApiError ? err : new ApiError('internal_error', 'Internal server error.', { cause: err });
    if (apiErr.type === 'internal_error') this.service.deps.log.error({ err: apiErr.cause ?? err, request_id: this.requestId }, 'real-time session failed');
    this.io.send(sttErrorFrame(apiErr, this.requestId, this.service.deps.errorReferenceUrl()));
    this.teardown();
    this.io.close();
  }

  /** While streaming, end the session with the 402 frame once the audio so far exhausts the balance or a budget. */
  private armUsageCheck(): void {
    const { deps, opts } = this.service;
    const u = this.usage;
    if (!u || !deps.meter) return;
    const every = opts.usageCheckIntervalMs ?? 5000;
    const check = async () => {
      if (this.closed) return;
      try {
        const pending = await deps.meter!.estimateNano(u.model, { inputAudioMs: this.engine?.audioMs ?? 0 });
        if (pending > 0) await deps.billing.assertCanStart(u.ctx.organizationId, u.ctx.projectId, pending);
      } catch (err) {
        if (err instanceof ApiError && err.status === 402) return this.fail(err);
        deps.log.warn({ err, request_id: this.requestId }, 'real-time usage check failed');
      }
      if (!this.closed) u.timer = setTimeout(() => void check(), every);
    };
    u.timer = setTimeout(() => void check(), every);
  }

  /** One usage record per session, whatever ended it: the audio the engine received. */
  private meterSession(): void {
    const u = this.usage;
    this.usage = undefined;
    if (!u) return;
    clearTimeout(u.timer);
    const meter = this.service.deps.meter;
    const audioMs = this.engine?.audioMs ?? 0;
    if (!meter || audioMs <= 0) return;
    meter
      .meter({
        kind: 'stt_rt',
        actor: u.ctx,
        requestId: this.requestId,
        clientReferenceId: u.clientReferenceId,
        model: u.model,
        startTime: new Date(this.startedAt),
        inputAudioMs: audioMs,
        outputTextTokens: this.tracker?.finalCount ?? 0,
      })
      .catch((err: unknown) => this.service.deps.log.error({ err, request_id: this.requestId }, 'real-time usage not recorded'));
  }

  private teardown(): void {
    this.meterSession();
    this.state = 'closed';
    this.clearIdleTimer();
    if (this.capTimer) clearTimeout(this.capTimer);
    this.abort.abort();
    this.source?.abort();
    this.engine?.abort();
    this.diarization?.close();
    this.release?.();
    this.release = undefined;
    this.pending = [];
    this.service.forget(this);
  }

  private touch(): void {
    this.lastActivity = Date.now();
  }

  private armIdleTimer(): void {
    const timeout = this.service.opts.audioTimeoutMs;
    const check = () => {
      if (this.state !== 'starting' && this.state !== 'streaming') return;
      // Audio that arrived while the recognizer is still being assigned is the server's delay, not the client's.
      if (this.state === 'starting' && this.pending.length) this.touch();
      // Neither is a finalization still being decoded (second passes take a moment on a busy machine).
      if (this.finalizing > 0) this.touch();
      const idle = Date.now() - this.lastActivity;
      if (idle >= timeout)
        return this.fail(new ApiError('request_timeout', `Request timeout: no audio received for ${Math.round(timeout / 100) / 10} seconds.`));
      this.idleTimer = setTimeout(check, timeout - idle);
    };
    this.idleTimer = setTimeout(check, timeout);
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private armCapTimer(ctx: AuthContext): void {
    const { maxDurationMs } = this.service.opts;
    const tempDeadline = sessionDeadline(ctx, new Date(this.startedAt));
    const tempMs = tempDeadline ? tempDeadline.getTime() - this.startedAt : Infinity;
    if (tempMs < maxDurationMs) {
      this.capTimer = setTimeout(
        () =>
          this.fail(
            new ApiError(
              'temp_api_key_session_expired',
              `Session exceeded the temporary API key's max_session_duration_seconds (${ctx.temporary!.maxSessionDurationSeconds}).`,
            ),
          ),
        Math.max(0, tempMs),
      );
    } else {
      this.capTimer = setTimeout(
        () => this.fail(new ApiError('max_duration_reached', `Maximum real-time stream duration reached (${Math.round(maxDurationMs / 1000)} seconds).`)),
        maxDurationMs,
      );
    }
  }
}
