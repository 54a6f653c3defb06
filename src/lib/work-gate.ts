// A node-wide gate for one kind of CPU-bound work: at most `slots` tasks run at once, the rest wait in arrival
// order. It keeps the work from taking every core at once (the event loop and live audio keep theirs), and it
// says how long its queue is, so new requests can be refused with a fast 429 instead of waiting without bound.

interface Waiter {
  start(): void;
  priority: number;
}

export class WorkGate {
  private active = 0;
  private readonly queue: Waiter[] = [];
  /** Moving average of a task's run time (ms), for Retry-After estimates. */
  private avgMs = 0;

  constructor(private slots: number) {}

  /** Change the number of slots (settings are applied after the engines are built). */
  resize(slots: number): void {
    this.slots = Math.max(1, slots);
    this.pump();
  }

  /** Tasks that may run at once. */
  get size(): number {
    return this.slots;
  }

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Seconds until a task queued now would start, estimated from recent run times (at least 1). */
  retryAfterSeconds(): number {
    const ms = ((this.queue.length + 1) * (this.avgMs || 1000)) / this.slots;
    return Math.max(1, Math.ceil(ms / 1000));
  }

  /**
   * Run `task` in a slot; an abort while it waits removes it from the queue and rejects with the signal's reason.
   * Tasks of a higher `priority` (live work) are started before waiting ones of a lower (files: 0).
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal, priority = 0): Promise<T> {
    signal?.throwIfAborted();
    if (this.active >= this.slots) await this.wait(signal, priority);
    else this.active++;
    const started = performance.now();
    try {
      return await task();
    } finally {
      const ms = performance.now() - started;
      this.avgMs = this.avgMs ? this.avgMs * 0.8 + ms * 0.2 : ms;
      this.active--;
      this.pump();
    }
  }

  private wait(signal: AbortSignal | undefined, priority: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        priority,
      };
      const behind = this.queue.findIndex((w) => w.priority < priority);
      if (behind < 0) this.queue.push(waiter);
      else this.queue.splice(behind, 0, waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private pump(): void {
    while (this.active < this.slots && this.queue.length) {
      this.active++;
      this.queue.shift()!.start();
    }
  }
}
