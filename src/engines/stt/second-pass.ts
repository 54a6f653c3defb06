// Two-pass finals for live sessions, whatever the engines. The streaming decoder (pocketsphinx's, or a streaming
// sherpa-onnx model) gives the partial results while audio arrives; when an utterance closes, its audio is decoded
// again by a file decoder (pocketsphinx's batch pool at file settings, or an offline sherpa-onnx model such as
// Whisper or Parakeet) ahead of file work, and those words become the final tokens, so a live transcript reads like
// the async one of the same audio. The file decoder is a SecondPassDecoder (pocketsphinx/second-pass.ts,
// sherpa/second-pass.ts).
//
// - At a pause the second pass starts as soon as the speech gate begins holding audio back ('hold', 300 ms into the
//   pause), so it is usually done when the endpoint is decided (600 ms); if speech resumes, that decoding is dropped.
//   Finalize, the maximum utterance length, the end of the stream and engines without a gate start it when the
//   streaming final arrives.
// - Budget: at most `budgetMs` of live audio waits for or is in a second pass at once (all sessions of the model),
//   and an utterance is decoded again only if, at the pace of recent second passes, it would be done within twice
//   `waitMs` behind the audio already queued (its wait starts at the streaming final, later than now, so the
//   margin). Otherwise it keeps the streaming decoder's words at once (counted as
//   skipped), so a saturated machine degrades to one-pass finals instead of delaying them. A second pass not done
//   `waitMs` after the streaming final is abandoned the same way (counted as late).
import { performance } from 'node:perf_hooks';
import type { SecondPassReport, Token } from './interface.js';

const SAMPLES_PER_MS = 16;

/**
 * A file decoder that second passes run on, ahead of file work. `B` is what biases it toward a session's context
 * (pocketsphinx: its compiled decoder bias; sherpa-onnx: the context itself).
 */
export interface SecondPassDecoder<B> {
  /** Decoders working in parallel (the audio queued ahead of a second pass is shared among them). */
  readonly size: number;
  /** Decode `samples`, which start at sample `startSample` of the stream: tokens on the stream's clock. */
  decode(startSample: number, samples: Int16Array, bias?: B): { tokens: Promise<Token[]>; cancel(): void };
}

export interface SecondPassOptions {
  /** Most live audio waiting for or in a second pass at once, per model, ms. */
  budgetMs: number;
  /** Longest wait for a second pass after the streaming decoder's final, ms. */
  waitMs: number;
  /**
   * Only utterances that open within a session's first `coveredMs` of decoded audio are decoded again; later ones keep
   * the streaming decoder's words, uncounted (default: all).
   */
  coveredMs?: number;
}

const emptyStats = (): SecondPassReport => ({ decoded: 0, early: 0, skipped: 0, late: 0, failed: 0 });

/** What every live session using one file decoder shares: the budget and the totals. */
export class SecondPassPool<B = unknown> {
  private pendingMs = 0;
  /** Wall ms per audio ms of recent second passes, the audio queued ahead of each counted (EWMA); 0 until one ends. */
  private pace = 0;
  readonly totals = emptyStats();

  constructor(
    private readonly decoder: SecondPassDecoder<B>,
    readonly options: SecondPassOptions,
  ) {}

  /** Live audio waiting for or in a second pass now, ms. */
  get pendingAudioMs(): number {
    return this.pendingMs;
  }

  /** Decode `samples` (starting at sample `startSample` of the stream) as a file segment; undefined over budget. */
  decode(startSample: number, samples: Int16Array, bias?: B): Job | undefined {
    const ms = samples.length / SAMPLES_PER_MS;
    // Read before submitting: a free batch worker takes the samples at once (their buffer is transferred, and empty here).
    const end = startSample + samples.length;
    if (this.pendingMs + ms > this.options.budgetMs) return undefined;
    // Audio ahead of it is shared by the workers; with none ahead it always runs (and keeps the pace current).
    const work = this.pendingMs / this.decoder.size + ms;
    if (this.pendingMs > 0 && this.pace * work > 2 * this.options.waitMs) return undefined;
    this.pendingMs += ms;
    const started = performance.now();
    let job: ReturnType<SecondPassDecoder<B>['decode']>;
    try {
      job = this.decoder.decode(startSample, samples, bias);
    } catch (err) {
      job = { tokens: Promise.reject(err instanceof Error ? err : new Error(String(err))), cancel: () => {} };
    }
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      this.pendingMs -= ms;
    };
    const tokens = (async () => {
      try {
        const out = await job.tokens;
        const pace = (performance.now() - started) / work;
        this.pace = this.pace ? 0.7 * this.pace + 0.3 * pace : pace;
        return out;
      } finally {
        settle();
      }
    })();
    tokens.catch(() => {}); // observed by whoever waits for it; a cancelled job has nobody
    return {
      end,
      tokens,
      cancel: () => {
        job.cancel();
        settle();
      },
    };
  }

  count(stats: SecondPassReport, outcome: keyof SecondPassReport): void {
    stats[outcome]++;
    this.totals[outcome]++;
  }
}

interface Job {
  /** End of the decoded audio (sample index). */
  end: number;
  tokens: Promise<Token[]>;
  cancel(): void;
}

interface Utterance {
  start: number;
  pieces: Int16Array[];
  samples: number;
}

/** A promise that settles with 'late' when resolve() is called. */
function signal(): { promise: Promise<'late'>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<'late'>((r) => (resolve = () => r('late')));
  return { promise, resolve };
}

/** One live session's second passes: the audio of its utterances, matched to the streaming decoder's finals. */
export class SecondPass<B = unknown> {
  readonly stats = emptyStats();
  private current: Utterance | undefined;
  /** Audio handed to the streaming decoder so far, samples. */
  private heard = 0;
  /** A second pass started at a pause, before the endpoint. */
  private speculative: Job | undefined;
  /** Closed utterances whose streaming final has not arrived yet (one that was silence never gets one). */
  private closed: { start: number; end: number; audio: Int16Array; job?: Job }[] = [];
  /** Settles every wait for a second pass at once (hurry()); replaced after each use. */
  private hurried = signal();

  constructor(
    private readonly pool: SecondPassPool<B>,
    /** The session's context bias: its second passes decode with it too. */
    private readonly bias?: B,
  ) {}

  /** Audio handed to the streaming decoder (contiguous within an utterance; the first piece opens one). */
  audio(startSample: number, samples: Int16Array): void {
    if (this.speculative) {
      // Speech resumed within the pause: the utterance goes on, and so must its decoding.
      this.speculative.cancel();
      this.speculative = undefined;
    }
    const opens = !this.current;
    this.heard += samples.length;
    if (opens && this.heard - samples.length >= (this.pool.options.coveredMs ?? Infinity) * SAMPLES_PER_MS) return;
    this.current ??= { start: startSample, pieces: [], samples: 0 };
    this.current.pieces.push(samples);
    this.current.samples += samples.length;
  }

  /** The gate is holding a pause back: the utterance probably ends at `sample`; start decoding it. */
  hold(sample: number): void {
    const u = this.current;
    if (!u || this.speculative || u.start + u.samples !== sample) return;
    this.speculative = this.pool.decode(u.start, this.join(u), this.bias);
  }

  /** The open utterance closed (endpoint, maximum length, finalize or end of stream). */
  close(): void {
    const u = this.current;
    this.current = undefined;
    const job = this.speculative;
    this.speculative = undefined;
    if (!u) return job?.cancel();
    const end = u.start + u.samples;
    if (job && job.end !== end) job.cancel();
    this.closed.push({ start: u.start, end, audio: this.join(u), job: job?.end === end ? job : undefined });
  }

  /** The final tokens of the streaming decoder's utterance `span`: resolves with the tokens to send in their place. */
  async finalTokens(streamTokens: Token[], span: { startSample: number }): Promise<Token[]> {
    // Utterances before this one had no final (silence): their decoding is not needed.
    while (this.closed.length && this.closed[0]!.start < span.startSample) this.closed.shift()!.job?.cancel();
    const u = this.closed[0]?.start === span.startSample ? this.closed.shift()! : undefined;
    if (!u) return streamTokens;
    const job = u.job ?? this.pool.decode(u.start, u.audio, this.bias);
    if (!job) {
      this.pool.count(this.stats, 'skipped');
      return streamTokens;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.pool.options.waitMs)));
    try {
      const outcome = await Promise.race([job.tokens, late, this.hurried.promise]);
      if (outcome === 'late') {
        job.cancel();
        this.pool.count(this.stats, 'late');
        return streamTokens;
      }
      this.pool.count(this.stats, 'decoded');
      if (u.job) this.pool.count(this.stats, 'early');
      return outcome;
    } catch {
      this.pool.count(this.stats, 'failed');
      return streamTokens;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * For engines without a speech gate (the streaming decoder decides the utterances): close the open utterance, whose
   * streaming final is `streamTokens`, and resolve with the tokens to send in their place. Empty `streamTokens`: the
   * utterance had no words, and is dropped.
   */
  closeWithFinal(streamTokens: Token[]): Promise<Token[]> {
    const start = this.current?.start;
    this.close();
    if (start === undefined || streamTokens.length === 0) {
      this.dropUnanswered();
      return Promise.resolve(streamTokens);
    }
    return this.finalTokens(streamTokens, { startSample: start });
  }

  /** Stop waiting: every utterance whose second pass is not done now keeps the streaming decoder's words (late). */
  hurry(): void {
    this.hurried.resolve();
    this.hurried = signal();
  }

  /** The streaming decoder sent the finals of every closed utterance: those left had none (silence). */
  dropUnanswered(): void {
    for (const u of this.closed.splice(0)) u.job?.cancel();
  }

  /** Drop everything: the session was aborted. */
  clear(): void {
    this.speculative?.cancel();
    this.speculative = undefined;
    for (const u of this.closed) u.job?.cancel();
    this.closed = [];
    this.current = undefined;
  }

  private join(u: Utterance): Int16Array {
    if (u.pieces.length === 1) return u.pieces[0]!.slice();
    const out = new Int16Array(u.samples);
    let at = 0;
    for (const p of u.pieces) {
      out.set(p, at);
      at += p.length;
    }
    u.pieces = [out];
    return out.slice();
  }
}
