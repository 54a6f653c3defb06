// Live sessions of one surface (real-time STT sessions, TTS connections), so a graceful shutdown can let them finish
// and know when the last one is gone.

/** A surface with live sessions that a graceful shutdown lets finish. */
export interface LiveSurface {
  /** Refuse new sessions and let the live ones finish; resolves once none is left. */
  drain(): Promise<void>;
  /** The drain time ran out: end every session still live now, with the surface's error frame. */
  abortAll(): void;
}

/** A set that tells when it becomes empty. */
export class LiveSet<T> implements Iterable<T> {
  private readonly items = new Set<T>();
  private waiters: (() => void)[] = [];

  add(item: T): void {
    this.items.add(item);
  }

  delete(item: T): void {
    this.items.delete(item);
    if (this.items.size === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  get size(): number {
    return this.items.size;
  }

  /** Resolves once the set is empty (at once if it is). */
  empty(): Promise<void> {
    if (this.items.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  [Symbol.iterator](): Iterator<T> {
    // A copy: ending a session removes it from the set while the caller iterates.
    return [...this.items][Symbol.iterator]();
  }
}
