// The worker side of enrolled speakers: one job per revision of a speaker's sample set, processing → ready | failed.
// Each sample is measured once (its voice print kept on its row; again only when the installed speaker-embedding
// model changed) and metered then; the speaker's profile is the prints merged. Samples are judged here, not at upload:
// undecodable, empty or over 5 minutes → speaker_invalid_audio (naming the sample); less speech than the minimum
// across all samples → speaker_audio_too_short. Idempotent: a re-run finds the revision still processing and does the
// work again with the prints already kept; a result for an old revision (samples changed meanwhile) is dropped.
import type { DiarizationEngine } from '../../engines/diarization/interface.js';
import type { VoicePrint } from '../../engines/diarization/interface.js';
import { mergePrints } from '../../engines/diarization/voice-print.js';
import type { Job, JobQueue } from '../../jobs/queue.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { UsageMeter } from '../usage/service.js';
import { ClipRejected, measureClip } from './measure-clip.js';
import type { SpeakerSampleRow, SpeakersRepository } from './repository.js';
import { PROFILE_JOB, type ProfileJobPayload } from './service.js';

/** Longest enrolment sample. */
export const MAX_SAMPLE_SECONDS = 300;
/** The usage record's model when no speaker-embedding model measured the samples. */
export const FEATURES_MODEL = 'parlance-speaker-features-v1';

class SampleRejected extends Error {
  constructor(
    readonly type: 'speaker_invalid_audio',
    message: string,
  ) {
    super(message);
  }
}

export interface SpeakerProcessorOptions {
  concurrency: number;
  /** Speech the samples must hold together, ms. */
  minSpeechMs: number;
  /** The speaker-embedding model in use now (the diarizer adds its embeddings to prints), if any. */
  embeddingModel?: () => string | undefined;
  meter?: UsageMeter;
  clock?: Clock;
  log?: (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;
}

const MAX_ATTEMPTS = 3;

export class SpeakerProcessor {
  private readonly clock: Clock;

  constructor(
    private readonly repo: SpeakersRepository,
    private readonly blobs: BlobStore,
    private readonly diarizer: DiarizationEngine,
    private readonly opts: SpeakerProcessorOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  register(queue: JobQueue): void {
    queue.work<ProfileJobPayload>(PROFILE_JOB, (job) => this.profile(job), { concurrency: this.opts.concurrency, maxAttempts: MAX_ATTEMPTS });
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private async fail(id: string, revision: number, type: string, message: string): Promise<void> {
    await this.repo.finish(id, revision, { status: 'failed', error_type: type, error_message: message, profile: null, speech_ms: null }, this.now());
  }

  async profile(job: Job<ProfileJobPayload>): Promise<void> {
    const { speaker_id: id, revision } = job.payload;
    const speaker = await this.repo.getById(id);
    // Deleted, or its samples changed since (that revision's job does the work), or done by an earlier run.
    if (!speaker || speaker.revision !== revision || speaker.status !== 'processing') return;
    try {
      const prints: VoicePrint[] = [];
      for (const sample of await this.repo.samples(id)) prints.push(await this.printOf(sample, job.signal));
      const profile = mergePrints(prints);
      const minMs = this.opts.minSpeechMs;
      if (profile.speechMs < minMs)
        return this.fail(
          id,
          revision,
          'speaker_audio_too_short',
          `The samples hold ${(profile.speechMs / 1000).toFixed(1)} s of speech; at least ${(minMs / 1000).toFixed(1)} s are needed. Add more audio of this speaker.`,
        );
      const done = await this.repo.finish(
        id,
        revision,
        { status: 'ready', error_type: null, error_message: null, profile: JSON.stringify(profile), speech_ms: Math.round(profile.speechMs) },
        this.now(),
      );
      if (done)
        this.opts.log?.('info', 'speaker profile ready', {
          speaker_id: id,
          revision,
          speech_ms: profile.speechMs,
          embedding: profile.embedding?.model ?? null,
        });
    } catch (err) {
      if (err instanceof SampleRejected) return this.fail(id, revision, err.type, err.message);
      if (job.signal.aborted) throw err; // stopping: the job is given back and resumes after restart
      if (job.attempt >= job.maxAttempts) {
        this.opts.log?.('error', 'speaker profile failed', { speaker_id: id, revision, err });
        return this.fail(id, revision, 'internal_error', 'The speaker profile could not be computed because of a server error.');
      }
      throw err;
    }
  }

  /** The sample's kept print, or a new measurement (stored, and metered once per sample). */
  private async printOf(sample: SpeakerSampleRow, signal: AbortSignal): Promise<VoicePrint> {
    const kept = sample.print ? (JSON.parse(sample.print) as VoicePrint) : undefined;
    const embeddingModel = this.opts.embeddingModel?.();
    if (kept && kept.embedding?.model === embeddingModel) return kept;
    const startedAt = this.clock.now();
    const { print, audioMs } = await this.measure(sample, signal);
    await this.repo.setSamplePrint(sample.id, JSON.stringify(print), Math.round(print.speechMs));
    // Metered under the sample's id: a re-run (or a re-measure for a new embedding model) stores it once.
    await this.opts.meter?.meter({
      id: sample.id,
      kind: 'speaker_enrolment',
      actor: { organizationId: sample.organization_id, projectId: sample.project_id, apiKeyId: sample.api_key_id, source: sample.source },
      requestId: sample.request_id,
      clientReferenceId: null,
      model: embeddingModel ?? FEATURES_MODEL,
      startTime: startedAt,
      inputAudioMs: audioMs,
    });
    return print;
  }

  private measure(sample: SpeakerSampleRow, signal: AbortSignal): Promise<{ print: VoicePrint; audioMs: number }> {
    // A scoped local copy where blobs are not local files (S3).
    return this.blobs.withLocalFile(sample.blob_key, (file) => this.measureFile(file, sample, signal));
  }

  private async measureFile(file: string, sample: SpeakerSampleRow, signal: AbortSignal): Promise<{ print: VoicePrint; audioMs: number }> {
    try {
      return await measureClip(this.diarizer, file, {
        maxSeconds: MAX_SAMPLE_SECONDS,
        tooLong: `is longer than ${MAX_SAMPLE_SECONDS / 60} minutes; split it or trim it`,
        signal,
      });
    } catch (err) {
      if (err instanceof ClipRejected) throw new SampleRejected('speaker_invalid_audio', `Enrolment sample ${sample.id} (${sample.filename}) ${err.why}.`);
      throw err;
    }
  }
}
