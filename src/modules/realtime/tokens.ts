// Token tracker of one real-time session: turns the engine's partial/final events into transcript updates
// (live-events.ts), which each protocol renders.
// - Partial words are the engine's current hypothesis of the open utterance; each update carries all of them
//   (replacing the previous update's), until they turn final.
// - Final words are given exactly once, in time order, with the endpoint and finalized marks between them.
// - Spacing follows async transcripts: the session's first word bare, every later word " word".
// - finalAudioMs and totalAudioMs never decrease, and final <= total.
import type { Token } from '../../engines/stt/interface.js';
import type { OriginalLabels, TranslationToken } from '../translation/tokens.js';
import type { FinalItem, TranscriptUpdate, TranscriptWord } from './live-events.js';

/** Wire speaker label of the audio in [startMs, endMs), when diarization is on. */
export type SpeakerOf = (startMs: number, endMs: number) => string | undefined;

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The updates of a multichannel session's trackers (one per channel, in channel order) as one: every channel's new
 * final items and its current partial words, and the audio final (and received) on every channel.
 */
export function mergeUpdates(updates: readonly TranscriptUpdate[]): TranscriptUpdate {
  if (updates.length === 1) return updates[0]!;
  return {
    final: updates.flatMap((u) => u.final),
    partial: updates.flatMap((u) => u.partial),
    finalAudioMs: Math.min(...updates.map((u) => u.finalAudioMs)),
    totalAudioMs: Math.min(...updates.map((u) => u.totalAudioMs)),
  };
}

export class TokenTracker {
  private finalWords = 0;
  private pendingFinal: FinalItem[] = [];
  private nonFinal: Token[] = [];
  private finalMs = 0;
  private totalMs = 0;
  /** Partial words as last given (to skip updates that would change nothing). */
  private lastSentNonFinal = '';

  constructor(
    private readonly includeNonFinal: boolean,
    /** Language / translation labels of every original token (src/modules/translation). */
    private readonly labels: OriginalLabels = {},
    private readonly speakerOf?: SpeakerOf,
    /** A non-final token is never shown once the audio is this far past its start (max_non_final_tokens_duration_ms). */
    private readonly maxNonFinalMs = Number.POSITIVE_INFINITY,
    /** Multichannel sessions: the channel whose words this tracker follows (each channel has a tracker of its own). */
    private readonly channel?: number,
  ) {}

  private withSpeaker(token: TranscriptWord): TranscriptWord {
    const speaker = this.speakerOf?.(token.start_ms!, token.end_ms!);
    return this.withChannel(speaker === undefined ? token : { ...token, speaker });
  }

  private withChannel<T extends object>(item: T): T & { channel?: number } {
    return this.channel === undefined ? item : { ...item, channel: this.channel };
  }

  /** Start of the oldest non-final token, or undefined when there are none. */
  get nonFinalStartMs(): number | undefined {
    return this.nonFinal[0]?.start_ms;
  }

  /** Final words so far (the session's output text tokens, for metering). */
  get finalCount(): number {
    return this.finalWords;
  }

  get finalAudioMs(): number {
    return this.finalMs;
  }

  partial(tokens: Token[]): void {
    this.nonFinal = tokens;
  }

  /**
   * Final tokens of a closed utterance. `labels`: this utterance's (its identified language); `openFrom`: the
   * utterance's finals came late (language identification), so only the hypothesis tokens before it are its own.
   */
  final(tokens: Token[], labels: OriginalLabels = this.labels, openFrom?: number): void {
    for (const t of tokens) {
      this.pendingFinal.push(
        this.withSpeaker({
          text: this.finalWords === 0 ? t.text : ` ${t.text}`,
          start_ms: t.start_ms,
          end_ms: t.end_ms,
          confidence: round3(t.confidence),
          ...labels,
        }),
      );
      this.finalWords++;
      this.finalMs = Math.max(this.finalMs, t.end_ms);
    }
    // The utterance closed: its hypothesis is replaced by the final tokens.
    this.nonFinal = openFrom === undefined ? [] : this.nonFinal.filter((t) => t.start_ms >= openFrom);
  }

  /** Final translation tokens of an utterance whose originals were sent before (no timings, no audio progress). */
  translated(tokens: readonly TranslationToken[]): void {
    for (const t of tokens) this.pendingFinal.push(this.withChannel({ ...t }));
  }

  /** A mark after the final words so far (an endpoint carries the tracker's channel; `finalized` is the session's). */
  mark(mark: 'endpoint' | 'finalized'): void {
    this.pendingFinal.push(mark === 'endpoint' ? this.withChannel({ mark }) : { mark });
  }

  /** Everything before `ms` of audio is final (a finalize completed, or the stream ended). */
  finalizedUpTo(ms: number): void {
    this.nonFinal = [];
    this.finalMs = Math.max(this.finalMs, Math.round(ms));
  }

  /** Whether an update now would tell the client anything new. */
  hasNews(): boolean {
    return this.pendingFinal.length > 0 || (this.includeNonFinal && this.nonFinalKey() !== this.lastSentNonFinal);
  }

  /** The next update; `audioMs` is the audio received by the engine so far. */
  update(audioMs: number): TranscriptUpdate {
    const final = this.pendingFinal;
    this.pendingFinal = [];
    const partial: TranscriptWord[] = [];
    this.totalMs = Math.max(this.totalMs, Math.round(audioMs), this.finalMs);
    if (this.includeNonFinal) {
      // The session finalizes before the bound (RealtimeSession.writeBounded); a hypothesis that shows up late, already
      // past it, waits out of sight for its final tokens.
      this.nonFinal.forEach((t, i) => {
        if (this.totalMs - t.start_ms > this.maxNonFinalMs) return;
        partial.push(
          this.withSpeaker({
            text: this.finalWords + i === 0 ? t.text : ` ${t.text}`,
            start_ms: t.start_ms,
            end_ms: t.end_ms,
            confidence: round3(t.confidence),
            ...this.labels,
          }),
        );
      });
      this.lastSentNonFinal = this.nonFinalKey();
    }
    // Final audio stops where the non-final hypothesis starts.
    const openFrom = this.nonFinal[0]?.start_ms;
    const finalUpTo = openFrom === undefined ? this.finalMs : Math.min(this.finalMs, openFrom);
    const reported = Math.max(0, Math.min(finalUpTo, this.totalMs));
    this.reportedFinal = Math.max(this.reportedFinal, reported);
    return { final, partial, finalAudioMs: this.reportedFinal, totalAudioMs: this.totalMs };
  }

  private reportedFinal = 0;

  private nonFinalKey(): string {
    return this.nonFinal.map((t) => `${t.text}@${t.start_ms}-${t.end_ms}`).join(' ');
  }
}
