// The worker side of async transcription: queued → downloading → transcribing → completed | failed, and
// webhook delivery. Each step is idempotent and resumes from the last durable state, so a job re-run after
// a crash (kill -9 mid-download or mid-decode) finishes or fails cleanly instead of sticking.
import { applyWordControls, hasWordControls } from '../../text/word-controls.js';
import { speakerBoundsOf, wordControlsOf } from './controls.js';
import { AudioDecodeError, decodeToPcm, PCM_BYTES_PER_SECOND } from '../../audio/decode.js';
import { AudioProbeInterrupted } from '../../audio/probe.js';
import type { Recognizer, Token } from '../../engines/stt/interface.js';
import { TranslationError } from '../../engines/translate/interface.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import type { Job, JobQueue } from '../../jobs/queue.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { isTransientDatabaseError } from '../../storage/transient-errors.js';
import type { TranscriptionStatus } from '../../wire/compat.js';
import type { BillingGuard } from '../billing/guard.js';
import type { FilesService } from '../files/service.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { TranslationConfig, TranslationPlan } from '../translation/plan.js';
import { splitSegments, transcriptTokens } from '../translation/tokens.js';
import { identifySegmentLanguages } from './language-labels.js';
import type { TranscriptionRow, TranscriptionsRepository } from './repository.js';
import type { TranscriptToken } from './schemas.js';
import { addSpeakerLabels, type KnownSpeaker, type Recognition } from './speaker-labels.js';
import { PROCESS_JOB, type ProcessJobPayload, type TranscriptionsService, WEBHOOK_JOB, type WebhookJobPayload } from './service.js';
import { formatTranscript } from '../../text/format.js';
import { recognitionContext } from '../../engines/stt/context.js';
import { BATCH_NICE } from '../../lib/priority.js';
import { JobFailure, recordingApiErrors } from './job-failure.js';
import { channelsOf, joinedText, mergeChannels } from './channels.js';
import { multichannelCount, probeOf } from './job-audio.js';
import { AudioFetchError, type AudioFetcher, type WebhookSender } from './outbound-http.js';
import { deliverTranscriptionWebhook, WEBHOOK_CONCURRENCY } from './webhook-job.js';
import type { ProcessorOptions } from './processor-options.js';

/** Recognised words of one channel (or of the mix), before the language step. */
interface ChannelWords {
  words: (Token & { speaker?: string })[];
  segmentLanguages: (string | undefined)[] | undefined;
  decodedBytes: number;
}

export class TranscriptionProcessor {
  private readonly clock: Clock;

  constructor(
    private readonly service: TranscriptionsService,
    private readonly repo: TranscriptionsRepository,
    private readonly files: FilesService,
    private readonly blobs: BlobStore,
    private readonly catalog: ModelCatalog,
    private readonly billing: BillingGuard,
    private readonly fetchAudio: AudioFetcher,
    private readonly sendWebhook: WebhookSender,
    private readonly opts: ProcessorOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  register(queue: JobQueue): void {
    // A failed transcription is terminal (spec), so handlers record failures on the row instead of throwing for
    // retry. Re-runs are for faults of ours: a crash, or a decoder process killed from outside (process()).
    queue.work<ProcessJobPayload>(PROCESS_JOB, (job) => this.process(job), { concurrency: this.opts.concurrency, maxAttempts: 3 });
    // Deliveries wait on the network, not on this machine: enough of them at once that a few receivers holding
    // their requests until the timeout do not hold every other job's webhook behind them.
    const webhooks = { repo: this.repo, send: this.sendWebhook, profile: this.opts.profile };
    queue.work<WebhookJobPayload>(WEBHOOK_JOB, (job) => deliverTranscriptionWebhook(webhooks, job), {
      concurrency: WEBHOOK_CONCURRENCY,
      maxAttempts: this.opts.webhookMaxAttempts,
      backoffMs: this.opts.webhookBackoffMs,
    });
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private log(level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>): void {
    this.opts.log?.(level, msg, detail);
  }

  async process(job: Job<ProcessJobPayload>): Promise<void> {
    const id = job.payload.id;
    let row = await this.repo.getById(id);
    if (!row || row.status === 'completed' || row.status === 'failed') return;
    const active: TranscriptionStatus[] = ['queued', 'downloading', 'transcribing'];
    try {
      // Budget and balance are checked at the start of download and of transcription (spec).
      await this.assertCanStart(row);
      if (row.status === 'queued') {
        if (!(await this.repo.transition(id, ['queued'], 'downloading', {}, this.now()))) return; // failed or deleted meanwhile
        row = { ...row, status: 'downloading' };
      }
      if (row.status === 'downloading') row = await this.download(row, job.signal);
      if (!row) return;
      await this.transcribe(row, job.signal);
    } catch (err) {
      if (job.signal.aborted) throw err; // stopping: leave the state for the re-run to resume
      if (err instanceof JobFailure) {
        await this.service.fail(id, active, err.type, err.message);
        return;
      }
      if ((err instanceof AudioDecodeError && err.interrupted) || err instanceof AudioProbeInterrupted) {
        // ffmpeg or ffprobe was killed from outside (or lost with the spawner process): the audio is not at fault.
        // The queue runs the job again, resuming from its state (the audio stays next to it); the last attempt
        // records it.
        if (job.attempt < job.maxAttempts) {
          this.log('warn', 'transcription interrupted: the audio decoder stopped; it runs again', { id, attempt: job.attempt, err: err.message });
          throw err;
        }
        this.log('error', 'transcription interrupted: the audio decoder stopped on its last attempt', { id, attempt: job.attempt, err: err.message });
        await this.service.fail(id, active, 'internal_error', 'Internal error: the audio decoder stopped unexpectedly. Please try again.');
        return;
      }
      if (isTransientDatabaseError(err)) {
        // The database went away under the job (a restart, a failover, a frozen host): nothing is wrong with the
        // transcription, and a failure written now (the database may answer again already) would be final. The
        // queue runs it again from its last durable state; usage is metered under its id, so never twice.
        // An AggregateError (every address of the host refused) has an empty message and a code.
        const why = (err as Error).message || (err as { code?: string }).code;
        if (job.attempt < job.maxAttempts) {
          this.log('warn', 'transcription interrupted: the database was unavailable; it runs again', { id, attempt: job.attempt, err: why });
          throw err;
        }
        this.log('error', 'transcription interrupted: the database was unavailable on its last attempt', { id, attempt: job.attempt, err: why });
        await this.service.fail(id, active, 'internal_error', 'Internal error: the database was unavailable while the transcription ran. Please try again.');
        return;
      }
      this.log('error', 'transcription failed unexpectedly', { id, err: String((err as Error)?.stack ?? err) });
      await this.service.fail(id, active, 'internal_error', 'Internal error while processing the transcription.');
    }
  }

  /** downloading → transcribing: bring the audio next to the job, check it decodes and fits the model. */
  private async download(row: TranscriptionRow, signal: AbortSignal): Promise<TranscriptionRow | undefined> {
    const key = `transcriptions/${row.project_id}/${row.id}`;
    const multichannel = row.enable_multichannel === 1;
    let durationMs: number;
    let channels: number | null = null;
    if (row.file_id) {
      const file = await this.files.getRow({ projectId: row.project_id }, row.file_id);
      if (!file) throw new JobFailure('file_not_found', `File ${row.file_id} was deleted before the transcription started.`);
      // A copy of the upload, so deleting the file later cannot pull the audio from under the job.
      await this.blobs.linkOrCopy(file.blob_key, key);
      // Uploads were probed (and decoded) at the door and their duration stored: no second probe for them, but for
      // the channels of a multichannel job (a WAV's header, else ffprobe).
      const probe = multichannel || file.duration_ms === null ? await this.blobs.withLocalFile(key, probeOf) : undefined;
      durationMs = file.duration_ms ?? probe?.durationMs ?? 0;
      if (multichannel) channels = multichannelCount(probe!);
    } else {
      const temp = this.blobs.tempPath();
      try {
        try {
          await this.fetchAudio(row.audio_url!, temp, signal);
        } catch (err) {
          if (err instanceof AudioFetchError) throw new JobFailure(err.type, err.message);
          throw err;
        }
        const probe = await probeOf(temp);
        durationMs = probe.durationMs ?? 0;
        if (multichannel) channels = multichannelCount(probe);
        await this.blobs.commit(temp, key);
      } finally {
        await this.blobs.discardTemp(temp);
      }
    }
    if (durationMs > this.opts.maxAudioMs)
      throw new JobFailure('invalid_audio_file', `Audio is ${(durationMs / 1000).toFixed(1)} s long; the model's maximum is ${this.opts.maxAudioMs / 1000} s.`);
    const found = { audio_duration_ms: durationMs, audio_blob_key: key, audio_channels: channels };
    const moved = await this.repo.transition(row.id, ['downloading'], 'transcribing', found, this.now());
    if (!moved) {
      await this.blobs.remove(key);
      return undefined;
    }
    return { ...row, status: 'transcribing', ...found };
  }

  /** A budget or balance that refuses the work (402) fails the job. */
  private assertCanStart(row: TranscriptionRow): Promise<void> {
    return recordingApiErrors(this.billing.assertCanStart(row.organization_id, row.project_id), (err) => err.status === 402);
  }

  /** The job's model, loaded; one that failed to load (or was retired since) fails the job with model_not_available. */
  private modelOf(row: TranscriptionRow): Promise<{ languages: readonly string[]; recognizer: Recognizer }> {
    const model = (async () => {
      const { languages, open } = this.catalog.resolve(row.resolved_model, 'async');
      // The job's language is the model's first, as its text formatting's.
      return { languages, recognizer: await open({ language: languages[0] }) };
    })();
    return recordingApiErrors(model, (err) => err.type === 'model_not_available');
  }

  /**
   * transcribing → completed: decode, recognise, store the transcript and schedule the webhook together. A multichannel
   * job recognises each channel on its own, one after another within the job's one slot (so it takes no more of the
   * machine at a time than any other job): decoded alone, formatted, diarized, identified and translated as if it were
   * a file of its own; the channels' tokens are then labelled and merged in time order (channels.ts).
   */
  private async transcribe(row: TranscriptionRow, signal: AbortSignal): Promise<void> {
    await this.assertCanStart(row);
    const { languages, recognizer } = await this.modelOf(row);
    const channels = channelsOf(row.enable_multichannel === 1, row.audio_channels);
    // Decoding and diarization read a file: a scoped local copy of the audio where blobs are not local files.
    const heard = await this.blobs.withLocalFile(row.audio_blob_key!, async (path) => {
      const out: ChannelWords[] = [];
      let words = 0;
      for (const channel of channels) {
        const r = await this.recognizeChannel(row, path, channel, { languages, recognizer }, signal, words);
        words += r.words.length;
        out.push(r);
      }
      return out;
    });
    const perChannel: TranscriptToken[][] = [];
    for (const h of heard) perChannel.push(await this.languageStep(row, languages, h.words, signal, h.segmentLanguages));
    const tokens = channels[0] === undefined ? perChannel[0]! : mergeChannels(perChannel);
    const decodedBytes = Math.max(...heard.map((h) => h.decodedBytes));
    if (tokens.length > this.opts.maxTokens)
      throw new JobFailure(
        'transcription_output_too_long',
        `The transcript with its translation has ${tokens.length} tokens; one transcription may return at most ${this.opts.maxTokens}.`,
      );
    const text = channels[0] === undefined ? tokens.map((t) => t.text).join('') : joinedText(tokens);
    const durationMs = Math.round((decodedBytes / PCM_BYTES_PER_SECOND) * 1000);
    // Metered before completion under the transcription's id: a re-run after a crash stores it once.
    await this.opts.meter?.meter({
      id: row.id,
      kind: 'stt_async',
      actor: { organizationId: row.organization_id, projectId: row.project_id, apiKeyId: row.api_key_id, source: row.source },
      requestId: row.request_id,
      clientReferenceId: row.client_reference_id,
      model: row.resolved_model,
      startTime: row.created_at,
      // Each channel is audio recognised: a multichannel job counts its audio once per channel.
      inputAudioMs: (durationMs || row.audio_duration_ms) * channels.length,
      outputTextTokens: tokens.length,
    });
    const done = await this.repo.db.transaction().execute(async (tx) => {
      await this.repo.saveTranscript(row.id, text, JSON.stringify(tokens), tx);
      const moved = await this.repo.transition(
        row.id,
        ['transcribing'],
        'completed',
        // The request's own voices are not kept past its job.
        { completed_at: this.now(), audio_duration_ms: durationMs || row.audio_duration_ms, known_speakers: null },
        this.now(),
        tx,
      );
      if (moved && row.webhook_url) await this.service.enqueueWebhook(tx, row.id, 'completed');
      return moved;
    });
    if (done) {
      await this.blobs.remove(row.audio_blob_key!);
      await this.repo.update(row.id, { audio_blob_key: null });
      this.log('info', 'transcription completed', {
        id: row.id,
        audio_ms: durationMs,
        tokens: tokens.length,
        ...(channels[0] === undefined ? {} : { channels: channels.length }),
      });
    }
  }

  /**
   * Recognise one channel of the audio (`channel` undefined: the mix of all), then its formatting, speakers and
   * segment languages. `wordsBefore`: words the job's other channels gave, counted against the transcript cap.
   */
  private async recognizeChannel(
    row: TranscriptionRow,
    path: string,
    channel: number | undefined,
    model: { languages: readonly string[]; recognizer: Recognizer },
    signal: AbortSignal,
    wordsBefore: number,
  ): Promise<ChannelWords> {
    const maxBytes = Math.ceil((this.opts.maxAudioMs / 1000) * PCM_BYTES_PER_SECOND);
    let decodedBytes = 0;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    // The decoded length is the real duration: a header can lie. Recheck it against the model maximum.
    const pcm = async function* (): AsyncGenerator<Buffer> {
      for await (const chunk of decodeToPcm(path, { signal: controller.signal, nice: BATCH_NICE, channel })) {
        decodedBytes += chunk.length;
        if (decodedBytes > maxBytes)
          throw new JobFailure('invalid_audio_file', `Decoded audio is longer than the model's maximum of ${maxBytes / PCM_BYTES_PER_SECOND} s.`);
        yield chunk;
      }
    };
    let words: Token[];
    try {
      words = await model.recognizer.transcribe(pcm(), {
        signal: controller.signal,
        context: row.context === null ? undefined : recognitionContext(JSON.parse(row.context)),
        // Visible queueing: how many requests are ahead of this one for an STT worker.
        onQueuePosition: (position) => {
          if (position > 0) this.log('info', 'transcription waiting for an STT worker', { id: row.id, position });
        },
      });
    } catch (err) {
      if (err instanceof JobFailure || signal.aborted) throw err;
      if (err instanceof AudioDecodeError && !err.interrupted) throw new JobFailure('invalid_audio_file', 'Invalid audio file: the audio does not decode.');
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    // Written form (capitals, punctuation, digits) before anything else reads the words; timestamps stay exact.
    if (row.enable_text_formatting === 1) words = formatTranscript(words, { language: model.languages[0] });
    // Redaction and the profanity filter before anything stores, sends or translates the words.
    const controls = wordControlsOf(row.controls);
    if (hasWordControls(controls)) words = applyWordControls(words, controls);
    if (wordsBefore + words.length > this.opts.maxTokens)
      throw new JobFailure(
        'transcription_output_too_long',
        `The transcript has ${wordsBefore + words.length} tokens; one transcription may return at most ${this.opts.maxTokens}.`,
      );
    // Speakers first: translation segments split at speaker changes and translated tokens keep the speaker.
    const labelled = row.enable_speaker_diarization
      ? await addSpeakerLabels(this.opts.diarizer, path, words, signal, await this.recognition(row), channel, speakerBoundsOf(row.controls))
      : words;
    const segmentLanguages = row.enable_language_identification === 1 ? await this.identifyLanguages(row, path, labelled, signal, channel) : undefined;
    return { words: labelled, segmentLanguages, decodedBytes };
  }

  /**
   * The enrolled speakers a transcription asked for (those deleted or no longer ready since are left out), and the
   * voices its request named for itself.
   */
  private async recognition(row: TranscriptionRow): Promise<Recognition | undefined> {
    const { speakers } = this.opts;
    if (!speakers || (!row.speakers && !row.known_speakers)) return undefined;
    const enrolled = row.speakers ? await speakers.enrolled(row.project_id, JSON.parse(row.speakers) as string[]) : [];
    const known = row.known_speakers ? (JSON.parse(row.known_speakers) as KnownSpeaker[]) : [];
    return { enrolled: [...enrolled, ...known], thresholds: speakers.thresholds };
  }

  /** The language of each translation segment of `words`, when a language-id model is installed (else undefined). */
  private async identifyLanguages(
    row: TranscriptionRow,
    path: string,
    words: Token[],
    signal: AbortSignal,
    channel: number | undefined,
  ): Promise<(string | undefined)[] | undefined> {
    const lid = this.opts.languageId?.();
    if (!lid || words.length === 0) return undefined;
    try {
      // Each segment from its first word's start to its last word's end.
      const segments = splitSegments(words).map((seg) => ({ start_ms: seg[0]!.start_ms, end_ms: seg.at(-1)!.end_ms }));
      return await identifySegmentLanguages(lid, path, segments, signal, channel);
    } catch (err) {
      if (signal.aborted || err instanceof AudioDecodeError) throw err;
      this.log('error', 'language identification failed', { id: row.id, model: lid.modelId, err: (err as Error).message });
      throw new JobFailure('internal_error', 'Internal error: the language identification model failed.');
    }
  }

  /** Post-step: language labels and translation of the recognised words (src/modules/translation). */
  private async languageStep(
    row: TranscriptionRow,
    modelLanguages: readonly string[],
    words: Token[],
    signal: AbortSignal,
    segmentLanguages?: readonly (string | undefined)[],
  ): Promise<TranscriptToken[]> {
    const registry = this.catalog.translation;
    // Identified languages are translation sources too (routes are planned per source language).
    const languages = [...new Set([...modelLanguages, ...(segmentLanguages ?? []).filter((l) => l !== undefined)])];
    let plan: TranslationPlan | undefined;
    if (row.translation) {
      const r = this.catalog.planTranslation(JSON.parse(row.translation) as TranslationConfig, row.resolved_model, languages);
      // Validated at creation; only an uninstalled pair gets here.
      if (!r.ok) throw new JobFailure('invalid_request', `Invalid request: translation: ${r.message}.`);
      plan = r.plan;
    }
    try {
      return await transcriptTokens(
        words,
        { language: modelLanguages[0] ?? 'en', plan, identifyLanguage: row.enable_language_identification === 1 },
        registry,
        signal,
        segmentLanguages,
      );
    } catch (err) {
      if (err instanceof TranslationError && !signal.aborted) {
        this.log('error', 'translation failed', { id: row.id, err: err.message });
        throw new JobFailure('internal_error', 'Internal error: the translation engine failed.');
      }
      throw err;
    }
  }
}
