// The speech engines of a process and the model catalog over them: the engine catalog from the settings and the
// installed models, the diarizer, speaker embeddings and spoken-language identification, and the /v1/models routes.
import type { Logger } from 'pino';
import { engineOptionsFrom } from '../../config/engine-options.js';
import type { Settings } from '../../config/settings.js';
import { EngineCatalog } from '../../engines/catalog.js';
import { BicDiarizer } from '../../engines/diarization/index.js';
import { EmbeddingDiarizer } from '../../engines/diarization/embedding-diarizer.js';
import type { DiarizationEngine, MatchThresholds } from '../../engines/diarization/interface.js';
import { MIN_HEARD_SPEECH_MS } from '../../engines/diarization/voice-print.js';
import { languageIdentifierFor, type WhisperLanguageIdentifier } from '../../engines/language-id/engine.js';
import { type SpeakerEmbeddingEngine, speakerEngineFor } from '../../engines/speaker/engine.js';
import { mount, type Mount } from '../../http/app-types.js';
import type { JobLog } from '../../jobs/queue.js';
import { ModelCatalog } from './catalog.js';
import { aliasesOf, installedModels, secondPassModelOf } from './installed.js';
import { modelsRoutes } from './routes.js';

export interface SpeechModule {
  engines: EngineCatalog;
  models: ModelCatalog;
  /** One diarizer for both surfaces: it runs after (async) or beside (real-time) any STT model. */
  diarizer: DiarizationEngine;
  /** Speaker embeddings, when a speaker-embedding model is installed (files are then diarized with them). */
  speakerEmbeddings?: SpeakerEmbeddingEngine;
  languageId?: WhisperLanguageIdentifier;
  /** How close a voice must be to an enrolled speaker's to be named. */
  speakerMatch: MatchThresholds;
  routes: Mount;
  close(): Promise<void>;
}

export async function speechModule(settings: Settings, deps: { servesApi: boolean; log: Logger; jobLog: JobLog }): Promise<SpeechModule> {
  const { log, jobLog } = deps;
  const installed = installedModels(settings);
  if (installed.length) log.info({ models_dir: settings.modelsDir, models: installed.map((m) => `${m.id} (${m.family} ${m.type})`) }, 'models found');
  const secondPassModel = secondPassModelOf(installed, settings);
  const engines = await EngineCatalog.create(engineOptionsFrom(settings, { installed, servesApi: deps.servesApi, secondPassModel, log: jobLog }));
  const pairs = engines.translation.pairs();
  if (settings.translationEnabled && pairs.length === 0)
    log.warn({ apertium_data_dir: settings.apertiumDataDir }, 'no translation pairs found: install apertium and apertium-<pair> packages to offer translation');
  else log.info({ pairs: pairs.map((p) => `${p.source}-${p.target}`) }, 'translation pairs');
  const models = new ModelCatalog(engines, aliasesOf(installed, engines.stt.offers(), settings));
  // Live streams stay BIC; files are diarized with speaker embeddings when a speaker-embedding model is installed.
  const speakerEmbeddings = speakerEngineFor(installed);
  const diarizer = speakerEmbeddings ? new EmbeddingDiarizer(speakerEmbeddings, { log: jobLog }) : new BicDiarizer({ log: jobLog });
  if (speakerEmbeddings) log.info({ model: speakerEmbeddings.modelId }, 'speaker diarization of files with speaker embeddings');
  const languageId = languageIdentifierFor(installed);
  if (languageId) log.info({ model: languageId.modelId }, 'spoken language identification of transcripts');
  return {
    engines,
    models,
    diarizer,
    speakerEmbeddings,
    languageId,
    speakerMatch: { maxDistance: settings.speakerMatchMaxDistance, minSimilarity: settings.speakerMatchMinSimilarity, minSpeechMs: MIN_HEARD_SPEECH_MS },
    routes: mount(modelsRoutes, { models }),
    async close() {
      await engines.close();
      await speakerEmbeddings?.close();
      await languageId?.close();
    },
  };
}
