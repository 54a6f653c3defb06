// The worker side of cloned voices: one job per voice and TTS model, processing → ready | failed. The clip is
// judged here, not at upload (spec): over 2 minutes → voice_audio_too_long; undecodable, empty or without
// measurable speech → voice_invalid_audio. Idempotent: a job re-run after a crash finds the row still
// processing and does the work again (the result is the same); a finished row is left alone.
// With a speaker-embedding model installed the clip's embedding is stored with its profile (computed again when the
// model changes), and the cloner matches base voices on it.
import { AudioDecodeError, decodeToBuffer, PCM_BYTES_PER_SECOND } from '../../audio/decode.js';
import type { VoiceProfile } from '../../audio/features.js';
import { AudioProbeError, probeAudioFile } from '../../audio/probe.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import type { Job, JobQueue } from '../../jobs/queue.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { measureReference, pcmSamples, UnusableReference, type VoiceCloner } from './cloning.js';
import type { VoicesRepository } from './repository.js';
import { PREPARE_JOB, type PrepareJobPayload } from './service.js';
import { BATCH_NICE } from '../../lib/priority.js';

/** The spec's reference clip limit. */
export const MAX_CLIP_MS = 120_000;

/** A clip problem, recorded on the model row (error_type + message), not retried. */
class ClipRejected extends Error {
  constructor(
    readonly type: 'voice_audio_too_long' | 'voice_invalid_audio',
    message: string,
  ) {
    super(message);
  }
}

export interface VoiceProcessorOptions {
  concurrency: number;
  clock?: Clock;
  log?: (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;
}

const MAX_ATTEMPTS = 3;

/** What is stored of a reference clip: its profile, and its speaker embedding when a model made one. */
type StoredReference = VoiceProfile & { speaker_embedding?: { model: string; vector: number[] } };

export class VoiceProcessor {
  private readonly clock: Clock;

  constructor(
    private readonly repo: VoicesRepository,
    private readonly blobs: BlobStore,
    private readonly registry: TtsRegistry,
    private readonly cloner: VoiceCloner,
    private readonly opts: VoiceProcessorOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  register(queue: JobQueue): void {
    queue.work<PrepareJobPayload>(PREPARE_JOB, (job) => this.prepare(job), { concurrency: this.opts.concurrency, maxAttempts: MAX_ATTEMPTS });
  }

  private async fail(voiceId: string, model: string, type: string, message: string): Promise<void> {
    await this.repo.finish(voiceId, model, { status: 'failed', error_type: type, error_message: message, adaptation: null }, this.clock.now().toISOString());
  }

  async prepare(job: Job<PrepareJobPayload>): Promise<void> {
    const { voice_id: voiceId, model: modelId } = job.payload;
    const voice = await this.repo.getById(voiceId);
    if (!voice) return; // deleted meanwhile
    const row = await this.repo.model(voiceId, modelId);
    if (row?.status !== 'processing') return; // finished by an earlier run
    const model = this.registry.resolve(modelId);
    if (!model) {
      // The model was disabled since: it is not_computed for the voice until it is offered (and recomputed) again.
      await this.repo.deleteModel(voiceId, modelId);
      return;
    }
    try {
      let reference = voice.reference_profile ? (JSON.parse(voice.reference_profile) as StoredReference) : undefined;
      const embedder = this.cloner.embedder;
      if (!reference || (embedder && reference.speaker_embedding?.model !== embedder.modelId)) {
        const pcm = await this.blobs.withLocalFile(voice.blob_key, (file) => this.decodeClip(file, job.signal));
        reference ??= await this.measure(pcm);
        if (embedder)
          reference = { ...reference, speaker_embedding: { model: embedder.modelId, vector: Array.from(await embedder.embed(pcmSamples(pcm), job.signal)) } };
        await this.repo.setReferenceProfile(voiceId, JSON.stringify(reference));
      }
      const adaptation = await this.cloner.prepare(reference, model, job.signal, embedder ? reference.speaker_embedding?.vector : undefined);
      await this.repo.finish(
        voiceId,
        modelId,
        { status: 'ready', error_type: null, error_message: null, adaptation: JSON.stringify(adaptation) },
        this.clock.now().toISOString(),
      );
      this.opts.log?.('info', 'cloned voice ready', { voice_id: voiceId, model: modelId, ...adaptation });
    } catch (err) {
      if (err instanceof ClipRejected) return this.fail(voiceId, modelId, err.type, err.message);
      if (job.signal.aborted) throw err; // stopping: the job is given back and resumes after restart
      // An engine or server fault: retried; the last attempt records it so the voice does not stay processing.
      if (job.attempt >= job.maxAttempts) {
        this.opts.log?.('error', 'cloned voice preparation failed', { voice_id: voiceId, model: modelId, err });
        return this.fail(voiceId, modelId, 'internal_error', 'The voice could not be prepared because of a server error.');
      }
      throw err;
    }
  }

  /** Duration check and decode of the stored clip (16 kHz PCM). */
  private async decodeClip(file: string, signal: AbortSignal): Promise<Buffer> {
    let durationMs: number | null;
    try {
      durationMs = (await probeAudioFile(file)).durationMs;
    } catch (err) {
      if (err instanceof AudioProbeError) throw new ClipRejected('voice_invalid_audio', `The reference clip is not usable audio: ${err.message}.`);
      throw err;
    }
    if (durationMs !== null && durationMs > MAX_CLIP_MS)
      throw new ClipRejected(
        'voice_audio_too_long',
        `The reference clip is ${(durationMs / 1000).toFixed(1)} s long; at most ${MAX_CLIP_MS / 1000} s are allowed.`,
      );
    let pcm: Buffer;
    try {
      // One second past the limit is enough to tell a clip whose container did not state its duration.
      pcm = await decodeToBuffer(file, { maxSeconds: MAX_CLIP_MS / 1000 + 1, signal, nice: BATCH_NICE });
    } catch (err) {
      // A decoder killed from outside is not the clip's fault: the error goes to the queue, which runs the job again.
      if (err instanceof AudioDecodeError && !err.interrupted)
        throw new ClipRejected('voice_invalid_audio', `The reference clip could not be decoded: ${err.message}.`);
      throw err;
    }
    if (pcm.length > (MAX_CLIP_MS / 1000) * PCM_BYTES_PER_SECOND)
      throw new ClipRejected('voice_audio_too_long', `The reference clip is longer than ${MAX_CLIP_MS / 1000} s.`);
    if (pcm.length === 0) throw new ClipRejected('voice_invalid_audio', 'The reference clip is empty.');
    return pcm;
  }

  /** Speaker measurement of the decoded clip. */
  private async measure(pcm: Buffer): Promise<VoiceProfile> {
    try {
      return await measureReference(pcm);
    } catch (err) {
      if (err instanceof UnusableReference) throw new ClipRejected('voice_invalid_audio', `The reference clip is not usable: ${err.message}.`);
      throw err;
    }
  }
}
