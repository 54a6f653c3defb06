// The STT models this build ships, wired into a registry. The API layer creates one registry at start-up and
// resolves client model ids through it; engines load their models lazily on first use.
import { PocketsphinxEngine, POCKETSPHINX_FEATURES } from './pocketsphinx/engine.js';
import type { PocketsphinxOptions } from './pocketsphinx/options.js';
import { SttRegistry, type SttModelDescriptor } from './registry.js';

export type { Recognizer, StreamingSession, SttEngine, SttFeatures, Token } from './interface.js';
export { EngineUnavailableError, STT_SAMPLE_RATE } from './interface.js';
export { SttRegistry, type ResolvedModel, type SttModelDescriptor } from './registry.js';
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

export interface SttRegistryOptions {
  pocketsphinx?: PocketsphinxOptions;
}

export function createSttRegistry(options: SttRegistryOptions = {}): SttRegistry {
  return new SttRegistry().registerEngine(new PocketsphinxEngine(options.pocketsphinx)).registerModel(POCKETSPHINX_EN_MODEL);
}
