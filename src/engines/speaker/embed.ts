// One speaker embedding with sherpa-onnx (3D-Speaker, WeSpeaker, NeMo exports): the extractor's configuration for an
// installed model, and the embedding of a stretch of 16 kHz PCM. Synchronous: callers run it on a worker thread.
import type sherpaTypes from 'sherpa-onnx-node';
import type { InstalledModel } from '../model-dir/manifest.js';
import { pcmToFloat32 } from '../stt/sherpa/load-sherpa.js';

export type SpeakerEmbeddingConfig = sherpaTypes.SpeakerEmbeddingExtractorConfig;
export type SpeakerEmbeddingExtractor = sherpaTypes.SpeakerEmbeddingExtractor;

export function speakerEmbeddingConfig(model: InstalledModel): SpeakerEmbeddingConfig {
  return { model: model.paths.model!, numThreads: model.threads ?? 1, provider: 'cpu', debug: 0 };
}

/** The embedding of `samples` (16 kHz; sherpa resamples to the model's rate), as a copy that may cross threads. */
export function embedSamples(extractor: SpeakerEmbeddingExtractor, samples: Int16Array): Float32Array {
  const stream = extractor.createStream();
  stream.acceptWaveform({ samples: pcmToFloat32(samples), sampleRate: 16_000 });
  stream.inputFinished();
  // No whole feature frame (empty audio): no voice to describe.
  if (!extractor.isReady(stream)) return new Float32Array(extractor.dim);
  return extractor.compute(stream, false);
}
