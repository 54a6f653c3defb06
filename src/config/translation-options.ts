// Engines take resolved options and never read the settings table: the translation registry's are resolved here.
import type { TranslationRegistryOptions } from '../engines/translate/registry.js';
import type { Settings } from './settings.js';

/** Registry options from the settings table (server and CLI alike). */
export function translationOptionsFrom(
  settings: Pick<Settings, 'translationEnabled' | 'apertiumDataDir' | 'translationMaxProcesses' | 'translationSpareIdleSeconds' | 'translationTimeoutSeconds'>,
): TranslationRegistryOptions {
  return {
    enabled: settings.translationEnabled,
    apertium: {
      dataDir: settings.apertiumDataDir,
      maxProcesses: settings.translationMaxProcesses,
      idleMs: settings.translationSpareIdleSeconds * 1000,
      timeoutMs: settings.translationTimeoutSeconds * 1000,
    },
  };
}
