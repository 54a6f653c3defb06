// A fixed-size pool of decoder worker threads (one pocketsphinx decoder each) and the main-thread end of a session
// on one of them. The main thread only copies PCM into messages; all decoding happens in the workers.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Token } from '../interface.js';
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

/** At most this many audio messages travel unacknowledged per session (backpressure towards the producer). */
const MAX_IN_FLIGHT = 4;
/** Larger writes are split so one message never holds more than ~2 s of audio. */
const MAX_MESSAGE_BYTES = 64 * 1024;

export interface SessionEvents {
  partial?: (tokens: Token[]) => void;
  final?: (tokens: Token[]) => void;
  /** The session failed after it started (worker crash, decoder error). */
  error?: (err: Error) => void;
}

class DecoderWorker {
  readonly worker: Worker;
  readonly ready: Promise<number>;
  channel: SessionChannel | undefined;
  started = false;
  dead = false;
  closing = false;

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
      if (msg.type !== 'ready' && msg.type !== 'init_error') this.channel?.handle(msg);
    });
    let lastError: Error | undefined;
    this.worker.on('error', (err) => {
      lastError = err;
    });
    this.worker.on('exit', (code) => {
      this.dead = true;
      // Start-up failures are reported through `ready`; deaths during `close()` are expected.
      if (this.closing || !this.started) return;
      onDeath(this, lastError ?? new Error(`pocketsphinx worker exited unexpectedly (code ${code})`));
    });
  }

  post(msg: ToWorker, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(msg, transfer);
  }
}

export interface PoolStats {
  size: number;
  busy: number;
  waiting: number;
  /** Model load time of each worker that has started, ms. */
  loadMs: number[];
}

export class DecoderPool {
  private readonly workers = new Set<DecoderWorker>();
  private readonly idle: DecoderWorker[] = [];
  private readonly waiters: { resolve: (w: DecoderWorker) => void; reject: (e: Error) => void }[] = [];
  private readonly loadMs: number[] = [];
  private nextSession = 1;
  private closed = false;

  constructor(
    private readonly init: WorkerInit,
    readonly size: number,
  ) {}

  /** Start every worker and wait until each has loaded its model; rejects (and stops them all) if one cannot. */
  async start(): Promise<void> {
    const started = Array.from({ length: this.size }, () => this.spawn());
    try {
      await Promise.all(started.map((w) => w.ready));
    } catch (err) {
      for (const w of started) w.closing = true;
      await this.close();
      throw err;
    }
    for (const w of started) this.makeIdle(w);
  }

  stats(): PoolStats {
    return { size: this.size, busy: this.workers.size - this.idle.length, waiting: this.waiters.length, loadMs: [...this.loadMs] };
  }

  /** Open a session on a free worker, waiting for one if all are busy. */
  async open(
    begin: { mode: 'batch' } | { mode: 'stream'; stream: StreamSettings },
    events: SessionEvents,
    signal?: AbortSignal,
  ): Promise<SessionChannel> {
    const worker = await this.acquire(signal);
    const channel = new SessionChannel(this, worker, this.nextSession++, events);
    worker.channel = channel;
    worker.worker.ref();
    worker.post({ type: 'begin', session: channel.id, ...begin } as ToWorker);
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
        await w.worker.terminate();
      }),
    );
  }

  /** @internal called by a channel once its worker has answered 'ended' (or the session is abandoned). */
  release(worker: DecoderWorker): void {
    worker.channel = undefined;
    if (worker.dead || this.closed) return;
    this.makeIdle(worker);
  }

  private acquire(signal?: AbortSignal): Promise<DecoderWorker> {
    if (this.closed) return Promise.reject(new Error('pocketsphinx engine closed'));
    signal?.throwIfAborted();
    const free = this.idle.pop();
    if (free) return Promise.resolve(free);
    this.replenish();
    return new Promise<DecoderWorker>((resolve, reject) => {
      const waiter = {
        resolve: (w: DecoderWorker) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(w);
        },
        reject: (e: Error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private makeIdle(worker: DecoderWorker): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.resolve(worker);
      return;
    }
    worker.worker.unref(); // an idle pool does not keep the process alive
    this.idle.push(worker);
  }

  private spawn(): DecoderWorker {
    const worker = new DecoderWorker(this.init, (w, err) => this.onDeath(w, err));
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
        () => this.makeIdle(w),
        (err: Error) => {
          this.workers.delete(w);
          w.closing = true;
          void w.worker.terminate();
          for (const waiter of this.waiters.splice(0)) waiter.reject(err);
        },
      );
    }
  }

  private onDeath(worker: DecoderWorker, err: Error): void {
    this.workers.delete(worker);
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    worker.channel?.fail(new Error(`pocketsphinx worker failed: ${err.message}`));
    worker.channel = undefined;
    if (this.waiters.length > 0) this.replenish();
  }
}

/** Main-thread end of one session on one worker: flow-controlled audio, control messages, result events. */
export class SessionChannel {
  private seq = 0;
  private inFlight = 0;
  private carry: number | undefined; // odd trailing byte of the previous write
  private capacityWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private finalizeWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private endWaiter: { resolve: (ms: number) => void; reject: (e: Error) => void } | undefined;
  private ending = false;
  private released = false;
  private failure: Error | undefined;
  /** Audio sent so far, ms. */
  sentMs = 0;

  constructor(
    private readonly pool: DecoderPool,
    private readonly worker: DecoderWorker,
    readonly id: number,
    private readonly events: SessionEvents,
  ) {}

  get done(): boolean {
    return this.ending || this.failure !== undefined;
  }

  /** Send PCM (s16le); resolves when fewer than MAX_IN_FLIGHT messages are unacknowledged. */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.ending) throw new Error('session already ended');
    let data = bytes;
    if (this.carry !== undefined) {
      data = new Uint8Array(bytes.length + 1);
      data[0] = this.carry;
      data.set(bytes, 1);
      this.carry = undefined;
    }
    if (data.length % 2 === 1) {
      this.carry = data[data.length - 1];
      data = data.subarray(0, data.length - 1);
    }
    for (let off = 0; off < data.length; off += MAX_MESSAGE_BYTES) {
      while (this.inFlight >= MAX_IN_FLIGHT) {
        await new Promise<void>((resolve, reject) => this.capacityWaiters.push({ resolve, reject }));
      }
      if (this.failure) throw this.failure;
      const piece = data.subarray(off, Math.min(data.length, off + MAX_MESSAGE_BYTES));
      const buffer = new ArrayBuffer(piece.length);
      new Uint8Array(buffer).set(piece);
      this.inFlight++;
      this.sentMs += piece.length / 32;
      this.worker.post({ type: 'audio', session: this.id, seq: ++this.seq, pcm: buffer }, [buffer]);
    }
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

  /** No more audio: resolves with the audio duration (ms) after the last final tokens were delivered. */
  end(): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new Error('session already ended'));
    this.ending = true;
    return new Promise<number>((resolve, reject) => {
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
        this.events.final?.(msg.tokens);
        break;
      case 'finalized':
        this.finalizeWaiters.shift()?.resolve();
        break;
      case 'ended':
        this.release();
        this.endWaiter?.resolve(msg.audioMs);
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
