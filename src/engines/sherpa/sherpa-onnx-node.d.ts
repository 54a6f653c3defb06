// Types for the parts of sherpa-onnx-node (1.13.x) we use; the package ships JavaScript with JSDoc only.
//
// The package is CommonJS and Node's ESM loader detects none of its exports except OnlineRecognizer, so import
// the default (the whole module.exports object): `import sherpa from 'sherpa-onnx-node'`, then
// `sherpa.OfflineRecognizer` etc.; types are `sherpa.OfflineRecognizerResult` etc. (or `import type { ... }`).
// TypeScript cannot tell which named value imports Node will find: `import { OfflineRecognizer } from ...`
// typechecks but fails at load ("Named export 'OfflineRecognizer' not found").
//
// Shapes below were checked against 1.13.8 with test/fixtures/sherpa-models.ts. Beware of the native side:
// - A config that fails validation (a file that does not exist, no espeak-ng-data) throws (or createAsync rejects),
//   and so do an unparsable ONNX file and some inference errors. But a model that loads and then lacks what sherpa
//   expects (metadata keys, a blank token in tokens.txt, an unsupported normalize_type, no model kind configured)
//   makes the native code call exit(-1): the process ends with code 255 and nothing can catch it.
// - `samples` must be a Float32Array in [-1, 1]: a plain array throws, but other typed arrays (an Int16Array) are
//   silently read as garbage.
// - OfflineStream.acceptWaveform computes the features synchronously on the calling thread (about 1.5 ms a
//   second of 16 kHz audio); decodeAsync runs the model on a worker thread and leaves the event loop free.
declare module 'sherpa-onnx-node' {
  namespace sherpa {
    /** Mono audio; samples in [-1, 1]. Another rate than featConfig.sampleRate is resampled (and logged to stderr). */
    interface Waveform {
      samples: Float32Array;
      sampleRate: number;
    }

    interface FeatureConfig {
      sampleRate?: number;
      featureDim?: number;
    }

    // ------------------------------------------------------------------ offline (non-streaming) recognition

    interface OfflineTransducerModelConfig {
      encoder?: string;
      decoder?: string;
      joiner?: string;
    }
    interface OfflineSingleModelConfig {
      model?: string;
    }
    interface OfflineWhisperModelConfig {
      encoder?: string;
      decoder?: string;
      language?: string;
      task?: 'transcribe' | 'translate';
      tailPaddings?: number;
      enableTokenTimestamps?: number;
      enableSegmentTimestamps?: number;
    }
    interface OfflineSenseVoiceModelConfig {
      model?: string;
      language?: string;
      useInverseTextNormalization?: number;
    }
    interface OfflineMoonshineModelConfig {
      preprocessor?: string;
      encoder?: string;
      uncachedDecoder?: string;
      cachedDecoder?: string;
    }
    interface OfflineEncoderDecoderModelConfig {
      encoder?: string;
      decoder?: string;
    }
    interface OfflineCanaryModelConfig {
      encoder?: string;
      decoder?: string;
      srcLang?: string;
      tgtLang?: string;
      usePnc?: number;
    }

    /** Exactly one model kind must be set (none at all exits the process). */
    interface OfflineModelConfig {
      transducer?: OfflineTransducerModelConfig;
      paraformer?: OfflineSingleModelConfig;
      nemoCtc?: OfflineSingleModelConfig;
      zipformerCtc?: OfflineSingleModelConfig;
      wenetCtc?: OfflineSingleModelConfig;
      tdnn?: OfflineSingleModelConfig;
      dolphin?: OfflineSingleModelConfig;
      whisper?: OfflineWhisperModelConfig;
      senseVoice?: OfflineSenseVoiceModelConfig;
      moonshine?: OfflineMoonshineModelConfig;
      fireRedAsr?: OfflineEncoderDecoderModelConfig;
      canary?: OfflineCanaryModelConfig;
      tokens?: string;
      numThreads?: number;
      debug?: boolean | number;
      provider?: string;
      modelType?: string;
      modelingUnit?: string;
      bpeVocab?: string;
    }

    interface OfflineRecognizerConfig {
      featConfig?: FeatureConfig;
      modelConfig: OfflineModelConfig;
      decodingMethod?: 'greedy_search' | 'modified_beam_search';
      maxActivePaths?: number;
      hotwordsFile?: string;
      hotwordsScore?: number;
      ruleFsts?: string;
      ruleFars?: string;
      blankPenalty?: number;
    }

    /**
     * For CTC models: `tokens` are the pieces with "▁" shown as a space (" yes"), `timestamps` the start of each
     * token in seconds (the first frame of its run), `text` the joined pieces without the leading space.
     * `durations`, `ys_log_probs` and `words` are empty for CTC; lang/emotion/event are SenseVoice's.
     */
    interface OfflineRecognizerResult {
      text: string;
      tokens: string[];
      timestamps: number[];
      durations: number[];
      ys_log_probs: number[];
      words: number[];
      lang: string;
      emotion: string;
      event: string;
    }

    /** Audio accepted more than once is appended; decoding again decodes everything accepted so far. */
    interface OfflineStream {
      acceptWaveform(wave: Waveform): void;
      setOption(key: string, value: string): void;
    }

    interface OfflineRecognizerClass {
      /** Loads the model synchronously on the calling thread. */
      new (config: OfflineRecognizerConfig): OfflineRecognizer;
      /** Loads the model on a worker thread. */
      createAsync(config: OfflineRecognizerConfig): Promise<OfflineRecognizer>;
    }

    interface OfflineRecognizer {
      readonly config: OfflineRecognizerConfig;
      createStream(hotwords?: string): OfflineStream;
      setConfig(config: OfflineRecognizerConfig): void;
      /** Blocks the calling thread; read the result with getResult. */
      decode(stream: OfflineStream): void;
      /** Runs on a worker thread; resolves to the result (also readable with getResult afterwards). */
      decodeAsync(stream: OfflineStream): Promise<OfflineRecognizerResult>;
      getResult(stream: OfflineStream): OfflineRecognizerResult;
    }

    // ------------------------------------------------------------------ streaming recognition

    interface OnlineModelConfig {
      transducer?: OfflineTransducerModelConfig;
      paraformer?: OfflineEncoderDecoderModelConfig;
      zipformer2Ctc?: OfflineSingleModelConfig;
      nemoCtc?: OfflineSingleModelConfig;
      toneCtc?: OfflineSingleModelConfig;
      tokens?: string;
      numThreads?: number;
      debug?: boolean | number;
      provider?: string;
      modelType?: string;
      modelingUnit?: string;
      bpeVocab?: string;
    }

    interface OnlineRecognizerConfig {
      featConfig?: FeatureConfig;
      modelConfig: OnlineModelConfig;
      decodingMethod?: 'greedy_search' | 'modified_beam_search';
      maxActivePaths?: number;
      enableEndpoint?: boolean | number;
      /** Seconds of trailing silence for an endpoint when nothing was recognised (default 2.4). */
      rule1MinTrailingSilence?: number;
      /** Seconds of trailing silence for an endpoint after something was recognised (default 1.2). */
      rule2MinTrailingSilence?: number;
      /** Utterance length in seconds that forces an endpoint (default 20). */
      rule3MinUtteranceLength?: number;
      hotwordsFile?: string;
      hotwordsScore?: number;
      ruleFsts?: string;
      ruleFars?: string;
      blankPenalty?: number;
    }

    /**
     * The current segment (since the last reset). `timestamps` are seconds from the segment's start, which is
     * `start_time` seconds from the stream's start; `segment` counts resets that ended a non-empty segment.
     * `num_trailing_blanks` is in encoder frames (sherpa assumes 40 ms for transducers).
     */
    interface OnlineRecognizerResult {
      text: string;
      tokens: string[];
      timestamps: number[];
      ys_probs: number[];
      lm_probs: number[];
      context_scores: number[];
      words: number[];
      segment: number;
      start_time: number;
      num_trailing_blanks: number;
      is_final: boolean;
      is_eof: boolean;
    }

    interface OnlineStream {
      acceptWaveform(wave: Waveform): void;
      /** No more audio: lets the last partial chunk be decoded (sherpa pads it). */
      inputFinished(): void;
      setOption(key: string, value: string): void;
      getOption(key: string): string;
      hasOption(key: string): boolean;
    }

    interface OnlineRecognizerClass {
      new (config: OnlineRecognizerConfig): OnlineRecognizer;
    }

    /** Synchronous only: every call runs on the calling thread. */
    interface OnlineRecognizer {
      readonly config: OnlineRecognizerConfig;
      createStream(): OnlineStream;
      /** Whether a whole chunk of features is waiting to be decoded. */
      isReady(stream: OnlineStream): boolean;
      /** Decodes one chunk; call while isReady. */
      decode(stream: OnlineStream): void;
      decodeStreams(streams: OnlineStream[]): void;
      isEndpoint(stream: OnlineStream): boolean;
      /** Starts a new segment (after an endpoint): the result empties, segment advances, the audio stays. */
      reset(stream: OnlineStream): void;
      getResult(stream: OnlineStream): OnlineRecognizerResult;
    }

    // ------------------------------------------------------------------ speech synthesis

    interface OfflineTtsVitsModelConfig {
      model?: string;
      lexicon?: string;
      tokens?: string;
      /** espeak-ng-data directory (Piper voices). */
      dataDir?: string;
      noiseScale?: number;
      noiseScaleW?: number;
      lengthScale?: number;
    }
    interface OfflineTtsMatchaModelConfig {
      acousticModel?: string;
      vocoder?: string;
      lexicon?: string;
      tokens?: string;
      dataDir?: string;
      noiseScale?: number;
      lengthScale?: number;
    }
    interface OfflineTtsKokoroModelConfig {
      model?: string;
      voices?: string;
      tokens?: string;
      dataDir?: string;
      lengthScale?: number;
      lexicon?: string;
      lang?: string;
    }
    interface OfflineTtsKittenModelConfig {
      model?: string;
      voices?: string;
      tokens?: string;
      dataDir?: string;
      lengthScale?: number;
    }
    interface OfflineTtsModelConfig {
      vits?: OfflineTtsVitsModelConfig;
      matcha?: OfflineTtsMatchaModelConfig;
      kokoro?: OfflineTtsKokoroModelConfig;
      kitten?: OfflineTtsKittenModelConfig;
      numThreads?: number;
      debug?: boolean | number;
      provider?: string;
    }
    interface OfflineTtsConfig {
      model: OfflineTtsModelConfig;
      ruleFsts?: string;
      ruleFars?: string;
      /** Sentences synthesised per model call (and per onProgress call). */
      maxNumSentences?: number;
      silenceScale?: number;
    }

    interface GeneratedAudio {
      samples: Float32Array;
      sampleRate: number;
    }

    /** Called after each batch of sentences with that batch's audio; return 0 or false to stop early. */
    type TtsProgressCallback = (info: { samples: Float32Array; progress: number }) => number | boolean | void;

    interface TtsRequest {
      text: string;
      /** Speaker id; out of range logs a warning and uses 0. */
      sid: number;
      /** 1 is normal; Piper VITS takes length_scale = 1 / speed. */
      speed: number;
      enableExternalBuffer?: boolean;
    }

    interface TtsAsyncRequest extends TtsRequest {
      /** A throw rejects generateAsync ("onProgress callback threw: ..."). */
      onProgress?: TtsProgressCallback;
    }

    interface OfflineTtsClass {
      /** Loads the model synchronously on the calling thread. */
      new (config: OfflineTtsConfig): OfflineTts;
      /** Loads the model on a worker thread. */
      createAsync(config: OfflineTtsConfig): Promise<OfflineTts>;
    }

    interface OfflineTts {
      readonly config: OfflineTtsConfig;
      readonly sampleRate: number;
      readonly numSpeakers: number;
      /** Blocks the calling thread. */
      generate(request: TtsRequest): GeneratedAudio;
      /** Runs on a worker thread; resolves to all the audio (stopped early: what was made so far). */
      generateAsync(request: TtsAsyncRequest): Promise<GeneratedAudio>;
    }

    // ------------------------------------------------------------------ speaker embeddings

    /**
     * The model's metadata says what it is (`framework`: wespeaker, 3d-speaker or nemo) and how to feed it
     * (sample_rate, normalize_samples, feature_normalize_type; output_dim). Without a known framework the constructor
     * ends the process with a segmentation fault; without a required key, with exit code 255.
     */
    interface SpeakerEmbeddingExtractorConfig {
      model: string;
      numThreads?: number;
      debug?: boolean | number;
      provider?: string;
    }

    interface SpeakerEmbeddingExtractorClass {
      /** Loads the model synchronously on the calling thread. */
      new (config: SpeakerEmbeddingExtractorConfig): SpeakerEmbeddingExtractor;
    }

    /** Synchronous only: every call runs on the calling thread. */
    interface SpeakerEmbeddingExtractor {
      readonly config: SpeakerEmbeddingExtractorConfig;
      /** Embedding length (the model's output_dim). */
      readonly dim: number;
      /** Accepts audio like a recognizer's stream; call inputFinished() before compute(). */
      createStream(): OnlineStream;
      /** Whether the stream holds feature frames not embedded yet. */
      isReady(stream: OnlineStream): boolean;
      /**
       * The embedding of every frame not embedded yet (not normalised). enableExternalBuffer (default true) returns
       * a view of native memory, which cannot be sent to another thread: pass false for a plain copy.
       */
      compute(stream: OnlineStream, enableExternalBuffer?: boolean): Float32Array;
    }

    // ------------------------------------------------------------------ spoken language identification

    /**
     * A multilingual Whisper encoder/decoder pair (sherpa-onnx's export: metadata n_mels, n_text_layer, n_text_ctx,
     * n_text_state, sot, is_multilingual, all_language_tokens, all_language_codes, ...). A missing key or an
     * English-only model ends the process (exit 255) in the constructor.
     */
    interface SpokenLanguageIdentificationConfig {
      whisper: { encoder: string; decoder: string; tailPaddings?: number };
      numThreads?: number;
      debug?: boolean | number;
      provider?: string;
    }

    interface SpokenLanguageIdentificationClass {
      /** Loads the model synchronously on the calling thread. */
      new (config: SpokenLanguageIdentificationConfig): SpokenLanguageIdentification;
    }

    /** Synchronous only: every call runs on the calling thread. */
    interface SpokenLanguageIdentification {
      createStream(): OfflineStream;
      /** The language code of the first 30 s of the stream's audio; "" when the model fails on it. */
      compute(stream: OfflineStream): string;
    }

    interface SpeakerEmbeddingManagerClass {
      new (dim: number): SpeakerEmbeddingManager;
    }

    /** Named speakers' embeddings, compared by cosine similarity. */
    interface SpeakerEmbeddingManager {
      readonly dim: number;
      add(entry: { name: string; v: Float32Array }): boolean;
      addMulti(entry: { name: string; v: Float32Array[] }): boolean;
      remove(name: string): boolean;
      /** The best-matching name with a similarity of at least `threshold`, or "". */
      search(query: { v: Float32Array; threshold: number }): string;
      verify(query: { name: string; v: Float32Array; threshold: number }): boolean;
      contains(name: string): boolean;
      getNumSpeakers(): number;
      getAllSpeakerNames(): string[];
    }
  }

  const sherpa: {
    OfflineRecognizer: sherpa.OfflineRecognizerClass;
    OnlineRecognizer: sherpa.OnlineRecognizerClass;
    OfflineTts: sherpa.OfflineTtsClass;
    SpeakerEmbeddingExtractor: sherpa.SpeakerEmbeddingExtractorClass;
    SpeakerEmbeddingManager: sherpa.SpeakerEmbeddingManagerClass;
    SpokenLanguageIdentification: sherpa.SpokenLanguageIdentificationClass;
    /** Reads a WAV file; throws if it cannot. */
    readWave(filename: string, enableExternalBuffer?: boolean): sherpa.Waveform;
    writeWave(filename: string, wave: sherpa.Waveform): boolean;
    version: string;
    gitSha1: string;
    gitDate: string;
    onnxruntimeVersion: string;
  };

  export = sherpa;
}
