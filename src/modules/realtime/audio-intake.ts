// Audio intake of one real-time session: client audio into the PCM source, and the PCM source into the diarizer and
// the streaming engine, in order. The intake also keeps the bound on non-final tokens (max_non_final_tokens_duration_ms)
// in audio: it finalizes exactly where the oldest non-final token would outlive it.
import type { Logger } from 'pino';
import { AudioDecodeError, type PcmSource } from '../../audio/live-pcm.js';
import type { DiarizationStream } from '../../engines/diarization/interface.js';
import { STT_SAMPLE_RATE, type StreamingSession } from '../../engines/stt/interface.js';
import { ApiError } from '../../wire/api-error.js';

/** Bytes of engine audio (s16le mono) per millisecond. */
const BYTES_PER_MS = (STT_SAMPLE_RATE / 1000) * 2;
/**
 * A finalization forced by max_non_final_tokens_duration_ms stops the intake until its final tokens are out. It
 * waits for the accurate second pass only while the session is less than this far behind real time; past that the
 * streaming decoder's words become final, so a busy machine costs accuracy, not a live stream falling behind.
 */
const MAX_BEHIND_MS = 1000;

export interface IntakeHooks {
  closed(): boolean;
  /** The engine took in audio: the client is not idle. */
  touch(): void;
  fail(err: ApiError): void;
  /** Start of the oldest non-final token, ms of audio. */
  nonFinalStartMs(): number | undefined;
  /** Run a finalization with the request_timeout clock stopped. */
  whileFinalizing(step: () => Promise<void>): Promise<void>;
  /** Everything before `audioMs` is final now: send it (once the finals before it are out). */
  finalizedUpTo(audioMs: number): void | Promise<void>;
  /** Engine audio as it goes in (kept for the language identification of utterances). */
  audio?(pcm: Buffer): void;
}

export class AudioIntake {
  /** Some audio came (keepalives keep the stream open only after that). */
  heardAudio = false;
  /** When the first audio arrived (Date.now()): a client streaming in real time has sent this much audio since. */
  firstAudioAt: number | undefined;
  /** Resolves once the PCM source is drained into the engine (or the intake failed). */
  readonly done: Promise<void>;

  constructor(
    private readonly source: PcmSource,
    private readonly engine: StreamingSession,
    private readonly diarization: DiarizationStream | undefined,
    private readonly maxNonFinalMs: number,
    private readonly hooks: IntakeHooks,
    private readonly log: { logger: Logger; requestId: string },
  ) {
    this.done = this.pump();
  }

  /** Client audio (possibly none: a text frame of whitespace). */
  write(bytes: Uint8Array): void {
    if (!bytes.length) return;
    this.heardAudio = true;
    this.firstAudioAt ??= Date.now();
    this.source.write(bytes);
  }

  /** Feed the engine from the PCM source, in order; markers resolve once the audio before them was written. */
  private async pump(): Promise<void> {
    try {
      for await (const item of this.source.output) {
        if (this.hooks.closed()) return;
        if (Buffer.isBuffer(item)) {
          // The diarizer sees audio before the recognizer, so it has clustered a token's audio by the time it is final.
          await this.diarization?.push(item);
          this.hooks.audio?.(item);
          await this.writeBounded(item);
          // The request_timeout clock runs from the audio the engine took in, not from its arrival: a busy server
          // that is still working through a client's audio must not call that client idle.
          this.hooks.touch();
        } else item.mark();
      }
    } catch (err) {
      if (this.hooks.closed()) return;
      if (err instanceof AudioDecodeError) {
        // The client hears what failed in words; the decoder's own message (addresses, paths) is for the log.
        this.log.logger.info({ request_id: this.log.requestId, detail: err.detail }, 'real-time audio could not be decoded');
        this.hooks.fail(new ApiError('invalid_request', `Invalid request: ${err.message}`));
      } else this.hooks.fail(new ApiError('internal_error', 'Audio processing failed.', { cause: err }));
    }
  }

  /**
   * Hand audio to the engine, finalizing exactly where the oldest non-final token would otherwise stay non-final for
   * more than max_non_final_tokens_duration_ms of audio. No audio goes in while that finalization (second pass
   * included) runs, so the bound holds in audio whatever the machine's load.
   */
  private async writeBounded(pcm: Buffer): Promise<void> {
    const engine = this.engine;
    let rest = pcm;
    let forcedAt = -1;
    while (rest.length > 0 && !this.hooks.closed()) {
      const start = this.hooks.nonFinalStartMs();
      const roomMs = start === undefined || forcedAt === engine.audioMs ? Infinity : start + this.maxNonFinalMs - engine.audioMs;
      if (roomMs * BYTES_PER_MS >= rest.length) return engine.write(rest);
      const head = Math.max(0, Math.floor(roomMs) * BYTES_PER_MS);
      if (head > 0) await engine.write(rest.subarray(0, head));
      rest = rest.subarray(head);
      forcedAt = engine.audioMs;
      await this.forcedFinalize();
    }
  }

  private forcedFinalize(): Promise<void> {
    const engine = this.engine;
    // How far the engine's intake is behind a client sending in real time (negative when it sends faster).
    const behindMs = Date.now() - (this.firstAudioAt ?? Date.now()) - engine.audioMs;
    return this.hooks.whileFinalizing(async () => {
      // An engine that can make the settled words final without cutting the utterance does so; the word still forming
      // stays non-final (and is cut next time, should it outlive the bound on its own).
      const settledTo = await engine.settle?.();
      if (this.hooks.closed()) return;
      if (settledTo !== undefined) return this.hooks.finalizedUpTo(settledTo);
      await engine.finalize({ waitMs: Math.max(0, MAX_BEHIND_MS - behindMs) });
      if (this.hooks.closed()) return;
      await this.hooks.finalizedUpTo(engine.audioMs);
    });
  }
}
