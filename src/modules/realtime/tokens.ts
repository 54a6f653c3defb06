// Token tracker of one real-time session: turns the engine's partial/final events into result frames.
// - Non-final tokens are the engine's current hypothesis of the open utterance; each frame carries all of them
//   (replacing the previous frame's non-final tokens), until they turn final.
// - Final tokens are sent exactly once, in time order.
// - Spacing follows async transcripts: the session's first word bare, every later word " word".
// - `<end>` (endpoint) and `<fin>` (finalize done) are final marker tokens the SDKs turn into events
//   (docs/wire-compat.md, "Real-time STT WebSocket").
// - final_audio_proc_ms and total_audio_proc_ms never decrease, and final <= total.
import type { Token } from '../../engines/stt/interface.js';
import type { SttResultFrame, SttToken } from '../../wire/stt-frames.js';
import type { OriginalLabels, TranslationToken } from '../translation/tokens.js';

/** Wire speaker label of the audio in [startMs, endMs), when diarization is on. */
export type SpeakerOf = (startMs: number, endMs: number) => string | undefined;

export const END_TOKEN = '<end>';
export const FIN_TOKEN = '<fin>';

const round3 = (n: number) => Math.round(n * 1000) / 1000;

export class TokenTracker {
  private finalWords = 0;
  private pendingFinal: SttToken[] = [];
  private nonFinal: Token[] = [];
  private finalMs = 0;
  private totalMs = 0;
  /** Non-final tokens as last sent (to skip frames that would change nothing). */
  private lastSentNonFinal = '';

  constructor(
    private readonly includeNonFinal: boolean,
    /** Language / translation labels of every original token (src/modules/translation). */
    private readonly labels: OriginalLabels = {},
    private readonly speakerOf?: SpeakerOf,
    /** A non-final token is never shown once the audio is this far past its start (max_non_final_tokens_duration_ms). */
    private readonly maxNonFinalMs = Number.POSITIVE_INFINITY,
  ) {}

  private withSpeaker(token: SttToken): SttToken {
    const speaker = this.speakerOf?.(token.start_ms!, token.end_ms!);
    return speaker === undefined ? token : { ...token, speaker };
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
          is_final: true,
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
    for (const t of tokens) this.pendingFinal.push({ ...t, is_final: true });
  }

  /** A marker token (`<end>`, `<fin>`) after the final tokens so far. */
  marker(text: string): void {
    this.pendingFinal.push({ text, confidence: 1, is_final: true });
  }

  /** Everything before `ms` of audio is final (a finalize completed, or the stream ended). */
  finalizedUpTo(ms: number): void {
    this.nonFinal = [];
    this.finalMs = Math.max(this.finalMs, Math.round(ms));
  }

  /** Whether a frame now would tell the client anything new. */
  hasNews(): boolean {
    return this.pendingFinal.length > 0 || (this.includeNonFinal && this.nonFinalKey() !== this.lastSentNonFinal);
  }

  /** Build the next frame; `audioMs` is the audio received by the engine so far. */
  frame(audioMs: number): SttResultFrame {
    const tokens = this.pendingFinal;
    this.pendingFinal = [];
    this.totalMs = Math.max(this.totalMs, Math.round(audioMs), this.finalMs);
    if (this.includeNonFinal) {
      // The session finalizes before the bound (RealtimeSession.writeBounded); a hypothesis that shows up late, already
      // past it, waits out of sight for its final tokens.
      this.nonFinal.forEach((t, i) => {
        if (this.totalMs - t.start_ms > this.maxNonFinalMs) return;
        tokens.push(
          this.withSpeaker({
            text: this.finalWords + i === 0 ? t.text : ` ${t.text}`,
            start_ms: t.start_ms,
            end_ms: t.end_ms,
            confidence: round3(t.confidence),
            is_final: false,
            ...this.labels,
          }),
        );
      });
      this.lastSentNonFinal = this.nonFinalKey();
    }
    // Final audio stops where the non-final hypothesis starts.
    const openFrom = this.nonFinal[0]?.start_ms;
    const final = openFrom === undefined ? this.finalMs : Math.min(this.finalMs, openFrom);
    const reported = Math.max(0, Math.min(final, this.totalMs));
    this.reportedFinal = Math.max(this.reportedFinal, reported);
    return { tokens, final_audio_proc_ms: this.reportedFinal, total_audio_proc_ms: this.totalMs };
  }

  private reportedFinal = 0;

  private nonFinalKey(): string {
    return this.nonFinal.map((t) => `${t.text}@${t.start_ms}-${t.end_ms}`).join(' ');
  }
}
