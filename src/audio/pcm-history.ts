// Recent 16-bit samples of a stream, held in the chunks they came in: a span is cut out by sample index (counted from
// the stream's start) and older audio is dropped, so a holder keeps only what it still needs.
export class PcmHistory {
  private chunks: Int16Array[] = [];
  /** Index of the first sample still held. */
  start = 0;
  /** Index after the last sample received. */
  end = 0;

  push(samples: Int16Array): void {
    this.chunks.push(samples);
    this.end += samples.length;
  }

  /** Samples [from, to), copied; what is no longer (or not yet) held is left zero. */
  slice(from: number, to: number): Int16Array {
    const out = new Int16Array(Math.max(0, to - from));
    let at = this.start;
    for (const c of this.chunks) {
      const lo = Math.max(from, at);
      const hi = Math.min(to, at + c.length);
      if (hi > lo) out.set(c.subarray(lo - at, hi - at), lo - from);
      at += c.length;
      if (at >= to) break;
    }
    return out;
  }

  /** Forget the samples before index `upTo`. */
  drop(upTo: number): void {
    while (this.chunks.length && this.start + this.chunks[0]!.length <= upTo) this.start += this.chunks.shift()!.length;
    if (this.chunks.length && upTo > this.start) {
      this.chunks[0] = this.chunks[0]!.subarray(upTo - this.start);
      this.start = upTo;
    }
  }
}
