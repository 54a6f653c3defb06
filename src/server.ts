// Process assembly: settings → storage → services → HTTP. `parlance serve` and the tests use this.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Settings } from './config/settings.js';
import { BicDiarizer } from './engines/diarization/index.js';
import { createSttRegistry } from './engines/stt/index.js';
import { createJobQueue } from './jobs/index.js';
import type { JobLog, JobQueue } from './jobs/queue.js';
import { DownloadBlockedError, DownloadFailedError, downloadToFile } from './lib/ssrf-fetch.js';
import { BalanceGuard } from './modules/billing/guard.js';
import { defaultCatalog, ModelCatalog } from './modules/models/catalog.js';
import { AudioFetchError, type AudioFetcher, TranscriptionProcessor, type WebhookSender } from './modules/transcriptions/processor.js';
import { TranscriptionsRepository } from './modules/transcriptions/repository.js';
import { transcriptionsRoutes } from './modules/transcriptions/routes.js';
import { TranscriptionsService } from './modules/transcriptions/service.js';
import { TtsRegistry } from './engines/tts/registry.js';
import { ttsRoutes } from './modules/tts/routes.js';
import { TtsService } from './modules/tts/service.js';
import { ttsWebSocketHandler } from './modules/tts/ws.js';
import { realtimeWsHandler } from './modules/realtime/routes.js';
import { RealtimeService } from './modules/realtime/service.js';
import { deliverWebhook, webhookBackoffMs } from './modules/webhooks/delivery.js';
import { buildApp, type App } from './http/app.js';
import type { AppContext } from './http/context.js';
import { attachWebSockets } from './http/websocket.js';
import { CursorCodec } from './lib/cursor.js';
import { randomToken } from './lib/ids.js';
import { KeyRepository } from './modules/auth/repository.js';
import { authRoutes } from './modules/auth/routes.js';
import { AuthService } from './modules/auth/service.js';
import { FilesRepository } from './modules/files/repository.js';
import { filesRoutes } from './modules/files/routes.js';
import { FilesService } from './modules/files/service.js';
import { RateLimits } from './modules/limits/rate-limits.js';
import { TenancyRepository } from './modules/tenancy/repository.js';
import { TenancyError, TenancyService } from './modules/tenancy/service.js';
import { LocalBlobStore } from './storage/blob-store.js';
import { DATABASE_FILE, openDatabase, type Db } from './storage/database.js';

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

/** Storage and the tenancy service only: what the admin CLI needs. */
export async function openTenancy(
  settings: Settings,
  opts: { mustExist?: boolean } = {},
): Promise<{ db: Db; tenancy: TenancyService; close(): Promise<void> }> {
  // A mistyped --data-dir should say so, not quietly create an empty database there.
  if (opts.mustExist && !settings.databaseUrl && !existsSync(path.join(settings.dataDir, DATABASE_FILE)))
    throw new TenancyError(`no Parlance database in ${settings.dataDir} (start \`parlance serve\` or run \`parlance admin bootstrap\` there first)`);
  const db = await openDatabase({ dataDir: settings.dataDir, databaseUrl: settings.databaseUrl || undefined });
  const tenancy = new TenancyService(new TenancyRepository(db.kysely), new KeyRepository(db.kysely), { environment: settings.environment });
  return { db, tenancy, close: () => db.close() };
}

/** Build every service. The error reference URL defaults to this server's own page, known once it listens. */
export interface ContextHandle {
  ctx: AppContext;
  queue: JobQueue;
  setPublicUrl(url: string): void;
  /** Periodic upkeep; returns a stop function. */
  startHousekeeping(): () => void;
  /** Release engines, queue and storage (after the HTTP server closed). */
  close(): Promise<void>;
}

const HOUR_MS = 3_600_000;

/** audio_url fetches: SSRF-checked, size- and time-capped; failures classified for the job record. */
function audioFetcher(settings: Settings): AudioFetcher {
  return async (url, destPath, signal) => {
    try {
      await downloadToFile(url, destPath, {
        allowPrivateHosts: settings.allowPrivateHosts,
        maxBytes: settings.downloadMaxBytes,
        timeoutMs: settings.downloadTimeoutMs,
        signal,
      });
    } catch (err) {
      if (err instanceof DownloadBlockedError) throw new AudioFetchError('file_download_blocked', err.message);
      if (err instanceof DownloadFailedError) throw new AudioFetchError('file_download_failed', err.message);
      throw err;
    }
  };
}

function webhookSender(settings: Settings): WebhookSender {
  return (d) =>
    deliverWebhook({
      url: d.url,
      body: d.body,
      authHeaderName: d.authHeaderName ?? undefined,
      authHeaderValue: d.authHeaderValue ?? undefined,
      signingSecret: settings.webhookSigningSecret || undefined,
      messageId: d.messageId,
      allowPrivateHosts: settings.allowPrivateHosts,
      timeoutMs: settings.webhookTimeoutMs,
    });
}

export async function createContext(settings: Settings): Promise<ContextHandle> {
  const { db, tenancy } = await openTenancy(settings);
  // Logs go to stderr: stdout carries the first-start key and the listening address.
  const log = pino({ level: settings.logLevel }, process.stderr);
  const jobLog: JobLog = (level, msg, detail) => log[level]({ ...detail }, msg);
  const keys = new KeyRepository(db.kysely);
  const cursors = new CursorCodec(await instanceSecret(db, 'cursor_secret'));
  const blobs = new LocalBlobStore(path.join(settings.dataDir, 'blobs'));
  await blobs.init();
  let referenceUrl = settings.errorReferenceUrl || `${settings.publicUrl.replace(/\/+$/, '')}/docs/errors`;
  const files = new FilesService(new FilesRepository(db.kysely, db.dialect), blobs, cursors, settings);
  const stt = createSttRegistry({ pocketsphinx: { ...(settings.sttWorkers ? { poolSize: settings.sttWorkers } : {}), log: jobLog } });
  const models = new ModelCatalog(stt, defaultCatalog, settings.sttModelAliases);
  // One diarizer for both surfaces: it runs after (async) or beside (real-time) any STT model.
  const diarizer = new BicDiarizer({ log: jobLog });
  const queue = createJobQueue({
    db,
    databaseUrl: settings.databaseUrl || undefined,
    mode: settings.jobQueue as 'local' | 'pg-boss',
    leaseMs: settings.jobLeaseSeconds * 1000,
    heartbeatMs: (settings.jobLeaseSeconds * 1000) / 3,
    log: jobLog,
  });
  const billing = new BalanceGuard(new TenancyRepository(db.kysely));
  const ttsRegistry = await TtsRegistry.create(settings.ttsModelAliases);
  const transcriptionsRepo = new TranscriptionsRepository(db.kysely);
  const transcriptions = new TranscriptionsService(transcriptionsRepo, files, models, queue, billing, cursors, blobs, {
    profile: settings.compat as 'spec' | 'soniox-sdk',
    pendingCap: settings.transcribeAsyncPendingNumFiles,
  });
  new TranscriptionProcessor(transcriptions, transcriptionsRepo, files, blobs, models, billing, audioFetcher(settings), webhookSender(settings), {
    profile: settings.compat as 'spec' | 'soniox-sdk',
    maxAudioMs: settings.asyncMaxAudioSeconds * 1000,
    maxTokens: settings.transcriptMaxTokens,
    concurrency: settings.transcriptionConcurrency,
    webhookMaxAttempts: settings.webhookMaxAttempts,
    // webhookBackoffMs's schedule starts at 5 s; the setting scales the whole schedule.
    webhookBackoffMs: (attempt) => (webhookBackoffMs(attempt) * settings.webhookRetryBaseSeconds) / 5,
    diarizer,
    log: jobLog,
  }).register(queue);
  const rateLimits = new RateLimits(settings);
  const auth = new AuthService(keys, { environment: settings.environment });
  const tts = new TtsService(ttsRegistry, auth, rateLimits, billing, cursors, {
    maxTextChars: settings.ttsMaxTextChars,
    maxAudioSeconds: settings.ttsMaxAudioSeconds,
    maxConcurrentOrg: settings.ttsConcurrentOrg,
    maxConcurrentProject: settings.ttsConcurrentProject,
  });
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
    rateLimits,
    cursors,
    errorReferenceUrl: () => referenceUrl,
    routeModules: [authRoutes, filesRoutes, transcriptionsRoutes, ttsRoutes],
    wsRoutes: {},
  };
  ctx.wsRoutes['/transcribe-websocket'] = realtimeWsHandler(
    new RealtimeService(
      { auth: ctx.auth, models, rateLimits: ctx.rateLimits, billing, log, errorReferenceUrl: () => referenceUrl },
      {
        audioTimeoutMs: settings.realtimeAudioTimeoutSeconds * 1000,
        maxDurationMs: settings.realtimeMaxDurationSeconds * 1000,
        maxConcurrentOrg: settings.realtimeConcurrentStreamsOrg,
        maxConcurrentProject: settings.realtimeConcurrentStreamsProject,
        partialIntervalMs: settings.realtimePartialIntervalMs,
        diarizer,
      },
    ),
  );
  ctx.wsRoutes['/tts-websocket'] = ttsWebSocketHandler(ctx);
  return {
    ctx,
    queue,
    startHousekeeping() {
      const sweep = async () => {
        // Expired temporary keys can never authenticate again; keep a day of them for troubleshooting.
        await keys.deleteExpiredTemporaryKeys(new Date(Date.now() - 24 * HOUR_MS).toISOString());
        const purged = await transcriptions.purgeExpired(settings.transcriptRetentionDays);
        if (purged) log.info({ purged }, 'purged transcripts past their retention window');
      };
      const run = () => void sweep().catch((err: unknown) => log.warn({ err }, 'housekeeping failed'));
      run();
      const timer = setInterval(run, settings.housekeepingIntervalSeconds * 1000);
      timer.unref();
      return () => clearInterval(timer);
    },
    async close() {
      await queue.stop();
      await stt.close();
      await ttsRegistry.close();
      await ctx.rateLimits.close();
      await db.close();
    },
    setPublicUrl(url) {
      if (!settings.errorReferenceUrl) referenceUrl = `${url.replace(/\/+$/, '')}/docs/errors`;
    },
  };
}

export interface RunningServer {
  app: App;
  ctx: AppContext;
  url: string;
  /** Set when this start created the first organization, project and key. */
  bootstrap?: { organization_id: string; project_id: string; api_key: string };
  close(): Promise<void>;
}

export async function startServer(settings: Settings): Promise<RunningServer> {
  const handle = await createContext(settings);
  const { ctx, setPublicUrl, startHousekeeping } = handle;
  let bootstrap: RunningServer['bootstrap'];
  if (!(await ctx.tenancy.isBootstrapped())) {
    const b = await ctx.tenancy.bootstrap();
    bootstrap = { organization_id: b.organization_id, project_id: b.project_id, api_key: b.api_key };
  }
  const app = await buildApp(ctx);
  await app.listen({ host: settings.host, port: settings.port });
  const sockets = attachWebSockets(app.server, ctx.wsRoutes, {
    maxPayload: settings.wsMaxMessageBytes,
    pingIntervalMs: settings.wsPingIntervalSeconds * 1000,
  });
  const addr = app.server.address() as AddressInfo;
  const host = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  setPublicUrl(settings.publicUrl || url);
  // Jobs start after the API listens: a crashed predecessor's jobs resume now.
  await handle.queue.start();
  const stopHousekeeping = startHousekeeping();
  let closed = false;
  return {
    app,
    ctx,
    url,
    bootstrap,
    async close() {
      if (closed) return;
      closed = true;
      stopHousekeeping();
      await sockets.close();
      await app.close();
      await handle.close();
    },
  };
}
