// Cloned voices: the service behind /v1/voices, the job that prepares a voice from its reference clip (on nodes that
// run jobs), the TTS service's resolver of a cloned voice id, and the routes.
import path from 'node:path';
import type { EngineCatalog } from '../../engines/catalog.js';
import type { SpeakerEmbedder } from '../../engines/speaker/engine.js';
import { mount, type Mount } from '../../http/app-types.js';
import type { ProcessParts } from '../../process-parts.js';
import type { TtsService } from '../tts/service.js';
import { VoiceCloner } from './cloning.js';
import { VoiceProcessor } from './processor.js';
import { VoicesRepository } from './repository.js';
import { voicesRoutes } from './routes.js';
import { VoicesService } from './service.js';

export function voicesModule(
  parts: ProcessParts,
  deps: { engines: EngineCatalog; tts: TtsService; speakerEmbeddings?: () => SpeakerEmbedder | undefined },
): { voices: VoicesService; routes: Mount } {
  const { settings, blobs } = parts;
  const repo = new VoicesRepository(parts.db.kysely);
  const voices = new VoicesService(repo, blobs, parts.cursors, deps.engines.tts, parts.queue, { maxFileSizeBytes: settings.voiceMaxFileSizeBytes });
  if (parts.runsJobs) {
    const cloner = new VoiceCloner(settings.voiceProfileCacheDir || path.join(settings.dataDir, 'voice-profiles'), deps.speakerEmbeddings);
    new VoiceProcessor(repo, blobs, deps.engines.tts, cloner, { concurrency: settings.voiceConcurrency, log: parts.jobLog }).register(parts.queue);
  }
  deps.tts.setClonedVoiceResolver((projectId, voiceId, model) => voices.resolveForSpeech(projectId, voiceId, model));
  return { voices, routes: mount(voicesRoutes, { voices }) };
}
