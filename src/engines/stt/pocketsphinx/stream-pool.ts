// The stream pool: real-time sessions keep decoder state for their whole life, so each holds a dedicated worker.
// Streaming workers are started on demand up to a limit, kept for reuse while idle (retired after a while, except the
// warm spares), and never taken from the batch pool: streams cannot starve batch work of decoders, and batch work
// cannot make a live session wait for one. (Both share the CPU cores through the OS scheduler; a live stream needs
// well under a core.) SessionChannel is the main-thread end of one session: flow-controlled audio and its events.
import { EngineBusyError, type FinalInfo, type Token } from '../interface.js';
import { DecoderWorker } from './decoder-worker.js';
import type { FromWorker, StreamSettings, UtteranceEnd, WorkerInit } from './messages.js';

/** At most this many audio messages travel unacknowledged per streaming session (backpressure towards the producer). */
const MAX_IN_FLIGHT = 4;
/** Larger writes are split so one message never holds more than ~2 s of audio. */
const MAX_MESSAGE_SAMPLES = 32 * 1024;

/** A streaming decoder's utterance: where it began and ended, in samples of the stream. */
export interface UtteranceSpan {
  startSample: number;
  endSample: number;
}

export interface SessionEvents {
  partial?: (tokens: Token[]) => void;
  /** Words of the open utterance that turned final before it ends (StreamSettings.settle). */
  settled?: (tokens: Token[]) => void;
  final?: (tokens: Token[], info: FinalInfo & UtteranceSpan) => void;
  /** The session failed after it started (worker crash, decoder error). */
  error?: (err: Error) => void;
}

export interface StreamPoolStats {
  /** Most streaming decoders (live sessions at once). */
  max: number;
  /** Sessions holding a decoder. */
  active: number;
  /** Started decoders waiting for a session. */
  idle: number;
  /** stream() calls waiting for a decoder. */
  waiting: number;
}

export class StreamPool {
  private readonly workers = new Set<DecoderWorker>();
  private readonly idle: DecoderWorker[] = [];
  private readonly waiters: { resolve: (w: DecoderWorker) => void; reject: (e: Error) => void }[] = [];
  private nextSession = 1;
  private closed = false;
  /** Spare decoders loading in the background. */
  private warming = 0;
  /** warmUp() callers waiting for the first spare. */
  private spareWaiters: (() => void)[] = [];

  constructor(
    private readonly init: WorkerInit,
    readonly max: number,
    /** An idle streaming decoder is stopped after this long, ms (its memory is returned; the next session starts one). */
    private readonly idleMs: number,
    /** Idle decoders kept loaded for the next sessions (never retired for idleness), once the first session opened. */
    private readonly warm = 0,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maximum streaming sessions must be a positive integer, got ${max}`);
  }

  stats(): StreamPoolStats {
    return { max: this.max, active: this.workers.size - this.idle.length - this.warming, idle: this.idle.length, waiting: this.waiters.length };
  }

  /** Open a live session on a dedicated decoder, starting one if needed, waiting when `max` sessions are running. */
  async open(stream: StreamSettings, events: SessionEvents, signal?: AbortSignal, busyWaitMs?: number): Promise<SessionChannel> {
    const worker = await this.acquire(signal, busyWaitMs);
    this.replenish();
    const channel = new SessionChannel(this, worker, this.nextSession++, events);
    worker.channel = channel;
    worker.onMessage = (msg) => channel.handle(msg);
    worker.worker.ref();
    worker.post({ type: 'begin', session: channel.id, stream });
    return channel;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('pocketsphinx engine closed'));
    const all = [...this.workers];
    this.workers.clear();
    this.idle.length = 0;
    await Promise.all(
      all.map(async (w) => {
        w.closing = true;
        w.channel?.fail(new Error('pocketsphinx engine closed'));
        await w.stop();
      }),
    );
  }

  /** @internal called by a channel once its worker has answered 'ended' (or the session is abandoned). */
  release(worker: DecoderWorker): void {
    worker.onMessage = undefined;
    worker.channel = undefined;
    if (worker.dead || this.closed) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.resolve(worker);
      return;
    }
    worker.worker.unref();
    this.idle.push(worker);
    worker.retireTimer = setTimeout(() => {
      const i = this.idle.indexOf(worker);
      if (i < 0 || this.idle.length <= this.warm) return;
      this.idle.splice(i, 1);
      this.workers.delete(worker);
      void worker.stop();
    }, this.idleMs);
    worker.retireTimer.unref();
  }

  private async acquire(signal?: AbortSignal, busyWaitMs?: number): Promise<DecoderWorker> {
    if (this.closed) throw new Error('pocketsphinx engine closed');
    signal?.throwIfAborted();
    const free = this.idle.pop();
    if (free) {
      clearTimeout(free.retireTimer);
      return free;
    }
    if (this.workers.size < this.max) {
      // A spare already loading comes sooner than a decoder started now (two loads would share the CPU); waiting for
      // it, like loading one, is not waiting for a busy decoder.
      return this.warming > this.waiters.length ? this.wait(signal) : this.start(signal);
    }
    return this.wait(signal, busyWaitMs);
  }

  /** Wait for the next decoder released (or loaded as a spare); `signal` gives up, and so does `busyWaitMs`. */
  private wait(signal?: AbortSignal, busyWaitMs?: number): Promise<DecoderWorker> {
    return new Promise<DecoderWorker>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const done = () => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      const waiter = {
        resolve: (w: DecoderWorker) => {
          // A decoder loaded for a waiter that gave up meanwhile goes to the next one (or the idle list).
          if (settled) return this.release(w);
          done();
          resolve(w);
        },
        reject: (e: Error) => {
          if (settled) return;
          done();
          reject(e);
        },
      };
      const onAbort = () => waiter.reject(signal!.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (busyWaitMs !== undefined) timer = setTimeout(() => waiter.reject(new EngineBusyError()), busyWaitMs);
      this.waiters.push(waiter);
    });
  }

  /** Start a decoder for a session (counted against `max` while it loads). */
  private async start(signal?: AbortSignal): Promise<DecoderWorker> {
    const worker = new DecoderWorker(this.init, (w, err) => this.onDeath(w, err));
    this.workers.add(worker);
    try {
      await worker.ready;
    } catch (err) {
      this.workers.delete(worker);
      void worker.stop();
      this.serveWaiters();
      throw err;
    }
    if (this.closed) {
      void worker.stop();
      throw new Error('pocketsphinx engine closed');
    }
    if (signal?.aborted) {
      this.release(worker);
      throw signal.reason as Error;
    }
    return worker;
  }

  /** Load the warm spares now, one at a time in the background, rather than once the first session opened. */
  warmUp(): Promise<void> {
    this.replenish();
    return this.firstSpare;
  }

  /** Resolves once the first spare decoder is loaded (or could not be, or none is wanted): a session is served at once. */
  private get firstSpare(): Promise<void> {
    if (this.idle.length > 0 || this.warming === 0) return Promise.resolve();
    return new Promise((resolve) => this.spareWaiters.push(resolve));
  }

  /**
   * Load spare decoders in the background, one at a time (a load is a CPU burst that live sessions share), until
   * `warm` are idle (within `max`).
   */
  private replenish(): void {
    if (this.closed || this.warming > 0 || this.idle.length >= this.warm || this.workers.size >= this.max) return;
    this.warming++;
    this.start().then(
      (w) => {
        this.warming--;
        this.release(w);
        for (const ready of this.spareWaiters.splice(0)) ready();
        this.replenish();
      },
      () => {
        // A decoder that cannot load fails the next session that needs it, not this one.
        this.warming--;
        for (const ready of this.spareWaiters.splice(0)) ready();
        this.serveWaiters();
      },
    );
  }

  /** A decoder slot freed up without a decoder to pass on: start one for the first waiter. */
  private serveWaiters(): void {
    if (this.closed || this.waiters.length === 0 || this.workers.size >= this.max) return;
    const waiter = this.waiters.shift()!;
    this.start().then(waiter.resolve, waiter.reject);
  }

  private onDeath(worker: DecoderWorker, err: Error): void {
    this.workers.delete(worker);
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    worker.channel?.fail(new Error(`pocketsphinx worker failed: ${err.message}`));
    worker.channel = undefined;
    worker.onMessage = undefined;
    this.serveWaiters();
  }
}

/** Main-thread end of one session on one worker: flow-controlled audio, control messages, result events. */
export class SessionChannel {
  private seq = 0;
  private inFlight = 0;
  private capacityWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private finalizeWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private endWaiter: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private ending = false;
  private released = false;
  private failure: Error | undefined;

  constructor(
    private readonly pool: StreamPool,
    private readonly worker: DecoderWorker,
    readonly id: number,
    private readonly events: SessionEvents,
  ) {}

  get done(): boolean {
    return this.ending || this.failure !== undefined;
  }

  /**
   * Send samples to decode, the first being sample `startSample` of the stream (the gate skips non-speech, so there
   * are gaps between utterances); resolves when fewer than MAX_IN_FLIGHT messages are unacknowledged.
   */
  async write(startSample: number, samples: Int16Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.ending) throw new Error('session already ended');
    for (let off = 0; off < samples.length; off += MAX_MESSAGE_SAMPLES) {
      while (this.inFlight >= MAX_IN_FLIGHT) {
        await new Promise<void>((resolve, reject) => this.capacityWaiters.push({ resolve, reject }));
      }
      if (this.failure) throw this.failure;
      const piece = samples.slice(off, Math.min(samples.length, off + MAX_MESSAGE_SAMPLES));
      this.inFlight++;
      this.worker.post({ type: 'audio', session: this.id, seq: ++this.seq, startSample: startSample + off, pcm: piece.buffer }, [piece.buffer]);
    }
  }

  /** The gate ended the open utterance at `sample`, for `reason` (messages.ts): its final tokens follow. */
  endUtterance(sample: number, reason: UtteranceEnd): void {
    if (this.failure || this.ending) return;
    this.worker.post({ type: 'endpoint', session: this.id, sample, reason });
  }

  /** Stream mode: close the current utterance; resolves after its final tokens were delivered. */
  finalize(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new Error('session already ended'));
    return new Promise<void>((resolve, reject) => {
      this.finalizeWaiters.push({ resolve, reject });
      this.worker.post({ type: 'finalize', session: this.id });
    });
  }

  /** No more audio: resolves after the last final tokens were delivered. */
  end(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new Error('session already ended'));
    this.ending = true;
    return new Promise<void>((resolve, reject) => {
      this.endWaiter = { resolve, reject };
      this.worker.post({ type: 'end', session: this.id });
    });
  }

  /** Abandon the session: no more events; the worker returns to the pool once it has dropped the session. */
  cancel(): void {
    if (this.released || this.ending) return;
    this.ending = true;
    this.events.partial = this.events.settled = this.events.final = this.events.error = undefined;
    this.endWaiter = { resolve: () => {}, reject: () => {} };
    this.worker.post({ type: 'cancel', session: this.id });
    this.rejectWaiters(new Error('session cancelled'));
  }

  /** @internal message from this channel's worker */
  handle(msg: FromWorker): void {
    if (!('session' in msg) || msg.session !== this.id) return;
    switch (msg.type) {
      case 'ack':
        this.inFlight--;
        this.capacityWaiters.shift()?.resolve();
        break;
      case 'partial':
        this.events.partial?.(msg.tokens);
        break;
      case 'settled':
        this.events.settled?.(msg.tokens);
        break;
      case 'final':
        this.events.final?.(msg.tokens, { endpoint: msg.endpoint, startSample: msg.startSample, endSample: msg.endSample });
        break;
      case 'finalized':
        this.finalizeWaiters.shift()?.resolve();
        break;
      case 'ended':
        this.release();
        this.endWaiter?.resolve();
        break;
      case 'error':
        this.fail(new Error(msg.message));
        this.release();
        break;
    }
  }

  /** @internal the session cannot go on (worker died, decoder error, pool closed). */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    const onError = this.events.error;
    this.events.partial = this.events.settled = this.events.final = this.events.error = undefined;
    this.endWaiter?.reject(err);
    this.endWaiter = undefined;
    this.rejectWaiters(err);
    onError?.(err);
  }

  private rejectWaiters(err: Error): void {
    for (const w of this.capacityWaiters.splice(0)) w.reject(err);
    for (const w of this.finalizeWaiters.splice(0)) w.reject(err);
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.pool.release(this.worker);
  }
}
