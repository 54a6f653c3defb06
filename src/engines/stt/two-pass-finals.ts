// A live session's results when its final tokens come from a second pass (second-pass.ts): finals go out once each,
// in utterance order, as their second passes end, while the partial results show everything not final yet (the
// utterances in their second pass, with the streaming decoder's words, then the open utterance). Shared by the
// engines' streaming sessions.
import type { FinalInfo, Token } from './interface.js';
import type { SecondPass } from './second-pass.js';

export interface TwoPassOutput {
  partial(tokens: Token[]): void;
  final(tokens: Token[], info: FinalInfo): void;
  /** The session failed: finals still in their second pass are not sent. */
  failed(): boolean;
}

export class TwoPassFinals {
  /** Closed utterances waiting for their second pass: the streaming decoder's words, shown as non-final meanwhile. */
  private readonly provisional: Token[][] = [];
  /** The streaming decoder's hypothesis of the open utterance. */
  private openPartial: Token[] = [];
  /** Final tokens go out in utterance order, each once its second pass is done. */
  private chain: Promise<void> = Promise.resolve();
  /** The last final tokens out had words and no endpoint after them (a cut utterance, a maximum length). */
  private wordsBeforeEndpoint = false;

  constructor(
    /** Undefined: no second pass, the streaming decoder's finals are sent as they come. */
    readonly second: SecondPass<never> | SecondPass<unknown> | undefined,
    private readonly out: TwoPassOutput,
  ) {}

  /** The streaming decoder's hypothesis of the open utterance. */
  partial(tokens: Token[]): void {
    this.openPartial = tokens;
    this.emitPartial();
  }

  /**
   * The streaming decoder closed an utterance with `tokens`; `accurate` resolves with the tokens to send instead.
   * `info` may be decided later (a cut utterance's endpoint): its finals, and the ones after them, wait for it.
   */
  final(tokens: Token[], info: FinalInfo | Promise<FinalInfo>, accurate: Promise<Token[]> | undefined): void {
    this.openPartial = [];
    // Behind utterances still on the chain, a final that could go out at once waits its turn.
    if (!accurate && !(info instanceof Promise) && !this.provisional.length) return this.emit(tokens, info);
    this.provisional.push(tokens);
    this.emitPartial();
    this.chain = this.chain.then(async () => {
      const [out, decided] = await Promise.all([accurate ?? tokens, info]);
      this.provisional.shift();
      if (this.out.failed()) return;
      this.emit(out, decided);
      this.emitPartial();
    });
  }

  /** Final tokens out; an utterance without words only as the endpoint of words that had none yet. */
  private emit(tokens: Token[], info: FinalInfo): void {
    if (!tokens.length && !(info.endpoint && this.wordsBeforeEndpoint)) return;
    this.wordsBeforeEndpoint = tokens.length > 0 && !info.endpoint;
    this.out.final(tokens, info);
  }

  /**
   * Resolves once every final decided so far is out. `waitMs`: second passes not done by then give way to the
   * streaming decoder's words (undefined: each waits as long as the pool allows).
   */
  async settle(waitMs?: number): Promise<void> {
    await this.settled(waitMs);
    // A finalization (or the end) closed the words so far: no endpoint of theirs follows.
    this.wordsBeforeEndpoint = false;
  }

  private async settled(waitMs: number | undefined): Promise<void> {
    const second = this.second;
    if (!second || waitMs === undefined) return this.chain;
    if (waitMs <= 0) second.hurry();
    const timer = waitMs > 0 ? setTimeout(() => second.hurry(), waitMs) : undefined;
    try {
      await this.chain;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Everything not final yet: utterances in their second pass, then the open one. */
  private emitPartial(): void {
    const tokens = this.provisional.length ? [...this.provisional.flat(), ...this.openPartial] : this.openPartial;
    if (tokens.length) this.out.partial(tokens);
  }
}
