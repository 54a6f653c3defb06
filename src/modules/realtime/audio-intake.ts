// Audio intake of one real-time session: client audio into the PCM source, and the PCM source into the diarizer and
// the streaming engine, in order. The intake also keeps the bound on non-final tokens (max_non_final_tokens_duration_ms)
// in audio: it finalizes exactly where the oldest non-final token would outlive it.
// A multichannel session has one lane (diarizer, engine, bound) per channel, fed from a source that keeps the channels
// apart (audio/live-channels.ts); each piece of audio goes to every lane at once, and the next waits for all of them.
import type { Logger } from 'pino';
import type { ChannelPcmSource } from '../../audio/live-channels.js';
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

/** The recognition of one channel (or of the mix) as the intake feeds it. */
export interface IntakeLane {
  readonly engine: StreamingSession;
  readonly diarization?: DiarizationStream;
  /** Start of the oldest non-final token, ms of audio. */
  nonFinalStartMs(): number | undefined;
  /** Everything before `audioMs` is final now: send it (once the finals before it are out). */
  finalizedUpTo(audioMs: number): void | Promise<void>;
  /** Engine audio as it goes in (kept for the language identification of utterances). */
  audio?(pcm: Buffer): void;
}

export interface IntakeHooks {
  closed(): boolean;
  /** The engine took in audio: the client is not idle. */
  touch(): void;
  fail(err: ApiError): void;
  /** Run a finalization with the request_timeout clock stopped. */
  whileFinalizing(step: () => Promise<void>): Promise<void>;
  /** The lanes audio goes to, one per channel (index = channel). */
  lanes(): readonly IntakeLane[];
  /** A multichannel container's header said it has `channels`: open the lanes it lacks before its audio goes in. */
  openLanes?(channels: number): Promise<void>;
}

export class AudioIntake {
  /** Some audio came (keepalives keep the stream open only after that). */
  heardAudio = false;
  /** When the first audio arrived (Date.now()): a client streaming in real time has sent this much audio since. */
  firstAudioAt: number | undefined;
  /** Resolves once the PCM source is drained into the engine (or the intake failed). */
  readonly done: Promise<void>;

  constructor(
    private readonly source: PcmSource | ChannelPcmSource,
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
      for await (const item of this.source.output as AsyncIterable<Buffer | Buffer[] | { mark: () => void }>) {
        if (this.hooks.closed()) return;
        if (!Buffer.isBuffer(item) && !Array.isArray(item)) {
          item.mark();
          continue;
        }
        const channels = Buffer.isBuffer(item) ? [item] : item;
        if (channels.length > this.hooks.lanes().length) await this.hooks.openLanes?.(channels.length);
        if (this.hooks.closed()) return;
        await Promise.all(this.hooks.lanes().map((lane, c) => this.feed(lane, channels[c]!)));
        // The request_timeout clock runs from the audio the engine took in, not from its arrival: a busy server
        // that is still working through a client's audio must not call that client idle.
        this.hooks.touch();
      }
    } catch (err) {
      if (this.hooks.closed()) return;
      if (err instanceof AudioDecodeError) {
        // The client hears what failed in words; the decoder's own message (addresses, paths) is for the log.
        this.log.logger.info({ request_id: this.log.requestId, detail: err.detail }, 'real-time audio could not be decoded');
        this.hooks.fail(new ApiError('invalid_request', `Invalid request: ${err.message}`));
      } else if (err instanceof ApiError)
        this.hooks.fail(err); // a channel's recognizer could not be had (every one busy)
      else this.hooks.fail(new ApiError('internal_error', 'Audio processing failed.', { cause: err }));
    }
  }

  /** One lane's audio: the diarizer sees it before the recognizer, so it has clustered a token's audio by the time it is final. */
  private async feed(lane: IntakeLane, pcm: Buffer): Promise<void> {
    await lane.diarization?.push(pcm);
    lane.audio?.(pcm);
    await this.writeBounded(lane, pcm);
  }

  /**
   * Hand audio to the engine, finalizing exactly where the oldest non-final token would otherwise stay non-final for
   * more than max_non_final_tokens_duration_ms of audio. No audio goes in while that finalization (second pass
   * included) runs, so the bound holds in audio whatever the machine's load.
   */
  private async writeBounded(lane: IntakeLane, pcm: Buffer): Promise<void> {
    const engine = lane.engine;
    let rest = pcm;
    let forcedAt = -1;
    while (rest.length > 0 && !this.hooks.closed()) {
      const start = lane.nonFinalStartMs();
      const roomMs = start === undefined || forcedAt === engine.audioMs ? Infinity : start + this.maxNonFinalMs - engine.audioMs;
      if (roomMs * BYTES_PER_MS >= rest.length) return engine.write(rest);
      const head = Math.max(0, Math.floor(roomMs) * BYTES_PER_MS);
      if (head > 0) await engine.write(rest.subarray(0, head));
      rest = rest.subarray(head);
      forcedAt = engine.audioMs;
      await this.forcedFinalize(lane);
    }
  }

  private forcedFinalize(lane: IntakeLane): Promise<void> {
    const engine = lane.engine;
    // How far the engine's intake is behind a client sending in real time (negative when it sends faster).
    const behindMs = Date.now() - (this.firstAudioAt ?? Date.now()) - engine.audioMs;
    return this.hooks.whileFinalizing(async () => {
      // An engine that can make the settled words final without cutting the utterance does so; the word still forming
      // stays non-final (and is cut next time, should it outlive the bound on its own).
      const settledTo = await engine.settle?.();
      if (this.hooks.closed()) return;
      if (settledTo !== undefined) return lane.finalizedUpTo(settledTo);
      await engine.finalize({ waitMs: Math.max(0, MAX_BEHIND_MS - behindMs) });
      if (this.hooks.closed()) return;
      await lane.finalizedUpTo(engine.audioMs);
    });
  }
}
