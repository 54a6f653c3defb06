// Real-time recognition with streaming models users bring (sherpa-onnx OnlineRecognizer: Zipformer transducers,
// streaming Paraformer, Zipformer2 CTC). Each of the model's recognizers lives on a worker thread at the priority of
// live audio and serves several sessions (online-sessions.ts); a session goes to the recognizer with the fewest.
// Audio written to a session resolves once decoded (backpressure), with its partial and final results emitted.
import { StreamListeners } from '../stream-listeners.js';
import { S16leReader } from '../../../audio/s16le.js';
import type { InstalledModel } from '../../model-dir/manifest.js';
import type { Recognizer, StreamEvents, StreamingSession, StreamOptions, Token, TranscribeOptions } from '../interface.js';
import type { OnlineCall } from './online-sessions.js';
import type { OnlineEvent, OnlineReply } from './online-worker-messages.js';

export interface OnlineLane {
  call(req: OnlineCall): Promise<OnlineReply>;
  stop(): Promise<void>;
  sessions: number;
}

let nextSession = 1;

export class SherpaStreamingRecognizer implements Recognizer {
  constructor(
    readonly engineId: string,
    readonly model: InstalledModel,
    private readonly lanes: OnlineLane[],
    /** Pause that ends an utterance when a session does not say, ms. */
    private readonly endpointSilenceMs: number,
  ) {}

  get engineModel(): string {
    return this.model.id;
  }

  async stream(options: StreamOptions = {}): Promise<StreamingSession> {
    const lane = this.lanes.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    const id = nextSession++;
    lane.sessions++;
    try {
      await lane.call({ op: 'open', session: id, endpointMs: options.endpointSilenceMs ?? this.endpointSilenceMs });
    } catch (err) {
      lane.sessions--;
      throw err;
    }
    return new SherpaStream(lane, id);
  }

  /** A file through a session: its final words (each utterance's as soon as it is closed). */
  async transcribe(pcm: AsyncIterable<Uint8Array>, options: TranscribeOptions = {}): Promise<Token[]> {
    const session = await this.stream();
    const words: Token[] = [];
    session.on('final', (tokens) => {
      words.push(...tokens);
      options.onTokens?.(tokens);
    });
    try {
      for await (const chunk of pcm) {
        options.signal?.throwIfAborted();
        await session.write(chunk);
      }
      await session.end();
      return words;
    } finally {
      session.abort();
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.stop()));
  }
}

class SherpaStream implements StreamingSession {
  private readonly listeners = new StreamListeners();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly reader = new S16leReader();
  private samples = 0;
  private isClosed = false;
  private released = false;
  private failure: Error | undefined;

  constructor(
    private readonly lane: OnlineLane,
    private readonly id: number,
  ) {}

  get audioMs(): number {
    return Math.round(this.samples / 16);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  on<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this {
    this.listeners.on(event, listener);
    return this;
  }

  off<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this {
    this.listeners.off(event, listener);
    return this;
  }

  write(pcm: Uint8Array): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    // A copy with its own buffer: the samples travel to the worker.
    const samples = this.reader.read(pcm);
    this.samples += samples.length;
    return this.serial(() => this.lane.call({ op: 'audio', session: this.id, samples }));
  }

  finalize(): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    return this.serial(() => this.lane.call({ op: 'finalize', session: this.id, end: false }));
  }

  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.isClosed) return;
    this.isClosed = true;
    await this.serial(() => this.lane.call({ op: 'finalize', session: this.id, end: true }), true);
    this.release();
  }

  abort(): void {
    if (this.released) return;
    this.isClosed = true;
    this.release();
    void this.lane.call({ op: 'close', session: this.id }).catch(() => undefined);
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.lane.sessions--;
  }

  /** Run one worker call after the earlier ones and emit the results it brought. */
  private serial(call: () => Promise<OnlineReply>, ending = false): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.failure) throw this.failure;
      if (this.released && !ending) return;
      const reply = await call();
      if ('events' in reply) for (const e of reply.events) this.emitEvent(e);
    });
    this.queue = run.catch((err: unknown) => this.fail(err));
    return run;
  }

  private emitEvent(e: OnlineEvent): void {
    if (e.type === 'partial') this.listeners.emit('partial', e.tokens);
    else this.listeners.emit('final', e.tokens, { endpoint: e.endpoint });
  }

  private fail(err: unknown): void {
    if (this.failure) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.isClosed = true;
    this.listeners.emit('error', this.failure);
    this.release();
  }
}
