// An offline sherpa-onnx model (Whisper, Moonshine, Parakeet, ...) as the file decoder of live second passes
// (../second-pass.ts): each closed utterance is decoded on one of the model's recognizers ahead of file segments,
// with the session's context as hotwords where the model takes them. Serves pocketsphinx's live sessions and
// those of streaming sherpa-onnx models alike.
import type { RecognitionContext } from '../interface.js';
import type { SecondPassDecoder } from '../second-pass.js';
import type { SherpaOfflineRecognizer } from './engine.js';

export function offlineSecondPass(recognizer: SherpaOfflineRecognizer): SecondPassDecoder<RecognitionContext> {
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
