// pocketsphinx in the engine catalog: the built-in English model, offered for files and for live sessions.
import type { SttEngineDescriptor } from '../descriptor.js';
import type { SttModelDescriptor } from '../registry.js';
import { PocketsphinxEngine, POCKETSPHINX_FEATURES } from './engine.js';

export const POCKETSPHINX_EN_MODEL: SttModelDescriptor = {
  id: 'parlance-en-pocketsphinx-v1',
  aliases: ['pocketsphinx-en-us'],
  engineId: 'pocketsphinx',
  engineModel: 'en-us',
  languages: ['en'],
  features: POCKETSPHINX_FEATURES,
  description: 'English, CMU pocketsphinx 0.8 with the en-us continuous model (Debian pocketsphinx-en-us)',
  offers: [
    { id: 'parlance-async-en-v1', name: 'Parlance English v1 (pocketsphinx), async', mode: 'async' },
    { id: 'parlance-rt-en-v1', name: 'Parlance English v1 (pocketsphinx), real time', mode: 'real_time' },
  ],
};

export const pocketsphinxEngine: SttEngineDescriptor = {
  family: 'stt',
  id: 'pocketsphinx',
  build({ options, secondPassPool }) {
    const ps = options.pocketsphinx ?? {};
    // Live second passes on another engine's model when one is configured (else on its own batch decoders).
    return { engine: new PocketsphinxEngine(secondPassPool ? { ...ps, externalSecondPass: secondPassPool } : ps), models: [POCKETSPHINX_EN_MODEL] };
  },
};
