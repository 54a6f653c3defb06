// Two-pass finals for live sessions. The streaming decoder (live cepstral mean, pruned for speed) gives the partial
// results while audio arrives; when an utterance closes, its audio is decoded again the way a file segment is (mean
// over the whole utterance, the file decoders' settings, on the batch pool ahead of file work), and those words
// become the final tokens, so a live transcript reads like the async one of the same audio.
//
// - At a pause the second pass starts as soon as the speech gate begins holding audio back ('hold', 300 ms into the
//   pause), so it is usually done when the endpoint is decided (600 ms); if speech resumes, that decoding is dropped.
//   Finalize, the maximum utterance length and the end of the stream start it when the streaming final arrives.
// - Budget: at most `budgetMs` of live audio waits for or is in a second pass at once (all sessions of the model),
//   and an utterance is decoded again only if, at the pace of recent second passes, it would be done within twice
//   `waitMs` behind the audio already queued (its wait starts at the streaming final, later than now, so the
//   margin). Otherwise it keeps the streaming decoder's words at once (counted as
//   skipped), so a saturated machine degrades to one-pass finals instead of delaying them. A second pass not done
//   `waitMs` after the streaming final is abandoned the same way (counted as late).
import { performance } from 'node:perf_hooks';
import type { SecondPassReport, Token } from '../interface.js';
import type { BatchPool } from './batch-pool.js';
import type { UtteranceSpan } from './stream-pool.js';
import type { DecoderBias } from './messages.js';

const SAMPLES_PER_MS = 16;
/** Scheduling priority of second passes in the batch pool (files: 0). */
const LIVE_PRIORITY = 1;

export interface SecondPassOptions {
  /** Most live audio waiting for or in a second pass at once, per model, ms. */
  budgetMs: number;
  /** Longest wait for a second pass after the streaming decoder's final, ms. */
  waitMs: number;
}

const emptyStats = (): SecondPassReport => ({ decoded: 0, early: 0, skipped: 0, late: 0, failed: 0 });

/** What every live session of one model shares: the budget and the totals. */
export class SecondPassPool {
  private pendingMs = 0;
  /** Wall ms per audio ms of recent second passes, the audio queued ahead of each counted (EWMA); 0 until one ends. */
  private pace = 0;
  readonly totals = emptyStats();

  constructor(
    private readonly batch: BatchPool,
    readonly options: SecondPassOptions,
  ) {}

  /** Live audio waiting for or in a second pass now, ms. */
  get pendingAudioMs(): number {
    return this.pendingMs;
  }

  /** Decode `samples` (starting at sample `startSample` of the stream) as a file segment; undefined over budget. */
  decode(startSample: number, samples: Int16Array, bias?: DecoderBias): Job | undefined {
    const ms = samples.length / SAMPLES_PER_MS;
    // Read before submitting: a free batch worker takes the samples at once (their buffer is transferred, and empty here).
    const end = startSample + samples.length;
    if (this.pendingMs + ms > this.options.budgetMs) return undefined;
    // Audio ahead of it is shared by the workers; with none ahead it always runs (and keeps the pace current).
    const work = this.pendingMs / this.batch.size + ms;
    if (this.pendingMs > 0 && this.pace * work > 2 * this.options.waitMs) return undefined;
    this.pendingMs += ms;
    const request = this.batch.open({ priority: LIVE_PRIORITY, bias });
    const started = performance.now();
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      this.pendingMs -= ms;
    };
    const tokens = (async () => {
      try {
        await request.submit({ startSample, samples, speechMs: ms });
        const out = await request.finish();
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
        request.cancel();
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
export class SecondPass {
  readonly stats = emptyStats();
  private current: Utterance | undefined;
  /** A second pass started at a pause, before the endpoint. */
  private speculative: Job | undefined;
  /** Closed utterances whose streaming final has not arrived yet (one that was silence never gets one). */
  private closed: { start: number; end: number; audio: Int16Array; job?: Job }[] = [];
  /** Settles every wait for a second pass at once (hurry()); replaced after each use. */
  private hurried = signal();

  constructor(
    private readonly pool: SecondPassPool,
    /** The session's context bias: its second passes decode with it too. */
    private readonly bias?: DecoderBias,
  ) {}

  /** Audio handed to the streaming decoder (contiguous within an utterance; the first piece opens one). */
  audio(startSample: number, samples: Int16Array): void {
    if (this.speculative) {
      // Speech resumed within the pause: the utterance goes on, and so must its decoding.
      this.speculative.cancel();
      this.speculative = undefined;
    }
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
  async finalTokens(streamTokens: Token[], span: UtteranceSpan): Promise<Token[]> {
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
