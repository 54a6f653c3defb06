// One live session of the pocketsphinx engine: audio through the speech gate to a dedicated decoder of the stream
// pool (stream-pool.ts), its final tokens through the second pass when there is one (two-pass-finals.ts).
import type { FinalInfo, SecondPassReport, StreamEvents, StreamingSession, Token } from '../interface.js';
import type { SecondPass } from '../second-pass.js';
import type { GateEvent, SpeechGate } from '../speech-gate.js';
import { ListenedStream } from '../stream-listeners.js';
import { TwoPassFinals } from '../two-pass-finals.js';
import type { Bias } from './bias.js';
import type { SessionChannel, UtteranceSpan } from './stream-pool.js';

export class PocketsphinxStream extends ListenedStream implements StreamingSession {
  private channel!: SessionChannel;
  private isClosed = false;
  private failure: Error | undefined;
  /** Writes, finalize and end run one after another: the gate's state is what each of them acts on. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly finals: TwoPassFinals;
  /**
   * Utterances the gate cut at a short pause, by end sample: whether that pause was an endpoint, known once speech
   * resumes or the pause reaches the endpoint delay. Their finals wait for it (in turn with the others).
   */
  private readonly cutEndpoints = new Map<number, Promise<boolean>>();
  /** Decides the pause after the latest cut (undefined: none undecided). */
  private decideCut: ((endpoint: boolean) => void) | undefined;

  constructor(
    private readonly gate: SpeechGate,
    private readonly second: SecondPass<never> | SecondPass<unknown> | undefined,
    /** The session's context: recognised terms are written as given. */
    private readonly bias?: Bias,
  ) {
    super();
    this.finals = new TwoPassFinals(second, {
      partial: (t) => this.emit('partial', t),
      final: (t, info) => this.emit('final', t, info),
      failed: () => this.failure !== undefined,
    });
  }

  /** How this session's utterances got their final tokens (undefined without a second pass). */
  get secondPass(): SecondPassReport | undefined {
    return this.second?.stats;
  }

  /** @internal the streaming decoder's hypothesis of the open utterance */
  decoderPartial(tokens: Token[]): void {
    this.finals.partial(tokens);
  }

  /** @internal words of the open utterance turned final before it ends (no second pass decodes it) */
  decoderSettled(tokens: Token[]): void {
    this.finals.final(tokens, { endpoint: false }, undefined);
  }

  /** @internal the streaming decoder closed an utterance */
  decoderFinal(tokens: Token[], info: FinalInfo & UtteranceSpan): void {
    const cut = this.cutEndpoints.get(info.endSample);
    // Cuts that gave no final tokens (silence) are forgotten with the first final after them.
    for (const sample of this.cutEndpoints.keys()) if (sample <= info.endSample) this.cutEndpoints.delete(sample);
    const decided = cut ? cut.then((endpoint) => ({ endpoint })) : { endpoint: info.endpoint };
    this.finals.final(tokens, decided, tokens.length ? this.second?.finalTokens(tokens, info) : undefined);
  }

  /** @internal */
  attach(channel: SessionChannel): void {
    this.channel = channel;
  }

  /** Audio received, ms. */
  get audioMs(): number {
    return Math.round(this.gate.samples / 16);
  }

  /** Audio handed to the decoder (speech and the pause around it), ms. */
  get decodedMs(): number {
    return Math.round(this.gate.stats.decodedSamples / 16);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** @internal */
  emit<E extends keyof StreamEvents>(event: E, ...args: Parameters<StreamEvents[E]>): void {
    if (event === 'error') {
      this.isClosed = true;
      this.failure = args[0] as Error;
    } else if (this.bias) args[0] = this.bias.casing.apply(args[0] as Token[]) as Parameters<StreamEvents[E]>[0];
    this.listeners.emit(event, ...args);
  }

  write(pcm: Uint8Array): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    return this.serial(async () => this.apply(await this.gate.push(pcm)));
  }

  finalize(options: { waitMs?: number } = {}): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    return this.serial(async () => {
      this.gate.finalize();
      this.closeCutWith(false);
      this.second?.close();
      await this.channel.finalize();
      this.second?.dropUnanswered();
      // Second passes not done within waitMs give way to the streaming decoder's words.
      await this.finals.settle(options.waitMs);
    });
  }

  /** Resolves once the last final tokens were emitted; rejects if the session failed. Idempotent. */
  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.isClosed) return;
    this.isClosed = true;
    await this.serial(async () => {
      await this.apply(await this.gate.flush());
      this.closeCutWith(false);
      this.second?.close();
      await this.channel.end();
      this.second?.dropUnanswered();
      await this.finals.settle();
    });
  }

  abort(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeCutWith(false);
    this.second?.clear();
    this.channel.cancel();
  }

  /** Decide the pause after the latest cut: at an endpoint, or not (speech resumed, a finalize, the end of audio). */
  private closeCutWith(endpoint: boolean): void {
    this.decideCut?.(endpoint);
    this.decideCut = undefined;
  }

  private async apply(events: GateEvent[]): Promise<void> {
    for (const event of events) {
      if (event.type === 'audio') {
        this.second?.audio(event.startSample, event.samples);
        await this.channel.write(event.startSample, event.samples);
      } else if (event.type === 'hold') this.second?.hold(event.sample);
      else if (event.type === 'after_cut') this.closeCutWith(event.endpoint);
      else {
        if (event.reason === 'cut') this.cutEndpoints.set(event.sample, new Promise<boolean>((resolve) => (this.decideCut = resolve)));
        this.second?.close();
        this.channel.endUtterance(event.sample, event.reason);
      }
    }
  }

  private serial(op: () => Promise<void>): Promise<void> {
    const run = this.queue.then(() => {
      if (this.failure) throw this.failure;
      return op();
    });
    this.queue = run.catch(() => {});
    return run;
  }
}
