// apertium in the engine catalog: the pairs installed from Debian's apertium-<pair> packages.
import type { TranslationEngineDescriptor } from '../descriptor.js';
import { ApertiumEngine } from './engine.js';

export const apertiumEngine: TranslationEngineDescriptor = {
  family: 'translate',
  id: 'apertium',
  build: (options) => ApertiumEngine.create(options.apertium),
};
