// The services of one process, assembled from settings: storage, engines, queues, limits and their housekeeping.
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { pino } from 'pino';
import { ConfigError, type Settings } from './config/settings.js';
import { engineOptionsFrom } from './config/engine-options.js';
import { BicDiarizer } from './engines/diarization/index.js';
import { EmbeddingDiarizer } from './engines/diarization/embedding-diarizer.js';
import { speakerEngineFor } from './engines/speaker/engine.js';
import { languageIdentifierFor } from './engines/language-id/engine.js';
import { EngineCatalog } from './engines/catalog.js';
import { createJobQueue } from './jobs/index.js';
import type { JobLog, JobQueue } from './jobs/queue.js';
import { BudgetGuard } from './modules/billing/guard.js';
import { PriceTable } from './modules/usage/prices.js';
import { UsageRepository } from './modules/usage/repository.js';
import { usageRoutes } from './modules/usage/routes.js';
import { UsageService } from './modules/usage/service.js';
import { ModelCatalog } from './modules/models/catalog.js';
import { aliasesOf, installedModels, secondPassModelOf } from './modules/models/installed.js';
import { TranscriptionProcessor } from './modules/transcriptions/processor.js';
import { audioFetcher, webhookSender } from './modules/transcriptions/outbound-http.js';
import { TranscriptionsRepository } from './modules/transcriptions/repository.js';
import { transcriptionsRoutes } from './modules/transcriptions/routes.js';
import { modelsRoutes } from './modules/models/routes.js';
import { openaiRoutes } from './modules/openai/routes.js';
import { TranscriptionsService } from './modules/transcriptions/service.js';
import { synthesisGate } from './engines/tts/process.js';
import { countedMeter, Metrics, observeJobs, observeWebhooks } from './http/metrics.js';
import { ttsRoutes } from './modules/tts/routes.js';
import { TtsService } from './modules/tts/service.js';
import { ttsWebSocketSurface } from './modules/tts/ws.js';
import { VoiceCloner } from './modules/voices/cloning.js';
import { VoiceProcessor } from './modules/voices/processor.js';
import { VoicesRepository } from './modules/voices/repository.js';
import { voicesRoutes } from './modules/voices/routes.js';
import { consoleRoutes } from './modules/console/routes.js';
import { VoicesService } from './modules/voices/service.js';
import { openAiRealtimeHandler } from './modules/openai/realtime-routes.js';
import type { MatchThresholds } from './engines/diarization/interface.js';
import { MIN_HEARD_SPEECH_MS } from './engines/diarization/voice-print.js';
import { SpeakerProcessor } from './modules/speakers/processor.js';
import { SpeakersRepository } from './modules/speakers/repository.js';
import { speakersRoutes } from './modules/speakers/routes.js';
import { SpeakersService } from './modules/speakers/service.js';
import { realtimeWsHandler } from './modules/realtime/routes.js';
import { realtimeSessionOptions } from './modules/realtime/options.js';
import { RealtimeService } from './modules/realtime/service.js';
import { webhookBackoffMs } from './modules/webhooks/delivery.js';
import type { AppContext } from './http/context.js';
import { nodeRole } from './config/node-role.js';
import { notingWsProject } from './http/websocket-session.js';
import type { LiveSurface } from './lib/live-set.js';
import { CursorCodec } from './lib/cursor.js';
import { randomToken } from './lib/ids.js';
import { KeyRepository } from './modules/auth/repository.js';
import { authRoutes } from './modules/auth/routes.js';
import { AuthService } from './modules/auth/service.js';
import { FilesRepository } from './modules/files/repository.js';
import { filesRoutes } from './modules/files/routes.js';
import { FilesService } from './modules/files/service.js';
import { RateLimits } from './modules/limits/rate-limits.js';
import { ConcurrencyLimits } from './modules/limits/concurrency.js';
import { LimitsRepository } from './modules/limits/repository.js';
import { limitsRoutes } from './modules/limits/routes.js';
import { StreamHistory, StreamSampler } from './modules/limits/stream-history.js';
import { organizationRoutes } from './modules/organization/routes.js';
import { OrganizationService } from './modules/organization/service.js';
import { openTenancy } from './modules/tenancy/open.js';
import { TenancyRepository } from './modules/tenancy/repository.js';
import { DurablyRemovingBlobStore } from './storage/durable-removal.js';
import { openBlobStore } from './storage/open-blob-store.js';
import { ensureDataDir } from './config/data-dir.js';
import type { Db } from './storage/database.js';

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
  /** Release engines, queue and storage (after the HTTP server closed). */
  close(): Promise<void>;
}

const HOUR_MS = 3_600_000;

export async function createContext(settings: Settings): Promise<ContextHandle> {
  const { servesApi, runsJobs } = nodeRole(settings);
  // The data directory first (one clear line for a wrong --data-dir), then the blob store (an unusable bucket stops
  // the start before any database is created).
  ensureDataDir(settings.dataDir);
  const store = await openBlobStore(settings);
  const { db, tenancy } = await openTenancy(settings);
  // Logs go to stderr: stdout carries the first-start key and the listening address.
  const log = pino({ level: settings.logLevel }, process.stderr);
  // Every module removes blobs through this: a removal the store refuses is kept and retried (issue 17).
  const blobs = new DurablyRemovingBlobStore(store, db.kysely, (msg, detail) => log.warn(detail, msg));
  const metrics = new Metrics();
  const jobLog: JobLog = (level, msg, detail) => log[level]({ ...detail }, msg);
  const keys = new KeyRepository(db.kysely);
  const cursors = new CursorCodec(await instanceSecret(db, 'cursor_secret'));
  let referenceUrl = settings.errorReferenceUrl || `${settings.publicUrl.replace(/\/+$/, '')}/docs/errors`;
  const files = new FilesService(new FilesRepository(db.kysely, db.dialect), blobs, cursors, settings);
  const installed = installedModels(settings);
  if (installed.length) log.info({ models_dir: settings.modelsDir, models: installed.map((m) => `${m.id} (${m.family} ${m.type})`) }, 'models found');
  const secondPassModel = secondPassModelOf(installed, settings);
  const engines = await EngineCatalog.create(engineOptionsFrom(settings, { installed, servesApi, secondPassModel, log: jobLog }));
  const pairs = engines.translation.pairs();
  if (settings.translationEnabled && pairs.length === 0)
    log.warn({ apertium_data_dir: settings.apertiumDataDir }, 'no translation pairs found: install apertium and apertium-<pair> packages to offer translation');
  else log.info({ pairs: pairs.map((p) => `${p.source}-${p.target}`) }, 'translation pairs');
  const models = new ModelCatalog(engines, aliasesOf(installed, engines.stt.offers(), settings));
  // One diarizer for both surfaces: it runs after (async) or beside (real-time) any STT model.
  // Files are diarized with speaker embeddings when a speaker-embedding model is installed (live streams stay BIC).
  const speakers = speakerEngineFor(installed);
  const diarizer = speakers ? new EmbeddingDiarizer(speakers, { log: jobLog }) : new BicDiarizer({ log: jobLog });
  if (speakers) log.info({ model: speakers.modelId }, 'speaker diarization of files with speaker embeddings');
  const languageId = languageIdentifierFor(installed);
  if (languageId) log.info({ model: languageId.modelId }, 'spoken language identification of transcripts');
  const queue = observeJobs(
    createJobQueue({
      db,
      databaseUrl: settings.databaseUrl || undefined,
      mode: settings.jobQueue as 'local' | 'pg-boss',
      leaseMs: settings.jobLeaseSeconds * 1000,
      heartbeatMs: (settings.jobLeaseSeconds * 1000) / 3,
      log: jobLog,
    }),
    metrics,
    db.kysely,
  );
  metrics.queueDepth(queue);
  const tenancyRepo = new TenancyRepository(db.kysely);
  const usageRepo = new UsageRepository(db.kysely, db.dialect);
  let prices: PriceTable;
  try {
    prices = new PriceTable(settings.usagePrices, usageRepo);
  } catch (err) {
    throw new ConfigError(`PARLANCE_USAGE_PRICES (usagePrices): ${(err as Error).message}`);
  }
  const usage = new UsageService(usageRepo, prices, tenancyRepo, cursors, { event: (detail, msg) => log.warn(detail, msg) });
  const meter = countedMeter(usage, metrics);
  const billing = new BudgetGuard(tenancyRepo, usageRepo);
  // Enrolled speakers: profiles from the diarizer's measurements, recognised by async transcription and live sessions.
  const speakersRepo = new SpeakersRepository(db.kysely, db.dialect);
  const enrolledSpeakers = new SpeakersService(speakersRepo, files, blobs, cursors, queue, {
    maxFileSizeBytes: settings.speakerMaxFileSizeBytes,
    maxSpeakersPerProject: settings.speakersMaxPerProject,
    maxSamplesPerProject: settings.speakerSamplesMaxPerProject,
  });
  const speakerMatch: MatchThresholds = {
    maxDistance: settings.speakerMatchMaxDistance,
    minSimilarity: settings.speakerMatchMinSimilarity,
    minSpeechMs: MIN_HEARD_SPEECH_MS,
  };
  if (runsJobs)
    new SpeakerProcessor(speakersRepo, blobs, diarizer, {
      concurrency: settings.speakerConcurrency,
      minSpeechMs: settings.speakerMinSpeechSeconds * 1000,
      embeddingModel: speakers?.modelId,
      meter,
      log: jobLog,
    }).register(queue);
  const transcriptionsRepo = new TranscriptionsRepository(db.kysely);
  const transcriptions = new TranscriptionsService(transcriptionsRepo, files, models, queue, billing, cursors, blobs, {
    profile: settings.compat as 'spec' | 'soniox-sdk',
    pendingCap: settings.transcribeAsyncPendingNumFiles,
    formatText: settings.textFormatting,
    allowPrivateHosts: settings.allowPrivateHosts,
    speakers: enrolledSpeakers,
  });
  // An API node registers no handlers: the jobs it enqueues stay queued for the worker nodes.
  if (runsJobs) {
    new TranscriptionProcessor(
      transcriptions,
      transcriptionsRepo,
      files,
      blobs,
      models,
      billing,
      audioFetcher(settings),
      observeWebhooks(webhookSender(settings), metrics),
      {
        profile: settings.compat as 'spec' | 'soniox-sdk',
        maxAudioMs: settings.asyncMaxAudioSeconds * 1000,
        maxTokens: settings.transcriptMaxTokens,
        concurrency: settings.transcriptionConcurrency,
        webhookMaxAttempts: settings.webhookMaxAttempts,
        // webhookBackoffMs's schedule starts at 5 s; the setting scales the whole schedule.
        webhookBackoffMs: (attempt) => (webhookBackoffMs(attempt) * settings.webhookRetryBaseSeconds) / 5,
        diarizer,
        languageId,
        speakers: { enrolled: (projectId, ids) => enrolledSpeakers.stillEnrolled(projectId, ids), thresholds: speakerMatch },
        log: jobLog,
        meter,
      },
    ).register(queue);
  }
  const rateLimits = new RateLimits(settings);
  const limitsRepo = new LimitsRepository(db.kysely);
  const concurrency = new ConcurrencyLimits(limitsRepo, {
    defaults: {
      stt: { organization: settings.realtimeConcurrentStreamsOrg, project: settings.realtimeConcurrentStreamsProject },
      tts: { organization: settings.ttsConcurrentOrg, project: settings.ttsConcurrentProject },
    },
    redisUrl: settings.redisUrl || undefined,
    leaseMs: settings.concurrencyLeaseSeconds * 1000,
    log,
  });
  const sampler = new StreamSampler(concurrency, limitsRepo, { intervalMs: settings.concurrencySampleSeconds * 1000, nodeId: randomToken(9), log });
  const auth = new AuthService(keys, { environment: settings.environment });
  const synthesisProcesses = settings.ttsProcesses || availableParallelism();
  synthesisGate.resize(synthesisProcesses);
  metrics.engineSlots(engines);
  metrics.modelLoadFailures(engines.stt);
  // WebSocket sessions name their project in the access log through the keys they authenticate with.
  const tts = new TtsService(engines.tts, notingWsProject(auth), rateLimits, billing, cursors, concurrency, {
    maxTextChars: settings.ttsMaxTextChars,
    maxAudioSeconds: settings.ttsMaxAudioSeconds,
    meter,
    synthesis: { gate: synthesisGate, maxActive: settings.ttsMaxActive || 8 * synthesisProcesses, onRefused: () => metrics.refusals.inc({ kind: 'tts' }) },
  });
  metrics.gauge('parlance_tts_active', 'TTS HTTP requests and WebSocket streams in progress on this node.', () => tts.activeCount);
  metrics.gauge('parlance_tts_synthesizers_running', 'Synthesizer processes running now.', () => synthesisGate.running);
  metrics.gauge('parlance_tts_synthesis_waiting', 'Synthesis segments waiting for a synthesizer process.', () => synthesisGate.waiting);
  const voicesRepo = new VoicesRepository(db.kysely);
  const voices = new VoicesService(voicesRepo, blobs, cursors, engines.tts, queue, { maxFileSizeBytes: settings.voiceMaxFileSizeBytes });
  if (runsJobs) {
    const cloner = new VoiceCloner(settings.voiceProfileCacheDir || path.join(settings.dataDir, 'voice-profiles'), speakers);
    new VoiceProcessor(voicesRepo, blobs, engines.tts, cloner, { concurrency: settings.voiceConcurrency, log: jobLog }).register(queue);
  }
  tts.setClonedVoiceResolver((projectId, voiceId, model) => voices.resolveForSpeech(projectId, voiceId, model));
  const ctx: AppContext = {
    settings,
    log,
    db,
    auth,
    tenancy,
    files,
    transcriptions,
    models,
    tts,
    voices,
    speakers: enrolledSpeakers,
    rateLimits,
    concurrency,
    streamHistory: new StreamHistory(limitsRepo),
    organization: new OrganizationService(new TenancyRepository(db.kysely), keys),
    usage,
    billing,
    cursors,
    metrics,
    errorReferenceUrl: () => referenceUrl,
    routeModules: servesApi
      ? [
          authRoutes,
          filesRoutes,
          transcriptionsRoutes,
          modelsRoutes,
          ttsRoutes,
          voicesRoutes,
          speakersRoutes,
          organizationRoutes,
          limitsRoutes,
          usageRoutes,
          openaiRoutes,
          consoleRoutes,
        ]
      : [],
    wsRoutes: {},
  };
  const realtime = new RealtimeService(
    {
      auth: notingWsProject(ctx.auth),
      models,
      rateLimits: ctx.rateLimits,
      billing,
      concurrency,
      meter,
      speakers: enrolledSpeakers,
      log,
      observe: {
        finalTokenLag: (seconds) => metrics.finalTokenLag.observe(seconds),
        secondPass: ({ decoded, skipped, late, failed }) => {
          for (const [outcome, n] of Object.entries({ decoded, skipped, late, failed })) if (n) metrics.secondPass.inc({ outcome }, n);
        },
      },
      errorReferenceUrl: () => referenceUrl,
    },
    realtimeSessionOptions(settings, { diarizer, speakerMatch, languageId }),
  );
  metrics.gauge('parlance_realtime_sessions', 'Real-time transcription sessions open on this node.', () => realtime.openSessions);
  const ttsSockets = ttsWebSocketSurface(ctx);
  if (servesApi) {
    ctx.wsRoutes['/transcribe-websocket'] = realtimeWsHandler(realtime);
    ctx.wsRoutes['/v1/realtime'] = openAiRealtimeHandler(realtime, { defaultModel: settings.openaiRealtimeModel });
    ctx.wsRoutes['/tts-websocket'] = ttsSockets.handler;
  }
  return {
    ctx,
    queue,
    live: [realtime, ttsSockets],
    preloadSpeech: () =>
      // A model that cannot load is logged by the registry, which refuses it until a request tries it again.
      engines.stt.preload((model, ms) => log.info({ model, ms }, 'speech model loaded')),
    startHousekeeping() {
      const sweep = async () => {
        // Expired temporary keys can never authenticate again; keep a day of them for troubleshooting.
        await keys.deleteExpiredTemporaryKeys(new Date(Date.now() - 24 * HOUR_MS).toISOString());
        const purged = await transcriptions.purgeExpired(settings.transcriptRetentionDays);
        if (purged) log.info({ purged }, 'purged transcripts past their retention window');
        await limitsRepo.deleteSamplesBefore(new Date(Date.now() - settings.concurrencyHistoryRetentionDays * 24 * HOUR_MS).toISOString());
      };
      const run = () => void sweep().catch((err: unknown) => log.warn({ err }, 'housekeeping failed'));
      run();
      const timer = setInterval(run, settings.housekeepingIntervalSeconds * 1000);
      timer.unref();
      const stopSampler = sampler.start();
      // Blob removals the store refused are retried by the nodes that run jobs (an API-only node records them).
      if (runsJobs) blobs.startSweeper();
      return () => {
        clearInterval(timer);
        stopSampler();
      };
    },
    async close() {
      await queue.stop();
      await blobs.stopSweeper();
      await engines.close();
      await speakers?.close();
      await languageId?.close();
      await ctx.rateLimits.close();
      await sampler.settled();
      await concurrency.close();
      await db.close();
    },
    setPublicUrl(url) {
      if (!settings.errorReferenceUrl) referenceUrl = `${url.replace(/\/+$/, '')}/docs/errors`;
    },
  };
}
