// Engines take resolved options and never read the settings table: the engine catalog's are resolved here.
import type { EngineOptions } from '../engines/catalog.js';
import type { InstalledModel } from '../engines/model-dir/manifest.js';
import { narrowbandOption } from '../engines/stt/pocketsphinx/narrowband.js';
import type { RegistryLog } from '../engines/stt/registry.js';
import type { Settings } from './settings.js';
import { translationOptionsFrom } from './translation-options.js';

export interface EngineNode {
  /** The models directory's models. */
  installed: readonly InstalledModel[];
  /** The node serves the API (live sessions); a worker node opens none. */
  servesApi: boolean;
  /** The installed model of live second passes (modules/models/installed.ts, secondPassModelOf). */
  secondPassModel: string | undefined;
  log: RegistryLog;
}

/** The engine catalog's options from the settings table. */
export function engineOptionsFrom(settings: Settings, node: EngineNode): EngineOptions {
  const { installed, servesApi, secondPassModel, log } = node;
  return {
    installed,
    stt: {
      pocketsphinx: {
        ...(settings.sttWorkers ? { poolSize: settings.sttWorkers } : {}),
        ...(settings.realtimeMaxStreams > 0 ? { maxStreams: settings.realtimeMaxStreams } : {}),
        // A worker node opens no real-time session: no decoder waits idle for one.
        ...(!servesApi ? { warmStreams: 0 } : settings.realtimeWarmDecoders >= 0 ? { warmStreams: settings.realtimeWarmDecoders } : {}),
        secondPass: settings.realtimeSecondPass ? { waitMs: settings.realtimeSecondPassWaitMs, coveredMs: settings.realtimeBuiltinSecondPassMs } : false,
        ...narrowbandOption(settings.sttNarrowbandAdaptation),
        log,
      },
      sherpa: { log },
      secondPassModel,
      loadRetryMs: settings.sttLoadRetrySeconds * 1000,
      log,
    },
    tts: { aliases: settings.ttsModelAliases, enabled: settings.ttsModels, log },
    translation: translationOptionsFrom(settings),
  };
}
