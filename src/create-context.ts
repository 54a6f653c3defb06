// The services of one process, assembled from settings: storage, engines, queues, limits and their housekeeping. Each
// module builds its own parts (src/modules/*/module.ts) from the process's shared parts (process-parts.ts).
import { type Logger, pino } from 'pino';
import type { AppContext } from './app-context.js';
import { nodeRole } from './config/node-role.js';
import type { Settings } from './config/settings.js';
import { ensureDataDir } from './config/data-dir.js';
import { mount } from './http/app-types.js';
import { Metrics, observeJobs } from './http/metrics.js';
import { notingWsProject } from './http/websocket-session.js';
import { createJobQueue } from './jobs/index.js';
import type { JobLog, JobQueue } from './jobs/queue.js';
import { CursorCodec } from './lib/cursor.js';
import { randomToken } from './lib/ids.js';
import type { LiveSurface } from './lib/live-set.js';
import { KeyRepository } from './modules/auth/repository.js';
import { authRoutes } from './modules/auth/routes.js';
import { AuthService } from './modules/auth/service.js';
import { consoleRoutes } from './modules/console/routes.js';
import { FilesRepository } from './modules/files/repository.js';
import { filesRoutes } from './modules/files/routes.js';
import { FilesService } from './modules/files/service.js';
import { type LimitsModule, limitsModule } from './modules/limits/module.js';
import { modelsAdminModule, speechModule } from './modules/models/module.js';
import { openaiModule } from './modules/openai/module.js';
import { organizationRoutes } from './modules/organization/routes.js';
import { OrganizationService } from './modules/organization/service.js';
import { realtimeModule } from './modules/realtime/module.js';
import { speakersModule } from './modules/speakers/module.js';
import { openTenancy } from './modules/tenancy/open.js';
import { TenancyRepository } from './modules/tenancy/repository.js';
import { transcriptionsModule } from './modules/transcriptions/module.js';
import type { TranscriptionsService } from './modules/transcriptions/service.js';
import { ttsModule } from './modules/tts/module.js';
import { usageModule } from './modules/usage/module.js';
import { voicesModule } from './modules/voices/module.js';
import type { ProcessParts } from './process-parts.js';
import type { Db } from './storage/database.js';
import { DurablyRemovingBlobStore } from './storage/durable-removal.js';
import { openBlobStore } from './storage/open-blob-store.js';

/** A secret shared by every node (it lives in the database), created on first use. */
async function instanceSecret(db: Db, name: string): Promise<Buffer> {
  const existing = await db.kysely.selectFrom('instance_settings').select('value').where('key', '=', name).executeTakeFirst();
  if (existing) return Buffer.from(existing.value, 'base64url');
  await db.kysely
    .insertInto('instance_settings')
    .values({ key: name, value: randomToken(32) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.kysely.selectFrom('instance_settings').select('value').where('key', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}

/** Build every service. The error reference URL defaults to this server's own page, known once it listens. */
export interface ContextHandle {
  ctx: AppContext;
  queue: JobQueue;
  setPublicUrl(url: string): void;
  /** Periodic upkeep; returns a stop function. */
  startHousekeeping(): () => void;
  /** Surfaces with live sessions (real-time STT, TTS WebSocket) that a graceful shutdown lets finish. */
  live: LiveSurface[];
  /** Load the speech models (and warm real-time decoders) in the background, logging each. */
  preloadSpeech(): Promise<void>;
  /** Queue the pulls of the models PARLANCE_MODELS lists that are not installed (the operator's opt-in). */
  pullConfiguredModels(): Promise<void>;
  /** Release engines, queue and storage (after the HTTP server closed). */
  close(): Promise<void>;
}

const HOUR_MS = 3_600_000;

/** The job queue of the settings' kind, observed in the metrics. */
function openJobQueue(settings: Settings, db: Db, metrics: Metrics, log: JobLog): JobQueue {
  const queue = observeJobs(
    createJobQueue({
      db,
      databaseUrl: settings.databaseUrl || undefined,
      mode: settings.jobQueue as 'local' | 'pg-boss',
      leaseMs: settings.jobLeaseSeconds * 1000,
      heartbeatMs: (settings.jobLeaseSeconds * 1000) / 3,
      log,
    }),
    metrics,
    db.kysely,
  );
  metrics.queueDepth(queue);
  return queue;
}

/** Periodic upkeep: expired temporary keys, transcripts past retention, old stream samples, refused blob removals. */
function startHousekeeping(
  settings: Settings,
  deps: {
    keys: KeyRepository;
    transcriptions: TranscriptionsService;
    limits: LimitsModule;
    blobs: DurablyRemovingBlobStore;
    runsJobs: boolean;
    log: Logger;
  },
): () => void {
  const { keys, transcriptions, limits, log } = deps;
  const sweep = async () => {
    // Expired temporary keys can never authenticate again; keep a day of them for troubleshooting.
    await keys.deleteExpiredTemporaryKeys(new Date(Date.now() - 24 * HOUR_MS).toISOString());
    const purged = await transcriptions.purgeExpired(settings.transcriptRetentionDays);
    if (purged) log.info({ purged }, 'purged transcripts past their retention window');
    await limits.sweep();
  };
  const run = () => void sweep().catch((err: unknown) => log.warn({ err }, 'housekeeping failed'));
  run();
  const timer = setInterval(run, settings.housekeepingIntervalSeconds * 1000);
  timer.unref();
  const stopSampler = limits.startSampler();
  // Blob removals the store refused are retried by the nodes that run jobs (an API-only node records them).
  if (deps.runsJobs) deps.blobs.startSweeper();
  return () => {
    clearInterval(timer);
    stopSampler();
  };
}

export async function createContext(settings: Settings): Promise<ContextHandle> {
  const { servesApi, runsJobs } = nodeRole(settings);
  // The data directory first (one clear line for a wrong --data-dir), then the blob store (an unusable bucket stops
  // the start before any database is created).
  ensureDataDir(settings.dataDir);
  const store = await openBlobStore(settings);
  const { db, tenancy } = await openTenancy(settings);
  // Logs go to stderr: stdout carries the first-start key and the listening address.
  const log = pino({ level: settings.logLevel }, process.stderr);
  const metrics = new Metrics();
  const jobLog: JobLog = (level, msg, detail) => log[level]({ ...detail }, msg);
  const keys = new KeyRepository(db.kysely);
  let referenceUrl = settings.errorReferenceUrl || `${settings.publicUrl.replace(/\/+$/, '')}/docs/errors`;
  const errorReferenceUrl = () => referenceUrl;
  const speech = await speechModule(settings, { servesApi, log, jobLog, metrics });
  const { engines, models, diarizer, speakerMatch, labelling } = speech;
  // The labelling models change with the models directory: each use asks for the one in use now.
  const languageId = () => labelling.languageId();
  const queue = openJobQueue(settings, db, metrics, jobLog);
  const parts: ProcessParts = {
    settings,
    db,
    blobs: new DurablyRemovingBlobStore(store, db.kysely, (msg, detail) => log.warn(detail, msg)),
    cursors: new CursorCodec(await instanceSecret(db, 'cursor_secret')),
    queue,
    log,
    jobLog,
    metrics,
    runsJobs,
  };
  const modelsAdmin = modelsAdminModule(parts, speech);
  const files = new FilesService(new FilesRepository(db.kysely, db.dialect), parts.blobs, parts.cursors, settings);
  const { meter, billing, ...usageParts } = usageModule(settings, { db, cursors: parts.cursors, metrics, log });
  const speakers = speakersModule(parts, { files, diarizer, embeddingModel: () => labelling.speakerEmbeddings()?.modelId, meter });
  const { transcriptions, ...transcriptionParts } = transcriptionsModule(parts, {
    files,
    models,
    billing,
    meter,
    speakers: speakers.speakers,
    speakerMatch,
    diarizer,
    languageId,
  });
  const limits = limitsModule(settings, { db, log });
  const { rateLimits, concurrency } = limits;
  const auth = new AuthService(keys, { environment: settings.environment });
  // WebSocket sessions name their project in the access log through the keys they authenticate with.
  const wsAuth = notingWsProject(auth);
  metrics.engineSlots(engines);
  metrics.modelLoadFailures(engines.stt);
  const { tts, sockets: ttsSockets, ...ttsParts } = ttsModule(parts, { engines, auth: wsAuth, rateLimits, billing, concurrency, meter, errorReferenceUrl });
  const voices = voicesModule(parts, { engines, tts, speakerEmbeddings: () => labelling.speakerEmbeddings() });
  const { realtime, handler: realtimeHandler } = realtimeModule(parts, {
    ...{ auth: wsAuth, models, rateLimits, billing, concurrency, meter, speakers: speakers.speakers },
    ...{ errorReferenceUrl, diarizer, speakerMatch, languageId },
  });
  const openai = openaiModule({
    ...{ auth, blobs: parts.blobs, files, models, references: speakers.references, transcriptions, tts },
    ...{ realtime, realtimeModel: settings.openaiRealtimeModel },
  });
  const ctx: AppContext = {
    ...{ settings, log, db, auth, tenancy, models, tts, realtime, rateLimits, billing, metrics, errorReferenceUrl },
    routes: servesApi
      ? [
          mount(authRoutes, { auth }),
          mount(filesRoutes, { files }),
          transcriptionParts.routes,
          speech.routes,
          modelsAdmin.routes,
          ttsParts.routes,
          voices.routes,
          speakers.routes,
          mount(organizationRoutes, { organization: new OrganizationService(new TenancyRepository(db.kysely), keys) }),
          limits.routes,
          usageParts.routes,
          openai.routes,
          mount(consoleRoutes, { log }),
        ]
      : [],
    wsRoutes: servesApi ? { '/transcribe-websocket': realtimeHandler, '/v1/realtime': openai.handler, '/tts-websocket': ttsSockets.handler } : {},
  };
  return {
    ctx,
    queue,
    live: [realtime, ttsSockets],
    preloadSpeech: () =>
      // A model that cannot load is logged by the registry, which refuses it until a request tries it again.
      engines.stt.preload((model, ms) => log.info({ model, ms }, 'speech model loaded')),
    pullConfiguredModels: () => modelsAdmin.pullConfigured(),
    startHousekeeping: () => startHousekeeping(settings, { keys, transcriptions, limits, blobs: parts.blobs, runsJobs, log }),
    async close() {
      await queue.stop();
      await parts.blobs.stopSweeper();
      await speech.close();
      await limits.close();
      await db.close();
    },
    setPublicUrl(url) {
      if (!settings.errorReferenceUrl) referenceUrl = `${url.replace(/\/+$/, '')}/docs/errors`;
    },
  };
}
