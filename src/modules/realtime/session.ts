// One live transcription session, the protocol-neutral core behind /transcribe-websocket, OpenAI Realtime and
// Wyoming's transcription: typed inputs in (start, audio, finalize, keepalive, end), typed events out (live-events.ts).
//
//   awaiting_config ──start──▶ starting ──(admission, engine)──▶ streaming ──end of stream──▶ finishing ──▶ closed
//          │                      │                                  │                            │
//          └──────────── any error: ONE `error` event, then nothing ─┴────────────────────────────┘
//
// A protocol renderer (soniox-socket.ts, modules/openai/realtime-session.ts, modules/wyoming/transcription.ts)
// parses its client's messages into the inputs and renders the events (`LiveSink`). Admission, limits, usage,
// metering and timeouts are all here. Its parts: the timers (session-clock.ts), the audio intake (audio-intake.ts),
// usage (session-usage.ts) and the lanes.
//
// The recognition of the audio is a lane (lane.ts): its engine stream, diarizer, text formatting, language
// identification, translation and token tracker. A session has one lane, of the mix of the audio's channels; a
// multichannel session (`enable_multichannel`) one per channel, each fed that channel alone (audio/live-channels.ts):
// its updates are the lanes' merged (tokens.ts mergeUpdates), each word carrying its channel. Raw audio's lanes open
// at the start (num_channels); a container's first lane at the start and the others when its header says how many.
import { createChannelSource, type ChannelPcmSource } from '../../audio/live-channels.js';
import { createPcmSource, type PcmSource } from '../../audio/live-pcm.js';
import type { SecondPassReport } from '../../engines/stt/interface.js';
import { ApiError, shuttingDownError } from '../../wire/api-error.js';
import type { AuthContext, Caller } from '../auth/service.js';
import { AudioIntake } from './audio-intake.js';
import { isRawInputFormat, languageOptions, MAX_CHANNELS, type RealtimeConfig } from './config.js';
import { Lane, type LaneSession, type LaneSpec } from './lane.js';
import { isMark, type LiveSink, type LiveStart, type TranscriptUpdate } from './live-events.js';
import { SessionClock } from './session-clock.js';
import type { SessionHost } from './session-host.js';
import { SessionUsage } from './session-usage.js';
import { mergeUpdates } from './tokens.js';

type State = 'awaiting_config' | 'starting' | 'streaming' | 'finishing' | 'closed';

/** An input that came while the session was starting, handled once it streams. */
type Input = { type: 'audio'; data: Uint8Array } | { type: 'finalize' } | { type: 'keepalive' } | { type: 'end' };

export class RealtimeSession {
  private state: State = 'awaiting_config';
  private pending: Input[] = [];
  private config!: RealtimeConfig;
  private source: PcmSource | ChannelPcmSource | undefined;
  private intake: AudioIntake | undefined;
  /** One lane, or one per channel in a multichannel session (index = channel). */
  private lanes: Lane[] = [];
  private laneSpec: LaneSpec | undefined;
  /** The end of the stream is being processed: the finals that come now close the transcript. */
  private endingStream = false;
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

  /** Audio each channel's engine has taken in (the same for every lane: they are fed alike). */
  private get audioMs(): number {
    return this.lanes[0]?.engine.audioMs ?? 0;
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
      const ctx: Caller = request.caller ?? (await this.keyHolder(request.apiKey));
      if (this.closed) return;
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
        // Each channel is audio recognised: a multichannel session counts its audio once per channel.
        audioMs: () => this.meteredAudioMs(),
        fail: (err) => this.fail(err),
      });
      this.usage.arm(opts.usageCheckIntervalMs);
      this.clock.armCapTimer(ctx, this.startedAt);
      this.laneSpec = { resolved, language, enrolled };
      // Loaded now (a first load checks the model in a child process), not when the first utterance ends.
      if (config.enableLanguageIdentification) void opts.languageId?.ready().catch(() => {}); // a failure is logged by the utterances that need the model
      const raw = isRawInputFormat(config.audioFormat)
        ? { format: config.audioFormat, sampleRate: config.sampleRate!, channels: config.numChannels! }
        : undefined;
      this.source = config.enableMultichannel
        ? createChannelSource(config.audioFormat, raw, { ffmpegPath: opts.ffmpegPath, maxChannels: MAX_CHANNELS })
        : createPcmSource(config.audioFormat, raw, { ffmpegPath: opts.ffmpegPath });
      // Raw audio's channels are known now; a container's once its header is read (openLanes).
      const channels: (number | undefined)[] = !config.enableMultichannel ? [undefined] : raw ? Array.from({ length: raw.channels }, (_, c) => c) : [0];
      for (const channel of channels) {
        const lane = await this.openLane(channel);
        if (!lane) return;
      }
      this.state = 'streaming';
      this.intake = new AudioIntake(
        this.source,
        config.maxNonFinalTokensDurationMs,
        {
          closed: () => this.closed,
          touch: () => this.clock.touch(),
          fail: (err) => this.fail(err),
          whileFinalizing: (step) => this.clock.whileFinalizing(step),
          lanes: () => this.lanes,
          openLanes: async (count) => {
            for (let c = this.lanes.length; c < count && !this.closed; c++) await this.openLane(c);
          },
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

  /** The holder of a key: authenticated, then permitted (permission, rate limit). */
  private async keyHolder(apiKey: unknown): Promise<AuthContext> {
    const ctx = await this.service.admission.authenticate(apiKey);
    if (!this.closed) await this.service.admission.permit(ctx);
    return ctx;
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

  /** The lane of `channel` (undefined: of the mix), opened and added; undefined when the session closed meanwhile. */
  private async openLane(channel: number | undefined): Promise<Lane | undefined> {
    const lane = await Lane.open(this.service, this.laneSpec!, this.asLaneSession, channel);
    if (lane) this.lanes.push(lane);
    return lane;
  }

  /** What the lanes see of the session. */
  private readonly asLaneSession: LaneSession = ((session: RealtimeSession) => ({
    get closed() {
      return session.closed;
    },
    get endingStream() {
      return session.endingStream;
    },
    get config() {
      return session.config;
    },
    get requestId() {
      return session.requestId;
    },
    get signal() {
      return session.abort.signal;
    },
    flush: () => session.flush(),
    fail: (err: unknown) => session.fail(err),
    touch: () => session.clock.touch(),
  }))(this);

  /** A client finalization, in turn with the others and the end of stream (counted while it runs). */
  private clientFinalize(): void {
    this.enqueue(() =>
      this.clock.whileFinalizing(async () => {
        await this.source!.mark();
        if (this.closed) return;
        const lanes = [...this.lanes];
        await Promise.all(lanes.map((lane) => lane.engine.finalize()));
        // The finalized mark promises everything before it is final, translations included (of every channel).
        await Promise.all(lanes.map((lane) => lane.finals));
        await Promise.all(lanes.map((lane) => lane.translation.drained()));
        if (this.closed) return;
        for (const lane of lanes) lane.tracker.finalizedUpTo(lane.engine.audioMs);
        // The last lane's words come last in a merged update: the mark after them follows every channel's.
        lanes.at(-1)!.tracker.mark('finalized');
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
      const lanes = [...this.lanes];
      await Promise.all(lanes.map((lane) => lane.diarization?.flush()));
      this.endingStream = true;
      await Promise.all(lanes.map((lane) => lane.engine.end()));
      await Promise.all(lanes.map((lane) => lane.finals));
      await Promise.all(lanes.map((lane) => lane.translation.drained()));
      if (this.closed) return;
      for (const lane of lanes) lane.tracker.finalizedUpTo(lane.engine.audioMs);
      if (this.hasNews()) this.sink.update(this.observed(this.update()));
      const last = this.update();
      const secondPass = sumReports(lanes.map((lane) => lane.engine.secondPass));
      if (secondPass) this.service.deps.observe?.secondPass(secondPass);
      this.service.deps.log.info(
        {
          request_id: this.requestId,
          audio_ms: this.audioMs,
          ms: Date.now() - this.startedAt,
          ...(this.config.enableMultichannel ? { channels: lanes.length } : {}),
          ...(secondPass ? { second_pass: secondPass } : {}),
        },
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
    if (this.closed || !this.hasNews()) return;
    this.sink.update(this.observed(this.update()));
  }

  private hasNews(): boolean {
    return this.lanes.some((lane) => lane.tracker.hasNews());
  }

  /** The next transcript update: every lane's, merged. */
  private update(): TranscriptUpdate {
    return mergeUpdates(this.lanes.map((lane) => lane.tracker.update(lane.engine.audioMs)));
  }

  /** Audio recognised so far: each lane's (each channel's) counted. */
  private meteredAudioMs(): number {
    return this.lanes.reduce((sum, lane) => sum + lane.engine.audioMs, 0);
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
    // One usage record per session, whatever ended it: the audio the engines received (once per channel).
    this.usage?.record(
      this.meteredAudioMs(),
      this.lanes.reduce((sum, lane) => sum + lane.tracker.finalCount, 0),
    );
    this.state = 'closed';
    this.clock.stop();
    this.abort.abort();
    this.source?.abort();
    for (const lane of this.lanes) {
      lane.engine.abort();
      lane.diarization?.close();
    }
    this.release?.();
    this.release = undefined;
    this.pending = [];
    this.service.forget(this);
  }
}

/** The second-pass reports of a session's lanes, added up (undefined when no lane has one). */
function sumReports(reports: (SecondPassReport | undefined)[]): SecondPassReport | undefined {
  const given = reports.filter((r) => r !== undefined);
  if (!given.length) return undefined;
  return given.reduce((a, b) => ({
    decoded: a.decoded + b.decoded,
    early: a.early + b.early,
    skipped: a.skipped + b.skipped,
    late: a.late + b.late,
    failed: a.failed + b.failed,
  }));
}
