// The contract of a live PCM source (client audio bytes in, 16 kHz mono s16le out) and the pieces every
// implementation shares: the error for undecodable audio (decode.ts's, as for files) and the ordered output queue.
import { AudioDecodeError } from './decode.js';

export { AudioDecodeError };

/** A marker in a source's output: resolves once the consumer reached it. */
export interface Mark {
  mark: () => void;
}

/** Converted PCM, or a marker that resolves once the consumer reached it. */
export type PcmItem = Buffer | Mark;

export interface PcmSource {
  /** Client audio bytes. */
  write(bytes: Uint8Array): void;
  /** No more audio: the output ends once everything was converted. */
  end(): void;
  /** Stop at once (client gone, session failed). */
  abort(): void;
  /** Resolves when the audio written so far has been consumed from `output`. */
  mark(): Promise<void>;
  /** Converted PCM and markers, in order; rejects with AudioDecodeError when the audio cannot be decoded. */
  readonly output: AsyncIterable<PcmItem>;
  /** Bytes accepted but not yet consumed (for flow control). */
  readonly backlogBytes: number;
}

/** Unbounded async queue with a size hint (for pausing the producer). */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  constructor(private readonly onShift?: () => void) {}

  get length(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: Error): void {
    if (this.ended) return;
    this.failure = err;
    this.ended = true;
    this.items = [];
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length) {
        const item = this.items.shift()!;
        this.onShift?.();
        yield item;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((r) => (this.waiter = r));
    }
  }
}
