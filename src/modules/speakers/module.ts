// Enrolled speakers: profiles from the diarizer's measurements (built by a job on nodes that run jobs), recognised by
// async transcription and live sessions; the reference clips a request names its own speakers by; and the
// /v1/speakers routes.
import type { DiarizationEngine } from '../../engines/diarization/interface.js';
import { mount, type Mount } from '../../http/app-types.js';
import type { ProcessParts } from '../../process-parts.js';
import type { FilesService } from '../files/service.js';
import type { UsageMeter } from '../usage/service.js';
import { SpeakerProcessor } from './processor.js';
import { ReferenceClips } from './reference-clips.js';
import { SpeakersRepository } from './repository.js';
import { speakersRoutes } from './routes.js';
import { SpeakersService } from './service.js';

export function speakersModule(
  parts: ProcessParts,
  deps: { files: FilesService; diarizer: DiarizationEngine; embeddingModel?: () => string | undefined; meter: UsageMeter },
): { speakers: SpeakersService; references: ReferenceClips; routes: Mount } {
  const { settings, db, blobs } = parts;
  const repo = new SpeakersRepository(db.kysely, db.dialect);
  const speakers = new SpeakersService(repo, deps.files, blobs, parts.cursors, parts.queue, {
    maxFileSizeBytes: settings.speakerMaxFileSizeBytes,
    maxSpeakersPerProject: settings.speakersMaxPerProject,
    maxSamplesPerProject: settings.speakerSamplesMaxPerProject,
  });
  if (parts.runsJobs)
    new SpeakerProcessor(repo, blobs, deps.diarizer, {
      concurrency: settings.speakerConcurrency,
      minSpeechMs: settings.speakerMinSpeechSeconds * 1000,
      embeddingModel: deps.embeddingModel,
      meter: deps.meter,
      log: parts.jobLog,
    }).register(parts.queue);
  // A request's own reference clips are measured where the request is served (API nodes), for that request only.
  const references = new ReferenceClips(blobs, deps.diarizer, settings.speakerMaxFileSizeBytes);
  return { speakers, references, routes: mount(speakersRoutes, { speakers }) };
}
