// Async transcription: the service behind /v1/transcriptions, the job processor on nodes that run jobs (recognition,
// diarization, language identification, enrolled speakers, webhooks), and the routes.
import type { DiarizationEngine, MatchThresholds } from '../../engines/diarization/interface.js';
import type { LanguageIdentifier } from '../../engines/language-id/engine.js';
import { mount, type Mount } from '../../http/app-types.js';
import { observeWebhooks } from '../../http/metrics.js';
import type { ProcessParts } from '../../process-parts.js';
import type { BillingGuard } from '../billing/guard.js';
import type { FilesService } from '../files/service.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { SpeakersService } from '../speakers/service.js';
import type { UsageMeter } from '../usage/service.js';
import { webhookBackoffMs } from '../webhooks/delivery.js';
import { audioFetcher, webhookSender } from './outbound-http.js';
import { TranscriptionProcessor } from './processor.js';
import { TranscriptionsRepository } from './repository.js';
import { transcriptionsRoutes } from './routes.js';
import { TranscriptionsService } from './service.js';

export interface TranscriptionsDeps {
  files: FilesService;
  models: ModelCatalog;
  billing: BillingGuard;
  meter: UsageMeter;
  speakers: SpeakersService;
  speakerMatch: MatchThresholds;
  diarizer: DiarizationEngine;
  /** The language-identification model in use now, if any (it changes with the models directory). */
  languageId?: () => LanguageIdentifier | undefined;
}

export function transcriptionsModule(parts: ProcessParts, deps: TranscriptionsDeps): { transcriptions: TranscriptionsService; routes: Mount } {
  const { settings, blobs, queue } = parts;
  const { files, models, billing, speakers } = deps;
  const profile = settings.compat as 'spec' | 'soniox-sdk';
  const repo = new TranscriptionsRepository(parts.db.kysely);
  const transcriptions = new TranscriptionsService(repo, files, models, queue, billing, parts.cursors, blobs, {
    profile,
    pendingCap: settings.transcribeAsyncPendingNumFiles,
    formatText: settings.textFormatting,
    allowPrivateHosts: settings.allowPrivateHosts,
    speakers,
  });
  // An API node registers no handlers: the jobs it enqueues stay queued for the worker nodes.
  if (parts.runsJobs)
    new TranscriptionProcessor(
      transcriptions,
      repo,
      files,
      blobs,
      models,
      billing,
      audioFetcher(settings),
      observeWebhooks(webhookSender(settings), parts.metrics),
      {
        profile,
        maxAudioMs: settings.asyncMaxAudioSeconds * 1000,
        maxTokens: settings.transcriptMaxTokens,
        concurrency: settings.transcriptionConcurrency,
        webhookMaxAttempts: settings.webhookMaxAttempts,
        // webhookBackoffMs's schedule starts at 5 s; the setting scales the whole schedule.
        webhookBackoffMs: (attempt) => (webhookBackoffMs(attempt) * settings.webhookRetryBaseSeconds) / 5,
        diarizer: deps.diarizer,
        languageId: deps.languageId,
        speakers: { enrolled: (projectId, ids) => speakers.stillEnrolled(projectId, ids), thresholds: deps.speakerMatch },
        log: parts.jobLog,
        meter: deps.meter,
      },
    ).register(queue);
  return { transcriptions, routes: mount(transcriptionsRoutes, { transcriptions }) };
}
