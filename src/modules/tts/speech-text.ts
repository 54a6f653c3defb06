// The text of one synthesis as speak() takes it from the TTS service: a request's whole text, checked at once
// (checkTtsText in request-config.ts), or a stream's text as the client sends it, capped as it arrives. Each counts
// the characters its usage is metered for.
import type { SpeechSource } from '../../engines/tts/ssml/source.js';
import { invalidField } from '../../wire/api-error.js';

export interface SpeechText {
  /** What the engine reads: plain text, or an SSML document (ssml-text.ts). */
  readonly source: SpeechSource;
  /** Characters received: what the usage record counts. */
  characters(): number;
}

/** A request's whole text, already checked. */
export function wholeText(text: string): SpeechText {
  return { source: text, characters: () => text.length };
}

/** A stream's text, pulled by the engine as it synthesizes. More than `maxChars` in all is refused. */
export class LiveText implements SpeechText {
  readonly source: AsyncIterable<string> = { [Symbol.asyncIterator]: () => this.read() };
  private items: string[] = [];
  private ended = false;
  private wake: (() => void) | undefined;
  private received = 0;

  constructor(private readonly maxChars: number) {}

  characters(): number {
    return this.received;
  }

  /** Text from the client. Text over the cap is refused, and still counted: it was sent. */
  push(text: string): void {
    this.received += text.length;
    if (this.received > this.maxChars)
      throw invalidField('text', `must NOT have more than ${this.maxChars} characters over the whole stream`, 'invalid_length');
    if (text) this.items.push(text);
    this.wake?.();
  }

  /** No more text: the engine speaks what it has, then ends. */
  end(): void {
    this.ended = true;
    this.wake?.();
  }

  private async *read(): AsyncGenerator<string> {
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
