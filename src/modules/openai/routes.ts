// The OpenAI-compatible audio surface over HTTP (/v1/audio/*): parse the multipart form, delegate to
// OpenAiAudioService, shape the reply; errors in OpenAI's body. No rules live here.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, RoutePlugin } from '../../http/app-types.js';
import { toApiError } from '../../http/error-mapping.js';
import type { WiderLimits } from '../../http/single-file-upload.js';
import { ApiError } from '../../wire/api-error.js';
import { AuthService } from '../auth/service.js';
import { streamSpeech } from '../tts/stream-response.js';
import { openAiErrorBody } from './errors.js';
import { type AudioForm, formValidator, readAudioForm } from './form.js';
import { render, type Rendered, streamEvents, withSegments } from './render.js';
import {
  audioModelsSchema,
  audioVoicesSchema,
  MAX_KEYWORDS,
  MAX_KNOWN_SPEAKERS,
  MAX_REFERENCE_CHARS,
  type SpeechBody,
  speechSchema,
  TranscriptionFields,
  transcriptionsSchema,
  TranslationFields,
  translationsSchema,
} from './schemas.js';
import { ClientGone, type FinishedAudio, OpenAiAudioService } from './service.js';
import { checkTranscriptionFields, knownSpeakersOf } from './transcription-rules.js';
import { OpenAiSpeech, type SpeechPlan, speechUsage } from './speech.js';
import type { TtsService } from '../tts/service.js';
import type { TranscriptionsService } from '../transcriptions/service.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { FilesService } from '../files/service.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { ReferenceClips } from '../speakers/reference-clips.js';

const write = { permission: { scope: 'stt_async', level: 'write' }, rate: 'transcribe_async' } as const;
const list = { permission: null, rate: 'models' } as const;
/** The multipart fields are validated from the parsed form (formValidator); the body schema documents them. */
const passThrough = () => (data: unknown) => ({ value: data });
/** Responses are built in OpenAI's shapes already; a schema serializer would drop the fields of the other shapes. */
const asJson = () => (data: unknown) => JSON.stringify(data);
/** How long a request waits for its transcription (the OpenAI SDKs' own default timeout is 10 minutes). */
const WAIT_TIMEOUT_MS = 600_000;
/** SSE comment lines while the transcription runs, so proxies do not close an idle stream. */
const KEEPALIVE_MS = 10_000;

const validateTranscription = formValidator(TranscriptionFields, checkTranscriptionFields);
/**
 * A transcription form: room for each keyword and known speaker as a field (`keywords[]`, ...) and one more of each
 * for the schema to refuse, and for the reference clips (data URLs) as fields.
 */
const TRANSCRIPTION_FORM: WiderLimits = {
  listEntries: MAX_KEYWORDS + 2 * MAX_KNOWN_SPEAKERS + 3,
  fieldSize: MAX_REFERENCE_CHARS,
  totalBytes: (MAX_KNOWN_SPEAKERS + 1) * MAX_REFERENCE_CHARS,
};
const validateTranslation = formValidator(TranslationFields);

/** Aborted when the client goes away before its answer. */
function clientSignal(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

function send(reply: FastifyReply, out: Rendered, id: string) {
  reply.header('x-parlance-transcription-id', id);
  if ('json' in out) return reply.type('application/json; charset=utf-8').send(out.json);
  return reply.type('text/plain; charset=utf-8').send(out.text);
}

export interface OpenaiRoutesOptions {
  auth: AuthService;
  blobs: BlobStore;
  files: FilesService;
  models: ModelCatalog;
  references: ReferenceClips;
  transcriptions: TranscriptionsService;
  tts: TtsService;
}

export const openaiRoutes: RoutePlugin<OpenaiRoutesOptions> = async (app, { auth, blobs, files, models, references, transcriptions, tts }) => {
  const svc = new OpenAiAudioService(files, blobs, references, transcriptions, models, tts, {
    waitTimeoutMs: WAIT_TIMEOUT_MS,
    log: (level, msg, detail) => app.log[level]({ ...detail }, msg),
  });
  const speech = new OpenAiSpeech(tts);

  const renderError = (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    // Nobody to answer; 499 (client closed request) names it in the access log.
    if (err instanceof ClientGone) return reply.code(499).send();
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.debug({ err: apiErr.message, type: apiErr.type }, 'request rejected');
    return reply.code(apiErr.status).headers(apiErr.headers).type('application/json; charset=utf-8').send(openAiErrorBody(apiErr));
  };

  /** The validated fields, or the staged upload discarded and the refusal thrown. */
  const fieldsOf = async <T>(form: AudioForm, validate: (f: AudioForm['fields']) => T): Promise<T> => {
    try {
      return validate(form.fields);
    } catch (err) {
      await files.discard(form.staged);
      throw err;
    }
  };

  /** stream=true: 200 and the event stream open once the job exists; a failure after that is an `error` event. */
  const streamResult = async (req: FastifyRequest, reply: FastifyReply, result: Promise<FinishedAudio>, id: string, diarized: boolean) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': req.id,
      'x-parlance-transcription-id': id,
    });
    res.write(': transcribing\n\n');
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    try {
      const events = streamEvents(await result, diarized);
      for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
    } catch (err) {
      if (!(err instanceof ClientGone)) {
        const apiErr = toApiError(err);
        if (apiErr.status >= 500) req.log.error({ err }, 'transcription stream failed');
        res.write(`data: ${JSON.stringify(openAiErrorBody(apiErr))}\n\n`);
      }
    } finally {
      clearInterval(keepalive);
      res.end();
    }
  };

  /**
   * Synthesize as POST /tts does (a concurrency slot, the TTS pipeline, metering before the response completes) and
   * stream the audio as the body, or as speech.audio.delta events. Failures before the first audio are OpenAI errors.
   */
  const speak = (req: FastifyRequest, reply: FastifyReply, plan: SpeechPlan, startedAt: Date) =>
    streamSpeech(tts, req, reply, plan.cfg, plan.text, startedAt, {
      label: 'speech',
      ...(plan.sse
        ? {
            contentType: 'text/event-stream; charset=utf-8',
            frame: (audio) => `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: audio.toString('base64') })}\n\n`,
            trailer: (r) => `data: ${JSON.stringify({ type: 'speech.audio.done', usage: speechUsage(r.characters, r.seconds) })}\n\n`,
          }
        : { contentType: plan.contentType }),
    });

  const audio = async (scope: App) => {
    // 404 and 405 under /v1/audio in OpenAI's body, like every other answer there.
    const methods = new Map<string, string[]>();
    scope.addHook('onRoute', (r) => void methods.set(r.url, [...(methods.get(r.url) ?? []), ...[r.method].flat()]));
    scope.setErrorHandler(renderError);
    scope.setNotFoundHandler((req, reply) => {
      const path = req.url.split('?')[0] ?? '/';
      const allowed = methods.get(path);
      const err = allowed
        ? new ApiError('invalid_request', `Method ${req.method} is not allowed on ${path}.`, { status: 405, headers: { allow: allowed.join(', ') } })
        : new ApiError('invalid_request', `No route ${req.method} ${path}.`, { status: 404 });
      return renderError(err, req, reply);
    });

    const audioRoute = { config: { guard: write }, validatorCompiler: passThrough, serializerCompiler: asJson } as const;

    scope.post('/transcriptions', { schema: transcriptionsSchema, ...audioRoute }, async (req, reply) => {
      const signal = clientSignal(reply);
      const form = await readAudioForm(req, files, req.auth, TRANSCRIPTION_FORM);
      const f = await fieldsOf(form, validateTranscription);
      const format = f.response_format ?? 'json';
      const job = await svc.start(
        req.auth,
        form,
        {
          task: 'transcribe',
          model: f.model,
          language: f.language,
          prompt: f.prompt,
          keywords: f.keywords,
          diarize: format === 'diarized_json',
          knownSpeakers: knownSpeakersOf(f),
        },
        req.id,
        signal,
      );
      if (f.stream) return streamResult(req, reply, svc.finish(req.auth, job, signal), job.id, format === 'diarized_json');
      const result = await svc.finish(req.auth, job, signal, { speechMap: withSegments(format, f.timestamp_granularities) });
      return send(reply, render(result, { format, granularities: f.timestamp_granularities, logprobs: f.include?.includes('logprobs') }), job.id);
    });

    scope.post('/translations', { schema: translationsSchema, ...audioRoute }, async (req, reply) => {
      const signal = clientSignal(reply);
      const form = await readAudioForm(req, files, req.auth);
      const f = await fieldsOf(form, validateTranslation);
      const job = await svc.start(req.auth, form, { task: 'translate', model: f.model, prompt: f.prompt }, req.id);
      const format = f.response_format ?? 'json';
      const result = await svc.finish(req.auth, job, signal, { speechMap: withSegments(format) });
      return send(reply, render(result, { format }), job.id);
    });

    // Authenticated and admitted as POST /tts is (tts_rt:write, the tts rate limit, billing, tts_rt temporary keys).
    scope.post(
      '/speech',
      {
        schema: speechSchema,
        serializerCompiler: asJson,
        onRequest: async (req) => {
          const key = AuthService.bearerToken(req.headers.authorization);
          req.auth = await tts.admit(await auth.authenticate(key, { temporaryUsage: 'tts_rt', consume: true }));
        },
      },
      async (req, reply) => {
        const startedAt = new Date();
        const plan = await speech.plan(req.auth, req.body as SpeechBody);
        return speak(req, reply, plan, startedAt);
      },
    );

    scope.get('/models', { schema: audioModelsSchema, config: { guard: list }, serializerCompiler: asJson }, async () => svc.audioModels());

    scope.get('/voices', { schema: audioVoicesSchema, config: { guard: list }, serializerCompiler: asJson }, async (req) => svc.voices(req.query.model));
  };
  await app.register(audio, { prefix: '/v1/audio' });
};
