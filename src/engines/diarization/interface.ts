// Speaker diarization contract: who spoke when. The API layer labels transcript tokens from these turns; the
// clustering back-end (signal-processing features + BIC, or for files neural speaker embeddings from an installed
// sherpa-onnx model: embedding-diarizer.ts) sits behind DiarizationEngine.

/** One stretch of speech by one speaker. Speakers are numbered 0, 1, ... per audio (not yet wire labels). */
export interface SpeakerTurn {
  startMs: number;
  endMs: number;
  speaker: number;
}

export interface DiarizeOptions {
  signal?: AbortSignal;
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
  /** The stream is over (flushed or not): its state is released. */
  close(): void;
}

export interface DiarizationEngine {
  readonly name: string;
  /** Whole-file diarization with an automatic speaker count. */
  diarize(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: DiarizeOptions): Promise<SpeakerTurn[]>;
  /** Online diarization of a live stream. */
  createStream(): DiarizationStream;
}
