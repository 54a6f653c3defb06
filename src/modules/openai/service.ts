// The rules of the OpenAI-compatible audio surface. No second code path for the work: an upload is stored through the
// files service and transcribed as a native async transcription (same keys, tenancy, limits, metering, engines and
// alias table), which the request then waits for; the transcript is rendered in OpenAI's shapes (render.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { loadVadOffThread } from '../../audio/audio-thread.js';
import { decodeToPcm } from '../../audio/decode.js';
import { type SpeechMap, speechMapOf } from '../../audio/speech-map.js';
import type { Vad, VadLog } from '../../audio/vad.js';
import { BATCH_NICE } from '../../lib/priority.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import { isErrorType } from '../../wire/error-catalog.js';
import type { AuthContext } from '../auth/service.js';
import type { FilesService } from '../files/service.js';
import { type ModelCatalog } from '../models/catalog.js';
import type { TranslationConfig } from '../translation/plan.js';
import type { CreateTranscriptionBody, TranscriptToken } from '../transcriptions/schemas.js';
import type { TranscriptionsService } from '../transcriptions/service.js';
import type { TtsService } from '../tts/service.js';
import type { ReferenceClips } from '../speakers/reference-clips.js';
import type { KnownSpeaker } from '../transcriptions/speaker-labels.js';
import type { AudioForm } from './form.js';
import { type KnownSpeakerClip, REFERENCE_LIMITS } from './transcription-rules.js';
import { DEFAULT_TTS_IDS } from './speech.js';

export type AudioTask = 'transcribe' | 'translate';

export interface OpenAiAudioOptions {
  /** Longest a request waits for its transcription; the job itself goes on (its transcript stays readable). */
  waitTimeoutMs: number;
  /** First and longest pause between two looks at the job (the job may run on another node: the database says). */
  pollMs?: { first: number; max: number };
  /** Where the voice activity detector says it fell back to the energy detector. */
  log?: VadLog;
}

/** What a finished request needs beyond the transcript. */
export interface FinishOptions {
  /** The upload's speech map (verbose_json segments' no_speech_prob), read before the upload is removed. */
  speechMap?: boolean;
}

export interface AudioRequest {
  task: AudioTask;
  model: string;
  language?: string;
  prompt?: string;
  /** Terms to expect: with the prompt (its text), the transcription's context. */
  keywords?: string[];
  diarize?: boolean;
  /** Voices to recognise by name in this request only (diarize must be on). */
  knownSpeakers?: KnownSpeakerClip[];
}

/** The native `context` of a prompt and keywords: the prompt as it is, or with keywords the object form. */
export function contextOf(prompt: string | undefined, keywords: readonly string[] | undefined): CreateTranscriptionBody['context'] {
  if (keywords?.length) return { ...(prompt ? { text: prompt } : {}), terms: [...keywords] };
  return prompt || undefined;
}

/** A transcription started for an OpenAI request, and the upload behind it (removed once the request is over). */
export interface AudioJob {
  id: string;
  fileId: string;
  task: AudioTask;
  /** The language the model recognises (what verbose_json reports). */
  language: string;
}

export interface FinishedAudio {
  id: string;
  task: AudioTask;
  text: string;
  tokens: TranscriptToken[];
  durationMs: number;
  language: string;
  /** Where the audio holds speech, when asked for (FinishOptions.speechMap). */
  speech?: SpeechMap;
}

/** The client went away while its transcription ran: there is nobody to answer. */
export class ClientGone extends Error {}

const WAITING = new Set(['queued', 'downloading']);
const TRANSLATE_TO: TranslationConfig = { type: 'one_way', target_language: 'en' };

export class OpenAiAudioService {
  private vad: Promise<Vad> | undefined;

  constructor(
    private readonly files: FilesService,
    private readonly blobs: BlobStore,
    private readonly references: ReferenceClips,
    private readonly transcriptions: TranscriptionsService,
    private readonly models: ModelCatalog,
    private readonly tts: TtsService,
    private readonly opts: OpenAiAudioOptions,
  ) {}

  /**
   * Store the upload and create its transcription; refusals come before anything is kept. `signal` (the client
   * leaving) stops the measuring of known speakers' clips.
   */
  async start(auth: AuthContext, form: AudioForm, req: AudioRequest, requestId: string, signal?: AbortSignal): Promise<AudioJob> {
    let job: Omit<AudioJob, 'fileId'> | undefined;
    let fileId: string | undefined;
    try {
      const resolved = this.models.resolve(req.model, 'async');
      const languages = resolved.languages;
      if (req.task === 'translate') this.assertTranslatable(req.model, resolved.model.id, languages);
      const known = req.knownSpeakers?.length ? await this.knownSpeakers(req.knownSpeakers, signal ?? new AbortController().signal) : [];
      const file = await this.files.commit(auth, form.staged, { filename: form.staged.partFilename.slice(0, 256) || 'audio' });
      fileId = file.id;
      const context = contextOf(req.prompt, req.keywords);
      const body: CreateTranscriptionBody = {
        model: req.model,
        file_id: file.id,
        ...(req.language ? { language_hints: [req.language] } : {}),
        ...(context ? { context } : {}),
        ...(req.diarize ? { enable_speaker_diarization: true } : {}),
        ...(req.task === 'translate' ? { translation: TRANSLATE_TO } : {}),
      };
      const record = await this.transcriptions.create(auth, body, requestId, known);
      job = { id: record.id, task: req.task, language: req.task === 'translate' ? 'en' : (languages[0] ?? 'en') };
      return { ...job, fileId: file.id };
    } finally {
      if (!job) {
        if (fileId) await this.removeFile(auth, fileId);
        else await this.files.discard(form.staged);
      }
    }
  }

  /** Each known speaker's print, measured from its clip (kept nowhere but on the transcription while its job runs). */
  private async knownSpeakers(clips: readonly KnownSpeakerClip[], signal: AbortSignal): Promise<KnownSpeaker[]> {
    try {
      const prints = await this.references.prints(
        clips.map((c) => c.clip),
        'known_speaker_references',
        REFERENCE_LIMITS,
        signal,
      );
      return clips.map((c, i) => ({ name: c.name, print: prints[i]! }));
    } catch (err) {
      if (signal.aborted) throw new ClientGone();
      throw err;
    }
  }

  private assertTranslatable(requested: string, modelId: string, languages: readonly string[]): void {
    if (this.models.planTranslation(TRANSLATE_TO, modelId, languages).ok) return;
    const installed = this.models.translation.pairs().map((p) => `${p.source}-${p.target}`);
    throw invalidField(
      'model',
      `translation into English is not available with model ${requested}: it recognises ${languages.join(', ')}, and no translation pair from ${languages.join(' or ')} into English is installed (installed pairs: ${installed.join(', ') || 'none'})`,
      'unsupported',
    );
  }

  /**
   * Wait for the transcription to end, bounded by the timeout and by `signal` (the client leaving). A job given up
   * before it transcribes is deleted; one already transcribing finishes and stays readable. The upload goes either way.
   */
  async finish(auth: AuthContext, job: AudioJob, signal: AbortSignal, opts: FinishOptions = {}): Promise<FinishedAudio> {
    const { first, max } = this.opts.pollMs ?? { first: 50, max: 500 };
    const deadline = Date.now() + this.opts.waitTimeoutMs;
    let delay = first;
    let status = 'queued';
    try {
      for (;;) {
        const rec = await this.transcriptions.get(auth, job.id);
        status = rec.status;
        if (rec.status === 'completed') {
          const t = await this.transcriptions.transcript(auth, job.id);
          const speech = opts.speechMap ? await this.speechMap(auth, job.fileId, signal) : undefined;
          return {
            id: job.id,
            task: job.task,
            text: t.text,
            tokens: t.tokens,
            durationMs: rec.audio_duration_ms,
            language: job.language,
            ...(speech ? { speech } : {}),
          };
        }
        if (rec.status === 'failed' || rec.status === 'error') {
          const type = rec.error_type && isErrorType(rec.error_type) ? rec.error_type : 'internal_error';
          throw new ApiError(type, rec.error_message ?? undefined);
        }
        if (signal.aborted) throw new ClientGone();
        if (Date.now() >= deadline) throw this.timeout(job.id, WAITING.has(status));
        await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), undefined, { signal }).catch(() => undefined);
        delay = Math.min(max, delay * 2);
      }
    } finally {
      if (WAITING.has(status)) await this.transcriptions.delete(auth, job.id).catch(() => undefined);
      await this.removeFile(auth, job.fileId);
    }
  }

  /**
   * The voice activity detector's verdict on every frame of the upload (decoded once more, at batch priority): the
   * transcript keeps only words, so the audio between them is judged here, the same detector the engines cut at.
   */
  private async speechMap(auth: AuthContext, fileId: string, signal: AbortSignal): Promise<SpeechMap> {
    const file = await this.files.getRow(auth, fileId);
    if (!file) throw new ApiError('file_not_found', `File ${fileId} was deleted while the request waited.`);
    const vad = await (this.vad ??= loadVadOffThread({ lane: 'batch', log: this.opts.log }));
    try {
      return await this.blobs.withLocalFile(file.blob_key, (path) => speechMapOf(decodeToPcm(path, { signal, nice: BATCH_NICE }), vad.createStream()));
    } catch (err) {
      if (signal.aborted) throw new ClientGone();
      throw err;
    }
  }

  private timeout(id: string, notStarted: boolean): ApiError {
    const seconds = Math.round(this.opts.waitTimeoutMs / 1000);
    const message = notStarted
      ? `The transcription did not start within ${seconds} s (the server is busy); it was cancelled. Try again later.`
      : `The transcription ${id} did not finish within ${seconds} s. It goes on: GET /v1/transcriptions/${id}/transcript once it has completed.`;
    // OpenAI SDKs retry a 408 unless told not to: a retry would transcribe the file a second time.
    return new ApiError('request_timeout', message, { headers: { 'x-should-retry': 'false' } });
  }

  private async removeFile(auth: AuthContext, fileId: string): Promise<void> {
    await this.files.delete(auth, fileId).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.type === 'file_not_found')) throw err;
    });
  }

  /** Open WebUI's model list: async transcription models and TTS models, aliases included. */
  audioModels(): { models: { id: string; type: 'stt' | 'tts' }[] } {
    const stt = this.models
      .list()
      .filter((m) => m.transcription_mode === 'async')
      .map((m) => ({ id: String(m.id), type: 'stt' as const }));
    const tts = this.tts.listModels().models.map((m) => ({ id: m.id, type: 'tts' as const }));
    return { models: [...stt, ...tts] };
  }

  /** Voices of `modelId`, or of the default TTS model. */
  voices(modelId?: string): { voices: { id: string; name: string }[] } {
    const models = this.tts.listModels().models;
    const id = modelId ?? DEFAULT_TTS_IDS.find((d) => models.some((m) => m.id === d)) ?? models[0]?.id;
    const model = models.find((m) => m.id === id);
    if (!model) {
      if (modelId === undefined) return { voices: [] };
      throw new ApiError('invalid_request', `No text-to-speech model "${modelId}"; GET /v1/audio/models lists them.`, {
        status: 404,
        validationErrors: [{ error_type: 'invalid_value', location: 'model', message: 'is not a text-to-speech model' }],
      });
    }
    return { voices: model.voices.map((v) => ({ id: v.id, name: `${v.id} - ${v.description}` })) };
  }
}
