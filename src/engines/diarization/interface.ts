// Speaker diarization contract: who spoke when. The API layer labels transcript tokens from these turns; the
// clustering back-end (signal-processing features + BIC, or for files neural speaker embeddings from an installed
// sherpa-onnx model: embedding-diarizer.ts) sits behind DiarizationEngine. Enrolled speakers are recognised on voice
// prints (voice-print.ts) the engine measures: of an enrolment sample, of each diarized speaker of a file, and of each
// speaker of a live stream.
import type { LiveEnrolled } from './diarize-worker-messages.js';
import type { VoicePrint } from './voice-print.js';

export type { LiveEnrolled } from './diarize-worker-messages.js';

/** One stretch of speech by one speaker. Speakers are numbered 0, 1, ... per audio (not yet wire labels). */
export interface SpeakerTurn {
  startMs: number;
  endMs: number;
  speaker: number;
}

export interface DiarizeOptions {
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
  /** Whole-file diarization with an automatic speaker count. */
  diarize(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: DiarizeOptions): Promise<SpeakerTurn[]>;
  /** Voice prints of the speech in `pcm`, by speaker (speakers with no speech frame are absent). */
  measure(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: MeasureOptions): Promise<Map<number, VoicePrint>>;
  /** Online diarization of a live stream. */
  createStream(options?: StreamOptions): DiarizationStream;
}
