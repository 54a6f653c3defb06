// The scripted engine in the engine catalog, for tests: one model, `scripted-v1`, offered for files and for live
// sessions under its own id, that plays `script` (engine.ts). Not in ENGINES: a test adds it to the list.
import type { SttEngineDescriptor } from '../descriptor.js';
import { type Script, SCRIPTED_FEATURES, scriptedEngine } from './engine.js';

export function scriptedSttEngine(script: Script, languages: readonly string[] = ['en']): SttEngineDescriptor {
  return {
    family: 'stt',
    id: 'scripted',
    build: () => ({
      engine: scriptedEngine(script, languages),
      models: [
        {
          id: 'scripted-v1',
          engineId: 'scripted',
          engineModel: 'script',
          languages,
          features: SCRIPTED_FEATURES,
          offers: [
            { id: 'scripted-v1', name: 'Scripted words (tests)', mode: 'async' },
            { id: 'scripted-v1', name: 'Scripted words (tests)', mode: 'real_time' },
          ],
        },
      ],
    }),
  };
}
