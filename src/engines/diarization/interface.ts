// Speaker diarization contract: who spoke when. The API layer labels transcript tokens from these turns; the
// clustering back-end (signal-processing features + BIC, or for files neural speaker embeddings from an installed
// sherpa-onnx model: embedding-diarizer.ts) sits behind DiarizationEngine. Enrolled speakers are recognised on voice
// prints (voice-print.ts) the engine measures: of an enrolment sample, of each diarized speaker of a file, and of each
// speaker of a live stream. The types the family's files share live here, so this file imports none of them.

/** One stretch of speech by one speaker. Speakers are numbered 0, 1, ... per audio (not yet wire labels). */
export interface SpeakerTurn {
  startMs: number;
  endMs: number;
  speaker: number;
}

/** Sufficient statistics of one Gaussian, as plain JSON. */
export interface GaussianJson {
  n: number;
  sum: number[];
  outer: number[];
}

/** A voice as stored (speaker profiles) and sent between threads (voice-print.ts works on them). */
export interface VoicePrint {
  /** Speech the print was measured on, ms (speech frames of the voice activity detector). */
  speechMs: number;
  spectral: GaussianJson;
  pitch: GaussianJson;
  /** The speaker embedding (mean of unit vectors) and the model that made it, when one is installed. */
  embedding?: { model: string; vector: number[] };
}

/** How close a diarized voice must be to an enrolled one to be that person (voice-print.ts matchScore). */
export interface MatchThresholds {
  /** Feature distance up to which two voices are one person. */
  maxDistance: number;
  /** Embedding cosine similarity from which two voices are one person. */
  minSimilarity: number;
  /** Speech a diarized speaker needs before it is compared at all, ms. */
  minSpeechMs: number;
}

/** How a live stream's windows are named (live-identifier.ts). */
export interface LiveRule {
  /** Share of its live speaker's judged speech a window's own name needs (above 1: a live speaker is named as a whole). */
  ownShare: number;
}

/** Enrolled voices a live stream recognises, and how close a voice must be. */
export interface LiveEnrolled {
  prints: VoicePrint[];
  thresholds: MatchThresholds;
  /** How windows are named (default DEFAULT_LIVE_RULE; the benchmark tries others). */
  rule?: LiveRule;
}

/**
 * How many speakers the caller says there are: `{ min: n, max: n }` for exactly n, either bound alone for a range.
 * Whole numbers, 1 ≤ min ≤ max (speaker-count.ts checks). The bounds count speakers the audio gives evidence of: a
 * diarizer never invents a speaker without speech of its own, so min is reached only when there is enough speech
 * to tell that many apart (see each diarizer).
 */
export interface SpeakerCount {
  min?: number;
  max?: number;
}

export interface DiarizeOptions {
  /** Bounds on the speaker count (default: found from the audio alone). */
  speakers?: SpeakerCount;
  signal?: AbortSignal;
}

export interface MeasureOptions {
  /** Each speaker's turns; without them all speech is one voice (speaker 0). */
  turns?: SpeakerTurn[];
  signal?: AbortSignal;
}

export interface StreamOptions {
  /** Enrolled voices the stream recognises (nameAt()). */
  enrolled?: LiveEnrolled;
  /**
   * Bounds on the speaker count. A live stream honours max from its first window (never more speaker numbers);
   * it cannot honour min: it labels tokens as they turn final, before it can know that another voice will come.
   */
  speakers?: SpeakerCount;
}

/** A live stream's diarizer: feed it the audio the recognizer gets, ask who spoke a token. */
export interface DiarizationStream {
  /** Feed s16le 16 kHz mono PCM in order; await each push before the next. */
  push(pcm: Uint8Array): Promise<void>;
  /** End of audio: the last window is clustered. */
  flush(): Promise<void>;
  /**
   * Speaker of the audio in [startMs, endMs): the speaker of the clustered window overlapping it most, or, for audio
   * not clustered yet, a provisional guess (the nearest speaker so far). Undefined before any speech was heard.
   */
  speakerAt(startMs: number, endMs: number): number | undefined;
  /**
   * Index of the enrolled voice (StreamOptions.enrolled) the audio in [startMs, endMs) is, as judged so far (by the
   * clustered window it falls in; live-identifier.ts), or undefined.
   */
  nameAt(startMs: number, endMs: number): number | undefined;
  /** The stream is over (flushed or not): its state is released. */
  close(): void;
}

export interface DiarizationEngine {
  readonly name: string;
  /** Whole-file diarization, with the speaker count found from the audio within `options.speakers`. */
  diarize(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: DiarizeOptions): Promise<SpeakerTurn[]>;
  /** Voice prints of the speech in `pcm`, by speaker (speakers with no speech frame are absent). */
  measure(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: MeasureOptions): Promise<Map<number, VoicePrint>>;
  /** Online diarization of a live stream. */
  createStream(options?: StreamOptions): DiarizationStream;
}
