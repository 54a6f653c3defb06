// Real-time recognition with streaming models users bring (sherpa-onnx OnlineRecognizer: Zipformer transducers,
// streaming Paraformer, Zipformer2 CTC). Each of the model's recognizers lives on a worker thread at the priority of
// live audio and serves several sessions (online-sessions.ts); a session goes to the recognizer with the fewest.
// Audio written to a session resolves once decoded (backpressure), with its partial and final results emitted. Files
// are cut into speech segments and decoded by other recognizers of the model, at batch priority (engine.ts).
// With a second-pass model (an offline one, ../second-pass.ts), each utterance the streaming model closes is decoded
// again and those words are its final tokens; the streaming words show as partial results meanwhile.
import { WorkGate } from '../../../lib/work-gate.js';
import { ListenedStream } from '../stream-listeners.js';
import { S16leReader } from '../../../audio/s16le.js';
import type { InstalledModel } from '../../model-dir/manifest.js';
import {
  EngineBusyError,
  type RecognitionContext,
  type Recognizer,
  type SecondPassReport,
  type StreamingSession,
  type StreamOptions,
  type Token,
  type TranscribeOptions,
} from '../interface.js';
import { SecondPass, type SecondPassPool } from '../second-pass.js';
import { TwoPassFinals } from '../two-pass-finals.js';
import type { Vad } from '../../../audio/vad.js';
import type { OnlineCall } from './online-sessions.js';
import { PauseDetector } from './pauses.js';
import type { OnlineEvent, OnlineReply } from './online-worker-messages.js';

export interface OnlineLane {
  call(req: OnlineCall): Promise<OnlineReply>;
  stop(): Promise<void>;
  sessions: number;
}

let nextSession = 1;

/** What a streaming recognizer needs besides its live lanes. */
export interface StreamingParts {
  /** Pause that ends an utterance when a session does not say, ms. */
  endpointSilenceMs: number;
  /** Words this far behind the audio turn final while their utterance goes on, ms (not with a second pass). */
  settleMs: number;
  /** The recognizers that decode files (speech segments, at batch priority), started on first use. */
  files: () => Promise<Recognizer & { close(): Promise<void> }>;
  /** Context terms as the model's hotwords (undefined: the model takes none). */
  hotwords?: (context: RecognitionContext | undefined) => string | undefined;
  /** Second passes of the sessions' utterances (undefined: the streaming words are final). */
  secondPass?: SecondPassPool<RecognitionContext>;
  /** Live sessions at once; a session asked for beyond them waits for one to end (at most its busyWaitMs). */
  maxSessions: number;
  /** The VAD that finds the sessions' pauses (undefined: the model's trailing blanks do, pauses.ts). */
  vad?: () => Promise<Vad>;
}

export class SherpaStreamingRecognizer implements Recognizer {
  private files: Promise<Recognizer & { close(): Promise<void> }> | undefined;
  /** A slot per live session. */
  private readonly sessions: WorkGate;

  constructor(
    readonly engineId: string,
    readonly model: InstalledModel,
    private readonly lanes: OnlineLane[],
    private readonly parts: StreamingParts,
  ) {
    this.sessions = new WorkGate(parts.maxSessions);
  }

  get engineModel(): string {
    return this.model.id;
  }

  async stream(options: StreamOptions & { signal?: AbortSignal; busyWaitMs?: number } = {}): Promise<StreamingSession> {
    const free = await this.slot(options.signal, options.busyWaitMs);
    const lane = this.lanes.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    const id = nextSession++;
    lane.sessions++;
    const endpointMs = options.endpointSilenceMs ?? this.parts.endpointSilenceMs;
    let pauses: PauseDetector | undefined;
    try {
      if (endpointMs > 0 && this.parts.vad) pauses = new PauseDetector((await this.parts.vad()).createStream(), endpointMs * 16);
      const hotwords = this.parts.hotwords?.(options.context);
      await lane.call({
        op: 'open',
        session: id,
        endpointMs,
        // A second pass decodes whole utterances again: its finals come at the utterance's end.
        settleMs: this.parts.secondPass ? 0 : this.parts.settleMs,
        ...(hotwords ? { hotwords } : {}),
      });
    } catch (err) {
      lane.sessions--;
      free();
      throw err;
    }
    const second = this.parts.secondPass;
    return new SherpaStream(lane, id, free, second && new SecondPass(second, options.context), pauses);
  }

  /** Take a session slot (waiting at most `busyWaitMs` for one: then EngineBusyError); resolves with its release. */
  private slot(signal: AbortSignal | undefined, busyWaitMs: number | undefined): Promise<() => void> {
    const timeout = busyWaitMs === undefined ? undefined : AbortSignal.timeout(busyWaitMs);
    const gave = [signal, timeout].filter((x) => x !== undefined);
    return new Promise((resolve, reject) => {
      this.sessions
        .run(() => new Promise<void>((release) => resolve(release)), gave.length ? AbortSignal.any(gave) : undefined)
        .catch((err: unknown) =>
          reject(timeout?.aborted && !signal?.aborted ? new EngineBusyError(`all ${this.parts.maxSessions} live sessions of ${this.model.id} are taken`) : err),
        );
    });
  }

  /** A file: its speech segments decoded as fast as the CPU allows, each by a stream of its own (not in real time). */
  async transcribe(pcm: AsyncIterable<Uint8Array>, options: TranscribeOptions = {}): Promise<Token[]> {
    if (!this.files) {
      this.files = this.parts.files();
      this.files.catch(() => (this.files = undefined)); // tried again by the next file
    }
    return (await this.files).transcribe(pcm, options);
  }

  async close(): Promise<void> {
    const files = this.files;
    this.files = undefined;
    await Promise.all([...this.lanes.map((l) => l.stop()), (await files?.catch(() => undefined))?.close()]);
  }
}

class SherpaStream extends ListenedStream implements StreamingSession {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly reader = new S16leReader();
  private samples = 0;
  private isClosed = false;
  private released = false;
  private failure: Error | undefined;
  private readonly finals: TwoPassFinals;

  constructor(
    private readonly lane: OnlineLane,
    private readonly id: number,
    /** Gives the session's slot back. */
    private readonly free: () => void,
    private readonly second?: SecondPass<RecognitionContext>,
    private readonly pauses?: PauseDetector,
  ) {
    super();
    this.finals = new TwoPassFinals(second, {
      partial: (t) => this.listeners.emit('partial', t),
      final: (t, info) => this.listeners.emit('final', t, info),
      failed: () => this.failure !== undefined,
    });
  }

  get audioMs(): number {
    return Math.round(this.samples / 16);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** How this session's utterances got their final tokens (undefined without a second pass). */
  get secondPass(): SecondPassReport | undefined {
    return this.second?.stats;
  }

  write(pcm: Uint8Array): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    // A copy with its own buffer: the samples travel to the worker (copied there, so the second pass may keep them).
    const samples = this.reader.read(pcm);
    const start = this.samples;
    this.samples += samples.length;
    return this.serial(async () => {
      // In order with the decoder's results: an utterance it closes ends with the audio of that call.
      this.second?.audio(start, samples);
      const modelPauses = !this.pauses?.hearing;
      const [reply, paused] = await Promise.all([this.lane.call({ op: 'audio', session: this.id, samples, modelPauses }), this.pauses?.push(pcm)]);
      // The speaker paused: the utterance ends after this audio's results (a call queued behind this one).
      if (paused)
        void this.serial(() => this.lane.call({ op: 'finalize', session: this.id, end: false, endpoint: true }), { closes: true }).catch(() => undefined);
      return reply;
    });
  }

  finalize(options: { waitMs?: number } = {}): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    this.pauses?.closed();
    return this.serial(() => this.lane.call({ op: 'finalize', session: this.id, end: false }), { closes: true }).then(() => this.finals.settle(options.waitMs));
  }

  async settle(): Promise<number | undefined> {
    // A second pass decodes whole utterances again: its finals need the cut.
    if (this.second || this.isClosed) return undefined;
    let settledTo: number | undefined;
    const before = (tokens: Token[]) => (settledTo = tokens.at(-1)?.end_ms);
    this.listeners.on('final', before);
    try {
      await this.serial(() => this.lane.call({ op: 'settle', session: this.id }));
    } finally {
      this.listeners.off('final', before);
    }
    return settledTo;
  }

  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.isClosed) return;
    this.isClosed = true;
    await this.serial(() => this.lane.call({ op: 'finalize', session: this.id, end: true }), { closes: true, ending: true });
    await this.finals.settle();
    this.release();
  }

  abort(): void {
    this.second?.clear();
    if (this.released) return;
    this.isClosed = true;
    this.release();
    void this.lane.call({ op: 'close', session: this.id }).catch(() => undefined);
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.lane.sessions--;
    this.free();
  }

  /**
   * Run one worker call after the earlier ones and emit the results it brought. `closes`: the call ends the open
   * utterance (finalize), even when it had no words (its audio then needs no second pass).
   */
  private serial(call: () => Promise<OnlineReply>, how: { closes?: boolean; ending?: boolean } = {}): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.failure) throw this.failure;
      if (this.released && !how.ending) return;
      const reply = await call();
      if ('events' in reply) for (const e of reply.events) this.emitEvent(e);
      if (how.closes) void this.second?.closeWithFinal([]);
    });
    this.queue = run.catch((err: unknown) => this.fail(err));
    return run;
  }

  private emitEvent(e: OnlineEvent): void {
    if (e.type === 'partial') return this.finals.partial(e.tokens);
    // An utterance closed without words (the longest-utterance rule in silence): only its audio is dropped.
    if (e.tokens.length === 0) return void this.second?.closeWithFinal([]);
    this.finals.final(e.tokens, { endpoint: e.endpoint }, this.second?.closeWithFinal(e.tokens));
  }

  private fail(err: unknown): void {
    if (this.failure) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.isClosed = true;
    this.second?.clear();
    this.listeners.emit('error', this.failure);
    this.release();
  }
}
