// Decoder worker threads (one pocketsphinx decoder each), in two pools per loaded model:
//
// - BatchPool: a fixed number of workers (default: one per core) shared by every file transcription. The unit of work
//   is one speech segment (≤ ~20 s of audio), not a whole file: transcriptions hand their segments to the pool, and a
//   FairScheduler decides whose segment goes to the next free worker. A short file that arrives behind long ones
//   waits for at most one segment per worker. Segment results do not depend on what a worker decoded before (batch
//   CMN), so interleaving requests changes nothing in their results.
// - StreamPool: real-time sessions keep decoder state for their whole life, so each holds a dedicated worker.
//   Streaming workers are started on demand up to a limit, kept for reuse while idle (retired after a while), and
//   never taken from the batch pool: streams cannot starve batch work of decoders, and batch work cannot make a live
//   session wait for one. (Both share the CPU cores through the OS scheduler; a live stream needs well under a core.)
//
// The main thread only moves PCM into messages; all decoding happens in the workers.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { EngineBusyError, type FinalInfo, type Token } from '../interface.js';
import { FairScheduler, type SchedulerRequest, type SchedulerRequestStats } from '../scheduler.js';
import type { SpeechSegment } from '../segmenter.js';
import type { FromWorker, StreamSettings, ToWorker, WorkerInit } from './messages.js';

/**
 * How to start the worker. From dist/ this module is pool.js and the worker is the compiled worker.js, run by plain
 * Node. When this module is itself a .ts file (vitest, or `node --import tsx`), the worker is worker.ts and the
 * thread needs a TypeScript loader: a tiny eval'd bootstrap loads it through tsx's `tsImport` (tsx is a
 * devDependency; dist never needs it). `--import tsx` in the worker's execArgv does not work on Node 20: its
 * module hooks do not reach the worker's own entry.
 */
export function workerEntry(moduleUrl: string = import.meta.url): { script: URL | string; eval: boolean } {
  const isTs = /\.[cm]?ts$/.test(new URL(moduleUrl).pathname);
  if (!isTs) return { script: new URL('./worker.js', moduleUrl), eval: false };
  const worker = new URL('./worker.ts', moduleUrl).href;
  const code = `import(${JSON.stringify(tsxEsmApi(moduleUrl))}).then((tsx) => tsx.tsImport(${JSON.stringify(worker)}, ${JSON.stringify(moduleUrl)}))`;
  return { script: code, eval: true };
}

/** URL of tsx's ESM API ("tsx/esm/api", import condition), read from tsx's own exports map. */
function tsxEsmApi(moduleUrl: string): string {
  const require = createRequire(moduleUrl);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = require(manifestPath) as { exports?: Record<string, { import?: { default?: string } } | string> };
  const entry = manifest.exports?.['./esm/api'];
  const relative = typeof entry === 'object' ? entry.import?.default : undefined;
  if (!relative) throw new Error('tsx does not export ./esm/api; cannot run the TypeScript worker');
  return pathToFileURL(join(dirname(manifestPath), relative)).href;
}


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
  final?: (tokens: Token[], info: FinalInfo & UtteranceSpan) => void;
  /** The session failed after it started (worker crash, decoder error). */
  error?: (err: Error) => void;
}

class DecoderWorker {
  readonly worker: Worker;
  readonly ready: Promise<number>;
  /** Where this worker's messages go (the pool for batch work, the session channel while streaming). */
  onMessage: ((msg: FromWorker) => void) | undefined;
  /** The live session on a streaming worker. */
  channel: SessionChannel | undefined;
  started = false;
  dead = false;
  closing = false;
  retireTimer: NodeJS.Timeout | undefined;

  constructor(init: WorkerInit, onDeath: (w: DecoderWorker, err: Error) => void) {
    const entry = workerEntry();
    this.worker = new Worker(entry.script, { eval: entry.eval, workerData: init, execArgv: [] });
    this.ready = new Promise<number>((resolve, reject) => {
      const onMessage = (msg: FromWorker): void => {
        if (msg.type === 'ready') {
          this.worker.off('message', onMessage);
          this.started = true;
          resolve(msg.loadMs);
        } else if (msg.type === 'init_error') {
          this.worker.off('message', onMessage);
          reject(new Error(msg.message));
        }
      };
      this.worker.on('message', onMessage);
      this.worker.once('error', (err) => reject(new Error(`pocketsphinx worker failed to start: ${err.message}`)));
      this.worker.once('exit', (code) => reject(new Error(`pocketsphinx worker exited during start-up (code ${code})`)));
    });
    this.ready.catch(() => {}); // observed by the pool; avoid an unhandled rejection when nobody awaits it
    this.worker.on('message', (msg: FromWorker) => {
      if (msg.type !== 'ready' && msg.type !== 'init_error') this.onMessage?.(msg);
    });
    let lastError: Error | undefined;
    this.worker.on('error', (err) => {
      lastError = err;
    });
    this.worker.on('exit', (code) => {
      this.dead = true;
      if (this.retireTimer) clearTimeout(this.retireTimer);
      // Start-up failures are reported through `ready`; deaths during `close()` are expected.
      if (this.closing || !this.started) return;
      onDeath(this, lastError ?? new Error(`pocketsphinx worker exited unexpectedly (code ${code})`));
    });
  }

  post(msg: ToWorker, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(msg, transfer);
  }

  stop(): Promise<number> {
    this.closing = true;
    return this.worker.terminate();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Batch

export interface BatchPoolOptions {
  /** Workers (decoders): the most segments of this model decoded at once. */
  size: number;
  /** Most segments of one request decoded at once (default: size, i.e. a lone request may use every worker). */
  perRequestLimit?: number;
  /** Most segments of one request submitted and not finished (running + queued); default perRequestLimit + 1. */
  maxPendingPerRequest?: number;
}

export interface BatchRequestStats extends SchedulerRequestStats {
  /** Audio of the segments queued or running, ms. */
  pendingAudioMs: number;
}

export interface BatchPoolStats {
  /** Batch workers (decoders) of this model. */
  size: number;
  busy: number;
  idle: number;
  /** Transcriptions with queued segments and nothing decoding (waiting for a worker). */
  waiting: number;
  /** Transcriptions with a segment decoding now. */
  activeRequests: number;
  /** Transcriptions open (reading audio, queued or decoding). */
  requests: number;
  /** Segments waiting for a worker, all transcriptions. */
  queuedSegments: number;
  perRequest: BatchRequestStats[];
  /** Model load time of each worker that has started, ms. */
  loadMs: number[];
}

interface SegmentJob {
  id: number;
  seq: number;
  request: BatchRequest;
  startSample: number;
  pcm: ArrayBuffer;
}

export class BatchPool {
  private readonly workers = new Set<DecoderWorker>();
  private readonly idle: DecoderWorker[] = [];
  private readonly running = new Map<DecoderWorker, SegmentJob>();
  private readonly requests = new Set<BatchRequest>();
  private readonly scheduler: FairScheduler<SegmentJob>;
  private readonly loadMs: number[] = [];
  private readonly maxPending: number;
  private nextJob = 1;
  private closed = false;

  constructor(
    private readonly init: WorkerInit,
    private readonly options: BatchPoolOptions,
  ) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError(`batch pool size must be a positive integer, got ${options.size}`);
    const perRequest = options.perRequestLimit ?? options.size;
    this.scheduler = new FairScheduler<SegmentJob>(perRequest);
    this.maxPending = Math.max(1, options.maxPendingPerRequest ?? perRequest + 1);
  }

  get size(): number {
    return this.options.size;
  }

  /** Start every worker and wait until each has loaded its model; rejects (and stops them all) if one cannot. */
  async start(): Promise<void> {
    const started = Array.from({ length: this.size }, () => this.spawn());
    try {
      await Promise.all(started.map((w) => w.ready));
    } catch (err) {
      await this.close();
      throw err;
    }
    for (const w of started) this.makeIdle(w);
  }

  /**
   * Open a transcription: submit its segments in time order, then finish(). `onQueuePosition` is told the request's
   * rank among transcriptions waiting for a worker (1 = next), and 0 once its first segment is decoding. Requests of a
   * higher `priority` (live second passes: 1) are served before the others (files: 0).
   */
  open(events: { onTokens?: (tokens: Token[]) => void; onQueuePosition?: (position: number) => void; priority?: number } = {}): BatchRequest {
    if (this.closed) throw new Error('pocketsphinx engine closed');
    const request = new BatchRequest(this, this.scheduler.register(events.onQueuePosition, events.priority), this.maxPending, events.onTokens);
    this.requests.add(request);
    return request;
  }

  stats(): BatchPoolStats {
    const s = this.scheduler.stats();
    const pendingMs = new Map<number, number>();
    for (const r of this.requests) pendingMs.set(r.id, r.pendingAudioMs);
    return {
      size: this.size,
      busy: this.running.size,
      idle: this.idle.length,
      waiting: s.waiting,
      activeRequests: s.active,
      requests: s.requests,
      queuedSegments: s.queued,
      perRequest: s.perRequest.map((r) => ({ ...r, pendingAudioMs: pendingMs.get(r.id) ?? 0 })),
      loadMs: [...this.loadMs],
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new Error('pocketsphinx engine closed');
    for (const r of [...this.requests]) r.fail(err);
    const all = [...this.workers];
    this.workers.clear();
    this.idle.length = 0;
    this.running.clear();
    await Promise.all(all.map((w) => w.stop()));
  }

  /** @internal */
  enqueue(request: BatchRequest, seq: number, segment: SpeechSegment): void {
    let samples = segment.samples;
    if (samples.byteOffset !== 0 || samples.byteLength !== samples.buffer.byteLength) samples = samples.slice();
    const job: SegmentJob = {
      id: this.nextJob++,
      seq,
      request,
      startSample: segment.startSample,
      pcm: samples.buffer as ArrayBuffer,
    };
    this.scheduler.enqueue(request.scheduling, job);
    if (this.workers.size < this.size) this.replenish();
    this.pump();
  }

  /** @internal the request is done (finished, failed or cancelled): drop its queued segments. */
  forget(request: BatchRequest): void {
    this.requests.delete(request);
    this.scheduler.remove(request.scheduling);
    this.scheduler.publishPositions();
  }

  /** Hand queued segments to free workers, fairly. */
  private pump(): void {
    while (!this.closed && this.idle.length > 0) {
      const next = this.scheduler.next();
      if (!next) break;
      const worker = this.idle.pop()!;
      const { job } = next;
      this.running.set(worker, job);
      worker.worker.ref();
      worker.post({ type: 'decode', job: job.id, startSample: job.startSample, pcm: job.pcm }, [job.pcm]);
    }
    this.scheduler.publishPositions();
  }

  private onMessage(worker: DecoderWorker, msg: FromWorker): void {
    if (msg.type !== 'decoded' && msg.type !== 'decode_error') return;
    const job = this.running.get(worker);
    if (!job || job.id !== msg.job) return;
    this.running.delete(worker);
    this.scheduler.finished(job.request.scheduling);
    this.makeIdle(worker);
    if (msg.type === 'decoded') job.request.complete(job.seq, msg.tokens);
    else job.request.fail(new Error(msg.message));
    this.pump();
  }

  private makeIdle(worker: DecoderWorker): void {
    if (worker.dead || this.closed) return;
    worker.worker.unref(); // an idle pool does not keep the process alive
    this.idle.push(worker);
  }

  private spawn(): DecoderWorker {
    const worker = new DecoderWorker(this.init, (w, err) => this.onDeath(w, err));
    worker.onMessage = (msg) => this.onMessage(worker, msg);
    this.workers.add(worker);
    worker.ready.then(
      (ms) => this.loadMs.push(ms),
      () => {},
    );
    return worker;
  }

  /** Replace workers that died, up to the pool size. */
  private replenish(): void {
    while (!this.closed && this.workers.size < this.size) {
      const w = this.spawn();
      w.ready.then(
        () => {
          this.makeIdle(w);
          this.pump();
        },
        (err: Error) => {
          this.workers.delete(w);
          void w.stop();
          // Without any worker nobody would ever serve the queued segments: fail them now.
          if (this.workers.size === 0) for (const r of [...this.requests]) r.fail(new Error(`pocketsphinx worker could not be replaced: ${err.message}`));
        },
      );
    }
  }

  private onDeath(worker: DecoderWorker, err: Error): void {
    this.workers.delete(worker);
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    const job = this.running.get(worker);
    this.running.delete(worker);
    if (job) {
      this.scheduler.finished(job.request.scheduling);
      job.request.fail(new Error(`pocketsphinx worker failed: ${err.message}`));
    }
    this.replenish();
  }
}

/** One file transcription in the batch pool: segments in, tokens out in time order. */
export class BatchRequest {
  private readonly tokens: Token[] = [];
  private readonly results = new Map<number, Token[]>();
  private readonly pendingMs = new Map<number, number>();
  private nextSeq = 0;
  private nextEmit = 0;
  private failure: Error | undefined;
  private done = false;
  private capacityWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private finishWaiter: { resolve: (t: Token[]) => void; reject: (e: Error) => void } | undefined;
  private finishing = false;

  constructor(
    private readonly pool: BatchPool,
    /** @internal */
    readonly scheduling: SchedulerRequest<SegmentJob>,
    private readonly maxPending: number,
    private readonly onTokens?: (tokens: Token[]) => void,
  ) {}

  get id(): number {
    return this.scheduling.id;
  }

  /** Segments submitted and not finished. */
  get pending(): number {
    return this.nextSeq - this.nextEmit;
  }

  /** Audio of the segments submitted and not finished, ms. */
  get pendingAudioMs(): number {
    let ms = 0;
    for (const v of this.pendingMs.values()) ms += v;
    return ms;
  }

  /** Queue a segment (segments must come in time order). Resolves when the request may submit another. */
  async submit(segment: SpeechSegment): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.done || this.finishing) throw new Error('transcription already finished');
    const seq = this.nextSeq++;
    this.pendingMs.set(seq, segment.samples.length / 16);
    this.pool.enqueue(this, seq, segment);
    while (this.pending >= this.maxPending && !this.failure) {
      await new Promise<void>((resolve, reject) => this.capacityWaiters.push({ resolve, reject }));
    }
    if (this.failure) throw this.failure;
  }

  /** No more segments: resolves with every token, in time order, once all segments are decoded. */
  finish(): Promise<Token[]> {
    if (this.failure) return Promise.reject(this.failure);
    this.finishing = true;
    return new Promise<Token[]>((resolve, reject) => {
      this.finishWaiter = { resolve, reject };
      this.settle();
    });
  }

  /** Give up: queued segments are dropped, results of running ones ignored. */
  cancel(reason: Error = new Error('transcription cancelled')): void {
    this.fail(reason);
  }

  /** @internal */
  complete(seq: number, tokens: Token[]): void {
    if (this.failure || this.done) return;
    this.results.set(seq, tokens);
    // Emit in time order: a later segment may finish first on another worker.
    while (this.results.has(this.nextEmit)) {
      const batch = this.results.get(this.nextEmit)!;
      this.results.delete(this.nextEmit);
      this.pendingMs.delete(this.nextEmit);
      this.nextEmit++;
      if (batch.length > 0) {
        this.tokens.push(...batch);
        try {
          this.onTokens?.(batch);
        } catch (err) {
          this.fail(err instanceof Error ? err : new Error(String(err)));
          return;
        }
      }
    }
    for (const w of this.capacityWaiters.splice(0)) w.resolve();
    this.settle();
  }

  /** @internal */
  fail(err: Error): void {
    if (this.failure || this.done) return;
    this.failure = err;
    this.pool.forget(this);
    for (const w of this.capacityWaiters.splice(0)) w.reject(err);
    this.finishWaiter?.reject(err);
    this.finishWaiter = undefined;
  }

  private settle(): void {
    if (!this.finishWaiter || this.pending > 0) return;
    this.done = true;
    this.pool.forget(this);
    this.finishWaiter.resolve(this.tokens);
    this.finishWaiter = undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Streaming

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
  warmUp(): void {
    this.replenish();
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
        this.replenish();
      },
      () => {
        // A decoder that cannot load fails the next session that needs it, not this one.
        this.warming--;
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

  /** The open utterance ends at `sample`: its final tokens follow (`pause`: the speaker paused, an endpoint). */
  endUtterance(sample: number, pause: boolean): void {
    if (this.failure || this.ending) return;
    this.worker.post({ type: 'endpoint', session: this.id, sample, pause });
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
    this.events.partial = this.events.final = this.events.error = undefined;
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
    this.events.partial = this.events.final = this.events.error = undefined;
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
