// The batch pool: a fixed number of decoder workers (default: one per core) shared by every file transcription. The
// unit of work is one speech segment (≤ ~20 s of audio), not a whole file: transcriptions hand their segments to the
// pool, and a FairScheduler decides whose segment goes to the next free worker. A short file that arrives behind long
// ones waits for at most one segment per worker. Segment results do not depend on what a worker decoded before (batch
// CMN), so interleaving requests changes nothing in their results. Live second passes run on a pool of their own
// (engine.ts), built the same way with the streaming decoders' settings.
import type { Token } from '../interface.js';
import { FairScheduler, type SchedulerRequest, type SchedulerRequestStats } from '../scheduler.js';
import type { SpeechSegment } from '../segmenter.js';
import { DecoderWorker } from './decoder-worker.js';
import type { DecoderBias, FromWorker, WorkerInit } from './messages.js';

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
  open(
    events: { onTokens?: (tokens: Token[]) => void; onQueuePosition?: (position: number) => void; priority?: number; bias?: DecoderBias } = {},
  ): BatchRequest {
    if (this.closed) throw new Error('pocketsphinx engine closed');
    const request = new BatchRequest(this, this.scheduler.register(events.onQueuePosition, events.priority), this.maxPending, events.onTokens, events.bias);
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
      worker.post({ type: 'decode', job: job.id, startSample: job.startSample, pcm: job.pcm, bias: job.request.bias }, [job.pcm]);
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
    /** @internal the request's context bias, sent with each of its segments */
    readonly bias?: DecoderBias,
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
