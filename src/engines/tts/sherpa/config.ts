// sherpa-onnx OfflineTts configuration for an installed TTS model (VITS/Piper, Matcha, Kokoro, Kitten) (model-dir/manifest.ts): the manifest's file roles
// mapped onto the config keys of its model type. Optional roles: `lexicon`, `data_dir` (espeak-ng-data, for Piper
// and other espeak-phonemized models), `rule_fsts` and `rule_fars` (text normalization rules).
import type sherpa from 'sherpa-onnx-node';
import type { InstalledModel } from '../../model-dir/manifest.js';

export type OfflineTtsConfig = sherpa.OfflineTtsConfig;

export function offlineTtsConfig(model: InstalledModel): OfflineTtsConfig {
  const f = model.paths;
  const shared = { tokens: f.tokens, ...(f.lexicon ? { lexicon: f.lexicon } : {}), ...(f.data_dir ? { dataDir: f.data_dir } : {}) };
  const byType: Record<string, sherpa.OfflineTtsModelConfig> = {
    vits: { vits: { model: f.model, ...shared } },
    matcha: { matcha: { acousticModel: f.acoustic_model, vocoder: f.vocoder, ...shared } },
    kokoro: { kokoro: { model: f.model, voices: f.voices, ...shared } },
    // Kitten has no lexicon: espeak-ng phonemizes everything.
    kitten: { kitten: { model: f.model, voices: f.voices, tokens: f.tokens, ...(f.data_dir ? { dataDir: f.data_dir } : {}) } },
  };
  const specific = byType[model.type];
  if (model.family !== 'tts' || !specific) throw new Error(`not a TTS model type: ${model.family} ${model.type}`);
  return {
    model: { ...specific, numThreads: model.threads ?? 1, provider: 'cpu', debug: 0 },
    // Our segments are sentences already; sherpa splits any further and runs one sentence a model call.
    maxNumSentences: 1,
    ...(f.rule_fsts ? { ruleFsts: f.rule_fsts } : {}),
    ...(f.rule_fars ? { ruleFars: f.rule_fars } : {}),
  };
}
