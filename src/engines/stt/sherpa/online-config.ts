// sherpa-onnx OnlineRecognizer configuration for an installed streaming STT model (model-dir/manifest.ts). Its
// endpoint rules only cap an utterance's length (rule 3): the speaker's pause is each session's own rule
// (online-sessions.ts), since sessions ask for different pauses. Transducers are decoded with modified beam search
// (fewer word errors than greedy search for a few percent more CPU, and the only method that takes hotwords); with
// a modeling unit (and its BPE vocabulary) context terms can be given as hotwords.
import type sherpa from 'sherpa-onnx-node';
import type { InstalledModel } from '../../model-dir/manifest.js';

export type OnlineRecognizerConfig = sherpa.OnlineRecognizerConfig;

/** Hypotheses kept by modified beam search (sherpa-onnx's default). */
const BEAM = 4;

export function onlineRecognizerConfig(model: InstalledModel): OnlineRecognizerConfig {
  const f = model.paths;
  const byType: Record<string, sherpa.OnlineModelConfig> = {
    transducer: { transducer: { encoder: f.encoder, decoder: f.decoder, joiner: f.joiner } },
    paraformer: { paraformer: { encoder: f.encoder, decoder: f.decoder } },
    'zipformer2-ctc': { zipformer2Ctc: { model: f.model } },
  };
  const specific = byType[model.type];
  if (!specific) throw new Error(`not a streaming STT model type: ${model.type}`);
  return {
    featConfig: { sampleRate: 16_000, featureDim: 80 },
    modelConfig: {
      ...specific,
      tokens: f.tokens!,
      numThreads: model.threads ?? 1,
      provider: 'cpu',
      debug: 0,
      ...(model.modeling_unit ? { modelingUnit: model.modeling_unit, ...(f.bpe_vocab ? { bpeVocab: f.bpe_vocab } : {}) } : {}),
    },
    ...(model.type === 'transducer' ? { decodingMethod: 'modified_beam_search', maxActivePaths: BEAM } : { decodingMethod: 'greedy_search' }),
    enableEndpoint: 1,
    rule1MinTrailingSilence: 1e9,
    rule2MinTrailingSilence: 1e9,
    rule3MinUtteranceLength: 20,
  };
}
