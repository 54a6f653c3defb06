// The text of one TTS stream as the client sends it, pulled by the engine as it synthesizes.

export class TextQueue implements AsyncIterable<string> {
  private items: string[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(text: string): void {
    if (text) this.items.push(text);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}
