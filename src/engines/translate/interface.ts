// Machine-translation engine contract. The API layer (async transcripts, real-time sessions, /v1/models) talks
// only to these types through the registry; apertium is the first engine, a neural one can be added beside it.
//
// Languages are ISO 639-1 codes where one exists ("en", "es"), else ISO 639-3 ("ast").

/** One translation direction an engine offers. */
export interface TranslationPair {
  source: string;
  target: string;
}

export interface TranslateOptions {
  /** Aborts the call; the promise then rejects with the signal's reason and the engine's work is stopped. */
  signal?: AbortSignal;
}

export interface TranslationEngine {
  /** Stable engine id ("apertium"). */
  readonly id: string;
  /** Directions this engine can translate, discovered at start-up. */
  readonly pairs: readonly TranslationPair[];
  /**
   * Translate each segment (a sentence or utterance, one line of plain text without line breaks) from `source`
   * to `target`. Resolves with one translated string per segment, in order, trimmed.
   */
  translate(source: string, target: string, segments: readonly string[], options?: TranslateOptions): Promise<string[]>;
  /** A translation `source` → `target` is coming soon (a real-time session started): get ready if that helps. */
  prepare?(source: string, target: string): void;
  /** Stop child processes; further calls fail. */
  close(): Promise<void>;
}

/** The engine failed (crashed, timed out, produced unusable output): a server error, not the client's. */
export class TranslationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TranslationError';
  }
}
