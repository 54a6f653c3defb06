// An offline sherpa-onnx model (Whisper, Moonshine, Parakeet, ...) as the file decoder of live second passes
// (../second-pass.ts): each closed utterance is decoded on one of the model's recognizers ahead of file segments,
// with the session's context as hotwords where the model takes them. Serves pocketsphinx's live sessions and
// those of streaming sherpa-onnx models alike.
import type { RecognitionContext, Token } from '../interface.js';
import type { SecondPassDecoder } from '../second-pass.js';

/** What a second pass needs of an offline model: engine.ts's SherpaOfflineRecognizer. */
export interface OfflineUtteranceDecoder {
  /** Recognizers decoding at once. */
  readonly size: number;
  decodeAt(startSample: number, samples: Int16Array, options: { signal?: AbortSignal; context?: RecognitionContext; live?: boolean }): Promise<Token[]>;
}

export function offlineSecondPass(recognizer: OfflineUtteranceDecoder): SecondPassDecoder<RecognitionContext> {
  return {
    get size() {
      return recognizer.size;
    },
    decode(startSample, samples, context) {
      // Cancelled while waiting for a recognizer: it leaves the queue; once decoding, its result is dropped.
      const abort = new AbortController();
      const tokens = recognizer.decodeAt(startSample, samples, { signal: abort.signal, context, live: true });
      return { tokens, cancel: () => abort.abort(new Error('second pass cancelled')) };
    },
  };
}
