// sherpa-onnx in the engine catalog: the STT models users brought, each under its manifest id; an offline model is
// offered for files, a streaming one for live sessions and for files (decoded segment by segment) under the same id.
import type { SttEngineDescriptor } from '../descriptor.js';
import type { InstalledModel } from '../../model-dir/manifest.js';
import type { SttModelDescriptor, TranscriptionMode } from '../registry.js';
import { SHERPA_ENGINE_ID, SHERPA_OFFLINE_FEATURES, SHERPA_STREAMING_FEATURES, SherpaEngine } from './engine.js';

export const sherpaSttEngine: SttEngineDescriptor = {
  family: 'stt',
  id: SHERPA_ENGINE_ID,
  build({ options, installed, secondPass }) {
    // Built with no model too: models brought while the server runs join it (SherpaEngine.addModel).
    const stt = installed.filter((m) => m.family === 'stt-offline' || m.family === 'stt-streaming');
    const engine = new SherpaEngine(stt, { ...options.sherpa, ...(secondPass ? { secondPass } : {}) });
    const models = stt.map((m) => sherpaModelDescriptor(m));
    return { engine, models, ...(secondPass ? { secondPassPool: () => engine.secondPassPool() } : {}) };
  },
};

/** How the registry knows an installed STT model: under its manifest id, in the modes of its family. */
export function sherpaModelDescriptor(m: InstalledModel): SttModelDescriptor {
  const modes: TranscriptionMode[] = m.family === 'stt-streaming' ? ['real_time', 'async'] : ['async'];
  return {
    id: m.id,
    engineId: SHERPA_ENGINE_ID,
    engineModel: m.id,
    languages: m.languages,
    features: m.family === 'stt-streaming' ? SHERPA_STREAMING_FEATURES : SHERPA_OFFLINE_FEATURES,
    description: m.name ?? `${m.type} model from ${m.dir}`,
    offers: modes.map((mode) => ({ id: m.id, name: m.name ?? m.id, mode })),
  };
}
