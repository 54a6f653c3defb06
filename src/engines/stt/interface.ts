// Speech-to-text engine contract. The API layer (async transcriptions, real-time sessions) talks only to these
// types; an engine (pocketsphinx today, sherpa-onnx models later) implements them behind the registry.
//
// Audio in: 16 kHz, mono, signed 16-bit little-endian PCM (what src/audio/decode.ts produces). Chunks may have
// any length, including an odd number of bytes: implementations carry the split sample over.
// Times out: integer milliseconds from the first sample the recognizer was given.

/** Sample rate every recognizer consumes. */
export const STT_SAMPLE_RATE = 16_000;

/** One recognised word. `text` is the bare word (no surrounding spaces); the API layer decides spacing. */
export interface Token {
  text: string;
  /** Inclusive start, ms from the beginning of the audio. */
  start_ms: number;
  /** Exclusive end, ms from the beginning of the audio; always > start_ms. */
  end_ms: number;
  /**
   * Confidence in [0, 1]. For final tokens this is the engine's word posterior. Non-final (partial) tokens carry
   * a provisional value (engines may not have a posterior before the utterance ends; pocketsphinx reports 1).
   */
  confidence: number;
}

/** What an engine or model can do; the API layer rejects requests for features a model lacks. */
export interface SttFeatures {
  /** Per-token start/end times. */
  timestamps: boolean;
  /** Per-token confidence that means something (a posterior, not a constant). */
  confidence: boolean;
  /** `Recognizer.stream()` gives partial results while audio arrives. */
  streaming: boolean;
  /** Speaker labels on tokens. */
  diarization: boolean;
  /** Translation of the recognised text. */
  translation: boolean;
}

/**
 * What a request says about its audio (the API's `context`, see recognitionContext in context.ts): words and names to
 * expect, written as they should appear, and related text. Engines that can bias toward them do; others ignore it.
 * It applies to that request or session only.
 */
export interface RecognitionContext {
  terms: readonly string[];
  text: string;
}

export interface TranscribeOptions {
  /** BCP-47-ish language hint ("en"); engines that serve one language ignore it. */
  language?: string;
  context?: RecognitionContext;
  /** Aborts decoding; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called with each batch of final tokens as soon as it is known (progress for long files), in time order. */
  onTokens?: (tokens: Token[]) => void;
  /**
   * Queue position, for logs and metrics ("transcription X waiting behind N"). Called while the transcription waits
   * for its first decoder with its rank among transcriptions waiting for one (1 = next to be served), whenever that
   * changes, then with 0 once its first segment is being decoded. Not called for audio that contains no speech.
   * Later segments share the decoders fairly with other transcriptions and are not reported.
   */
  onQueuePosition?: (position: number) => void;
}

export interface StreamOptions {
  language?: string;
  context?: RecognitionContext;
  /**
   * End an utterance by itself after this much trailing silence, turning its tokens final (default engine-defined,
   * ~600 ms). 0 disables it: tokens then become final only at `finalize()` / `end()` or at the engine's maximum
   * utterance length.
   */
  endpointSilenceMs?: number;
  /** Minimum audio between two partial results, in ms (default engine-defined, ~200 ms). */
  partialIntervalMs?: number;
  /**
   * The session's bound on non-final tokens (max_non_final_tokens_duration_ms): the caller finalizes where a word would
   * outlive it. An engine may end its utterances sooner, at a pause, so that cut falls between words.
   */
  maxNonFinalMs?: number;
}

export interface FinalInfo {
  /**
   * The engine closed the utterance because the speaker paused (an endpoint). False when finalize() or end() closed
   * it, or when it was cut at the engine's maximum utterance length while speech went on.
   */
  endpoint: boolean;
}

export interface StreamEvents {
  /**
   * The current non-final hypothesis of the open utterance. Each event replaces the previous partial; an empty list
   * is never sent. Times are on the same clock as final tokens.
   */
  partial: (tokens: Token[]) => void;
  /** Tokens that are now final. Each final token is emitted exactly once, in time order. */
  final: (tokens: Token[], info: FinalInfo) => void;
  /** The session failed (engine crash, bad input); no further events follow. */
  error: (err: Error) => void;
}

/** A real-time recognition session. Obtain one with `Recognizer.stream()`. */
export interface StreamingSession {
  /** Feed PCM. The promise resolves when the engine can take more: await it to get backpressure. */
  write(pcm: Uint8Array): Promise<void>;
  /**
   * End the current utterance now: everything heard so far becomes final ('final' fires before this resolves).
   * `waitMs`: the longest this may wait for a slower, more accurate decoding of what it finalizes (a second pass);
   * past it the faster words are final. Default: the engine's own limit.
   */
  finalize(options?: { waitMs?: number }): Promise<void>;
  /**
   * Make final the words heard so far that can no longer change, without ending the utterance: for decoders that keep
   * their context going, where a cut mid-sentence costs the words around it. The words still forming stay partial.
   * Resolves with the end of the last word made final (ms), or undefined when none could be (finalize() then).
   */
  settle?(): Promise<number | undefined>;
  /** Finalize and release the engine. No events after the promise resolves. */
  end(): Promise<void>;
  /** Drop the session at once without final results; idempotent. */
  abort(): void;
  on<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this;
  off<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this;
  /** Milliseconds of audio received so far. */
  readonly audioMs: number;
  readonly closed: boolean;
  /** Engines that decode each utterance again for its final tokens: how the session's utterances fared (for logs). */
  readonly secondPass?: SecondPassReport;
}

/** Utterances whose final tokens came from the second pass, or kept the first pass's words and why. */
export interface SecondPassReport {
  decoded: number;
  /** Of the decoded: started at the pause, before the utterance's end was decided (the final comes sooner). */
  early: number;
  /** The machine's second-pass budget was spent. */
  skipped: number;
  /** The second pass took too long (or the session could not wait for it without falling behind). */
  late: number;
  failed: number;
}

/** A loaded model. Loading is the expensive part; a recognizer serves many requests (possibly concurrently). */
export interface Recognizer {
  /** Engine and engine model it runs, e.g. "pocketsphinx" / "en-us". */
  readonly engineId: string;
  readonly engineModel: string;
  /** Transcribe a whole PCM stream. Resolves with the final tokens in time order. */
  transcribe(pcm: AsyncIterable<Uint8Array>, options?: TranscribeOptions): Promise<Token[]>;
  /**
   * Open a streaming session. Resolves once an engine instance is assigned to it: at once, after loading one, or
   * after waiting for one when all are busy. `busyWaitMs` bounds that last wait (then EngineBusyError; loading does
   * not count); `signal` gives up on the whole (the caller went away).
   */
  stream(options?: StreamOptions & { signal?: AbortSignal; busyWaitMs?: number }): Promise<StreamingSession>;
  /**
   * Start loading what new live sessions need (warm streaming decoders) before any asks; resolves once the first is
   * ready (the rest keep loading in the background).
   */
  prewarm?(): Promise<void>;
}

export interface LoadOptions {
  signal?: AbortSignal;
}

/** One pool of a loaded model's decoders, as metrics read it: how many there are and how many are busy now. */
export interface PoolSlots {
  /** `stt_batch` (file decoders), `stt_streaming` (live decoders). */
  pool: string;
  busy: number;
  total: number;
}

export interface SttEngine {
  /** Stable engine id ("pocketsphinx"). */
  readonly id: string;
  /** Languages the engine can recognise (ISO 639-1). */
  readonly languages: readonly string[];
  readonly features: SttFeatures;
  /**
   * Load a model (an engine-specific key, see SttModelDescriptor.engineModel). Load once: repeated calls for the same
   * model return the same recognizer. Rejects with a clear error when model files or native parts are missing.
   */
  load(engineModel: string, options?: LoadOptions): Promise<Recognizer>;
  /** Whether the model is loaded now (asking loads nothing); engines that do not say are taken as loaded once asked. */
  isLoaded?(engineModel: string): boolean;
  /** The pools of a model, read at each metrics scrape; none while it is not loaded (asking loads nothing). */
  slots?(engineModel: string): PoolSlots[];
  /** Release every loaded model (worker threads, native memory). */
  close(): Promise<void>;
}

/** Raised when a model cannot be loaded because something on the machine is missing. */
export class EngineUnavailableError extends Error {
  constructor(
    message: string,
    /** What an operator should do about it (install a package, build the addon). */
    readonly hint?: string,
  ) {
    super(hint ? `${message} (${hint})` : message);
    this.name = 'EngineUnavailableError';
  }
}

/** Every engine instance stayed busy for the whole of the caller's `busyWaitMs`. */
export class EngineBusyError extends Error {
  constructor(message = 'every recognizer is busy') {
    super(message);
    this.name = 'EngineBusyError';
  }
}
