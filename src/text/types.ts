// Shared types of the transcript formatter (src/text). Structurally the same as the engine's `Token`, so engine
// tokens can be passed in and formatted tokens handed back to the API layer without conversion.

/** One word (or, after formatting, one formatted unit such as "$5.50" or "7:30") with its time span. */
export interface WordToken {
  /** Bare text, no surrounding spaces; the caller decides spacing. */
  text: string;
  /** Inclusive start, ms from the beginning of the audio. */
  start_ms: number;
  /** Exclusive end, ms. */
  end_ms: number;
  /** Confidence in [0, 1]. */
  confidence: number;
}

export interface FormatOptions {
  /**
   * Language of the tokens (ISO 639-1, or a tag such as "en-US"). Only English is formatted; tokens in any other
   * language are returned unchanged (as copies). Default "en".
   */
  language?: string;
}

/** What a formatted unit is; drives later decisions (commas before years, capitals after titles...). */
export type SpanKind = 'word' | 'number' | 'ordinal' | 'decimal' | 'money' | 'percent' | 'digits' | 'time' | 'meridiem' | 'year' | 'month' | 'day' | 'title';

/**
 * One formatted unit: the input words [start, end) (indices into the utterance's words) it replaces, and its text.
 * Spans are contiguous, in order, and cover every input word exactly once.
 */
export interface Span {
  start: number;
  end: number;
  text: string;
  kind: SpanKind;
  /** Numeric value of number-like spans (cardinal, year, day), for decisions made after the span is built. */
  value?: number;
}
