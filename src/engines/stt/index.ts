// The STT models this build ships, wired into a registry. The API layer creates one registry at start-up and
// resolves client model ids through it; engines load their models lazily on first use.
import type { InstalledModel } from '../model-dir/manifest.js';
import { PocketsphinxEngine, POCKETSPHINX_FEATURES } from './pocketsphinx/engine.js';
import type { PocketsphinxOptions } from './pocketsphinx/options.js';
import { type ModelLoadPolicy, SttRegistry, type SttModelDescriptor } from './registry.js';
import { SHERPA_ENGINE_ID, SHERPA_OFFLINE_FEATURES, SHERPA_STREAMING_FEATURES, SherpaEngine, type SherpaOptions } from './sherpa/engine.js';

export type { Recognizer, StreamingSession, SttEngine, SttFeatures, Token } from './interface.js';
export { EngineUnavailableError, STT_SAMPLE_RATE } from './interface.js';
export { ModelLoadFailedError, SttRegistry, type ResolvedModel, type SttModelDescriptor } from './registry.js';
export type { PocketsphinxStats, PocketsphinxTranscribeOptions, TranscriptionReport } from './pocketsphinx/engine.js';
export type { PocketsphinxOptions } from './pocketsphinx/options.js';

export const POCKETSPHINX_EN_MODEL: SttModelDescriptor = {
  id: 'parlance-en-pocketsphinx-v1',
  aliases: ['pocketsphinx-en-us'],
  engineId: 'pocketsphinx',
  engineModel: 'en-us',
  languages: ['en'],
  features: POCKETSPHINX_FEATURES,
  description: 'English, CMU pocketsphinx 0.8 with the en-us continuous model (Debian pocketsphinx-en-us)',
};

export interface SttRegistryOptions extends ModelLoadPolicy {
  pocketsphinx?: PocketsphinxOptions;
  /** Models users brought (the models directory); the STT ones are registered under their manifest ids. */
  installed?: readonly InstalledModel[];
  sherpa?: SherpaOptions;
  /**
   * An installed offline model whose words are the final tokens of live sessions (a second pass of each utterance),
   * for pocketsphinx's sessions and streaming models' alike; unset: pocketsphinx decodes its own again, streaming
   * models' words are final. Off when pocketsphinx.secondPass is false.
   */
  secondPassModel?: string;
}

export function createSttRegistry(options: SttRegistryOptions = {}): SttRegistry {
  const stt = (options.installed ?? []).filter((m) => m.family === 'stt-offline' || m.family === 'stt-streaming');
  const ps = options.pocketsphinx ?? {};
  const secondPass = options.secondPassModel && ps.secondPass !== false ? { model: options.secondPassModel, ...ps.secondPass } : undefined;
  const sherpa = stt.length ? new SherpaEngine(stt, { ...options.sherpa, ...(secondPass ? { secondPass } : {}) }) : undefined;
  const pocketsphinx = new PocketsphinxEngine(secondPass && sherpa ? { ...ps, externalSecondPass: () => sherpa.secondPassPool() } : ps);
  const registry = new SttRegistry(options).registerEngine(pocketsphinx).registerModel(POCKETSPHINX_EN_MODEL);
  if (!sherpa) return registry;
  registry.registerEngine(sherpa);
  for (const m of stt) {
    registry.registerModel({
      id: m.id,
      engineId: SHERPA_ENGINE_ID,
      engineModel: m.id,
      languages: m.languages,
      features: m.family === 'stt-streaming' ? SHERPA_STREAMING_FEATURES : SHERPA_OFFLINE_FEATURES,
      description: m.name ?? `${m.type} model from ${m.dir}`,
    });
  }
  return registry;
}
