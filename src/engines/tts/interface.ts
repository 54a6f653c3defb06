// The TTS engine contract. An engine turns text (a whole string, or a stream of text chunks as the
// WebSocket receives them) into mono s16le PCM, segment by segment (a sentence or a clause), as it
// synthesizes: the first sentence's audio is out while later text is still arriving or being spoken.
// Engines run their synthesizer in child processes or worker threads; nothing here blocks the event loop.
import type { SsmlDocument } from './ssml/parse.js';
import type { WordTiming } from './word-timings.js';

export interface TtsLanguage {
  /** Two-letter language code (the API's `language`). */
  code: string;
  name: string;
}

export type Gender = 'male' | 'female' | 'neutral';

/** A voice as the engine knows it (the public, human-named voices map onto these). */
export interface EngineVoice {
  /** Engine-specific voice id (espeak-ng variant, flite voice name, festival voice). */
  id: string;
  gender: Gender;
  /** Languages this voice can speak; undefined = every language of the engine. */
  languages?: readonly string[];
  /** Native output sample rate of this voice. */
  sampleRate: number;
}

export interface SynthesisOptions {
  /** 0.7 .. 1.3 from the API (a cloned voice may widen it to 0.5 .. 2); 1 = normal. Pitch is kept (engine rate controls). */
  speed?: number;
  /** Pitch range (intonation) relative to the voice's own, 1 = unchanged; only where supportsPitchRange. */
  pitchRange?: number;
  /** The caller wants word times: engines that know them (festival, flite) put them on each chunk (`words`). */
  wordTimings?: boolean;
  signal?: AbortSignal;
}

/** One synthesized segment: its text and its audio. */
export interface SynthesisChunk {
  /** Mono signed 16-bit little-endian samples. */
  pcm: Buffer;
  sampleRate: number;
  /** The text this audio speaks (the segment), for character timings. */
  text: string;
  /** Character timings relative to this chunk's start, in seconds, where the engine knows them. */
  timings?: { characters: string[]; start: number[]; end: number[] };
  /**
   * An SSML break (pcm empty, text ""): this much silence between the audio before and after it, the silence already
   * at their edges included (the pipeline joins them: ssml/pauses.ts).
   */
  pauseSeconds?: number;
  /**
   * The words of `text` with their times relative to this chunk's start, in seconds, when asked (wordTimings) and the
   * engine knows them; otherwise the pipeline derives them (word-timings.ts says which engine uses which method).
   */
  words?: WordTiming[];
}

export interface TtsEngine {
  /** Engine name: `espeak-ng`, `flite`, `festival`, `sherpa-onnx`. */
  readonly name: string;
  readonly languages: readonly TtsLanguage[];
  readonly voices: readonly EngineVoice[];
  readonly supportsSpeed: boolean;
  readonly supportsTimestamps: boolean;
  /** Honours SynthesisOptions.pitchRange (cloned voices adapt their intonation range through it). */
  readonly supportsPitchRange?: boolean;
  /** Synthesize `text` with `voice` (an EngineVoice id) in `language`. Abort with opts.signal. */
  synthesize(text: AsyncIterable<string> | string, voice: string, language: string, opts?: SynthesisOptions): AsyncIterable<SynthesisChunk>;
  /**
   * Speak an SSML document with the engine's own SSML support (espeak-ng). Engines without it are driven through the
   * translator (ssml/translate.ts), text run by text run; ssml/source.ts picks.
   */
  synthesizeSsml?(doc: SsmlDocument, voice: string, language: string, opts?: SynthesisOptions): AsyncIterable<SynthesisChunk>;
  /** Whether `voice` can pronounce anything of `text` (undefined: every voice speaks any text). */
  speaks?(text: string, voice: string): boolean;
  /** Check that the engine's program is present (startup). */
  available(): Promise<boolean>;
  /** Release what the engine holds between requests (worker threads with a model loaded). */
  close?(): Promise<void>;
}
