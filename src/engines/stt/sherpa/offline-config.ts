// sherpa-onnx OfflineRecognizer configuration for an installed offline STT model (model-dir/manifest.ts): the
// manifest's file roles mapped onto the config keys of its model type.
import type sherpa from 'sherpa-onnx-node';
import type { InstalledModel } from '../../model-dir/manifest.js';
import { HOTWORDS_SCORE, takesHotwords } from './hotwords.js';

export type OfflineRecognizerConfig = sherpa.OfflineRecognizerConfig;

export function offlineRecognizerConfig(model: InstalledModel): OfflineRecognizerConfig {
  const f = model.paths;
  const byType: Record<string, sherpa.OfflineModelConfig> = {
    whisper: {
      whisper: {
        encoder: f.encoder,
        decoder: f.decoder,
        language: model.languages.length === 1 ? model.languages[0] : '',
        task: 'transcribe',
        tailPaddings: -1,
      },
    },
    moonshine: { moonshine: { preprocessor: f.preprocessor, encoder: f.encoder, uncachedDecoder: f.uncached_decoder, cachedDecoder: f.cached_decoder } },
    'nemo-ctc': { nemoCtc: { model: f.model } },
    'nemo-transducer': { transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner }, modelType: 'nemo_transducer' },
    transducer: { transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner } },
    paraformer: { paraformer: { model: f.model } },
    'sense-voice': { senseVoice: { model: f.model, language: '', useInverseTextNormalization: 0 } },
    'zipformer-ctc': { zipformerCtc: { model: f.model } },
  };
  const specific = byType[model.type];
  if (!specific) throw new Error(`not an offline STT model type: ${model.type}`);
  const common = { tokens: f.tokens!, numThreads: model.threads ?? 1, provider: 'cpu', debug: 0 };
  if (takesHotwords(model)) {
    // Context terms become per-stream hotwords, which only a beam search uses.
    return {
      featConfig: { sampleRate: 16_000, featureDim: 80 },
      modelConfig: { ...specific, ...common, modelingUnit: model.modeling_unit, ...(f.bpe_vocab ? { bpeVocab: f.bpe_vocab } : {}) },
      decodingMethod: 'modified_beam_search',
      maxActivePaths: 4,
      hotwordsScore: HOTWORDS_SCORE,
    };
  }
  return { featConfig: { sampleRate: 16_000, featureDim: 80 }, modelConfig: { ...specific, ...common }, decodingMethod: 'greedy_search' };
}
