// A translation engine as the engine catalog (engines/catalog.ts) knows it: an id, and how to build it here; its
// capabilities are the directions it finds installed (TranslationEngine.pairs).
import type { ApertiumOptions } from './apertium/engine.js';
import type { TranslationEngine } from './interface.js';

/** The options of the translation engines, resolved from the settings (config/translation-options.ts). */
export interface TranslationEngineOptions {
  apertium?: ApertiumOptions;
}

export interface TranslationEngineDescriptor {
  readonly family: 'translate';
  readonly id: string;
  /** The engine, with the directions installed on this machine (none: it translates nothing here). */
  build(options: TranslationEngineOptions): Promise<TranslationEngine>;
}
