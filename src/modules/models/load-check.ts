// The check a model must pass before it is installed (by `parlance models pull / import` and by the server's HTTP
// pulls): sherpa-onnx loads it in a child process, and a speech model decodes a second of silence, a voice speaks a
// sentence; a model that aborts onnxruntime ends that process instead of this one. Speaker embeddings are checked
// as the server starts them.
import { languageIdConfig } from '../../engines/language-id/identify.js';
import type { InstalledModel } from '../../engines/model-dir/manifest.js';
import { checkModel } from '../../engines/stt/sherpa/engine.js';
import { offlineRecognizerConfig } from '../../engines/stt/sherpa/offline-config.js';
import { onlineRecognizerConfig } from '../../engines/stt/sherpa/online-config.js';
import { SherpaTtsEngine } from '../../engines/tts/sherpa/engine.js';

export async function loadCheck(model: InstalledModel): Promise<void> {
  if (model.family === 'stt-offline') await checkModel(model, 'offline', offlineRecognizerConfig(model));
  else if (model.family === 'stt-streaming') await checkModel(model, 'online', onlineRecognizerConfig(model));
  else if (model.family === 'language-id') await checkModel(model, 'language-id', languageIdConfig(model));
}

/** loadCheck, and a voice is made to speak once (the server offers only voices that pass this). */
export async function installCheck(model: InstalledModel): Promise<void> {
  if (model.family !== 'tts') return loadCheck(model);
  const engine = new SherpaTtsEngine(model, { concurrency: 1 });
  try {
    await engine.init();
  } finally {
    await engine.close?.();
  }
}
