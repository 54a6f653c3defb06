// The speech engines of a process and the model catalog over them: the engine catalog from the settings and the
// installed models, the labelling models (the diarizer, speaker embeddings and spoken-language identification:
// labelling.ts), and the /v1/models routes; the models served without a restart (live.ts), and their management over
// HTTP (modelsAdminModule: /v1/admin/models).
import type { Logger } from 'pino';
import { engineOptionsFrom } from '../../config/engine-options.js';
import type { Settings } from '../../config/settings.js';
import { EngineCatalog } from '../../engines/catalog.js';
import { loadCatalogue } from '../../engines/model-dir/catalogue.js';
import { ConfigError } from '../../lib/config-error.js';
import type { DiarizationEngine, MatchThresholds } from '../../engines/diarization/interface.js';
import { MIN_HEARD_SPEECH_MS } from '../../engines/diarization/voice-print.js';
import { mount, type Mount } from '../../http/app-types.js';
import type { Metrics } from '../../http/metrics.js';
import type { JobLog } from '../../jobs/queue.js';
import type { ProcessParts } from '../../process-parts.js';
import { ModelAdmin } from './admin.js';
import { adminModelsRoutes } from './admin-routes.js';
import { ModelCatalog } from './catalog.js';
import { aliasesOf, installedModels, secondPassModelOf } from './installed.js';
import { LabellingModels } from './labelling.js';
import { LiveModels } from './live.js';
import { ModelRecords } from './records.js';
import { modelsRoutes } from './routes.js';
import { ModelUse } from './use.js';

export interface SpeechModule {
  engines: EngineCatalog;
  models: ModelCatalog;
  /**
   * One diarizer for both surfaces: it runs after (async) or beside (real-time) any STT model; files are diarized
   * with speaker embeddings while a speaker-embedding model is installed (labelling.diarizer).
   */
  diarizer: DiarizationEngine;
  /** The language-identification and speaker-embedding models in use now (they change with the models directory). */
  labelling: LabellingModels;
  /** How close a voice must be to an enrolled speaker's to be named. */
  speakerMatch: MatchThresholds;
  /** The models users brought, kept in step with the models directory while the server runs. */
  live: LiveModels;
  /** Models this node uses in a role read at start (the second pass): not removed while it runs. */
  pinned: ReadonlySet<string>;
  routes: Mount;
  close(): Promise<void>;
}

export async function speechModule(settings: Settings, deps: { servesApi: boolean; log: Logger; jobLog: JobLog; metrics: Metrics }): Promise<SpeechModule> {
  const { log, jobLog, metrics } = deps;
  const installed = installedModels(settings);
  if (installed.length) log.info({ models_dir: settings.modelsDir, models: installed.map((m) => `${m.id} (${m.family} ${m.type})`) }, 'models found');
  const secondPassModel = secondPassModelOf(installed, settings);
  const options = engineOptionsFrom(settings, { installed, servesApi: deps.servesApi, secondPassModel, log: jobLog });
  const onLoaded = (model: string, ms: number) => metrics.modelLoadSeconds.observe({ model }, ms / 1000);
  const engines = await EngineCatalog.create({ ...options, stt: { ...options.stt, onLoaded } });
  const pairs = engines.translation.pairs();
  if (settings.translationEnabled && pairs.length === 0)
    log.warn({ apertium_data_dir: settings.apertiumDataDir }, 'no translation pairs found: install apertium and apertium-<pair> packages to offer translation');
  else log.info({ pairs: pairs.map((p) => `${p.source}-${p.target}`) }, 'translation pairs');
  const use = new ModelUse();
  const models = new ModelCatalog(engines, aliasesOf(installed, engines.stt.offers(), settings), use);
  // Live streams stay BIC; files are diarized with speaker embeddings when a speaker-embedding model is installed.
  const labelling = new LabellingModels(installed, { log, jobLog, idleUnloadMs: settings.modelIdleUnloadSeconds * 1000 });
  const live = new LiveModels({
    modelsDir: settings.modelsDir,
    engines,
    catalog: models,
    use,
    installed,
    labelling,
    sttAliasPairs: settings.sttModelAliases,
    ttsEnabled: settings.ttsModels,
    ttsOptions: options.tts ?? {},
    idleUnloadMs: settings.modelIdleUnloadSeconds * 1000,
    log,
  });
  live.startSweeper();
  metrics.gauge(
    'parlance_models_loaded',
    'Models users brought (speech-to-text, voices, language identification, speaker embeddings) whose weights are in this node’s memory now.',
    () => live.loadedCount(),
  );
  const pinned = new Set([secondPassModel].filter((id): id is string => id !== undefined));
  return {
    engines,
    models,
    diarizer: labelling.diarizer,
    labelling,
    speakerMatch: { maxDistance: settings.speakerMatchMaxDistance, minSimilarity: settings.speakerMatchMinSimilarity, minSpeechMs: MIN_HEARD_SPEECH_MS },
    live,
    pinned,
    routes: mount(modelsRoutes, { models }),
    async close() {
      await live.close();
      await engines.close();
      await labelling.close();
    },
  };
}

/**
 * The server's models over HTTP: the records of pulls, the pull job (on nodes that run jobs), the routes, and each
 * node's watch for changes made by another node; PARLANCE_MODELS pulled at start when missing.
 */
export function modelsAdminModule(parts: ProcessParts, speech: SpeechModule): { admin: ModelAdmin; routes: Mount; pullConfigured(): Promise<void> } {
  const { settings } = parts;
  // A catalogue file that cannot be used stops the start, as the CLI's one line would.
  try {
    loadCatalogue(settings.modelsCatalogue || undefined);
  } catch (err) {
    throw new ConfigError(`PARLANCE_MODELS_CATALOGUE (modelsCatalogue): ${(err as Error).message}`);
  }
  const records = new ModelRecords(parts.db.kysely);
  const admin = new ModelAdmin({
    settings,
    records,
    queue: parts.queue,
    live: speech.live,
    stt: speech.engines.stt,
    tts: speech.engines.tts,
    metrics: parts.metrics,
    log: parts.log,
    pinned: speech.pinned,
  });
  if (parts.runsJobs) admin.register(parts.queue);
  speech.live.startSync(() => records.version(), settings.modelSyncSeconds * 1000);
  return {
    admin,
    routes: mount(adminModelsRoutes, { admin }),
    // An explicit opt-in of the operator's: nothing is downloaded otherwise.
    pullConfigured: () => admin.pullMissing(settings.models),
  };
}
