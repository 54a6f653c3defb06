// Text-to-speech over HTTP: GET /v1/tts-models, GET /v1/tts-voices, POST /tts (streamed audio), POST
// /tts/with-timestamps (the audio and its word times as JSON). Transport only: parse, authenticate, delegate to
// TtsService, stream the bytes (stream-response.ts) or collect them (timed-response.ts), render errors in the TTS body.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../../http/app-types.js';
import { toApiError } from '../../http/error-mapping.js';
import { ttsErrorBody } from '../../wire/tts-frames.js';
import { AuthService } from '../auth/service.js';
import { parseTtsBody } from './request-config.js';
import { generateSpeechSchema, generateSpeechWithTimestampsSchema, listTtsModelsSchema, listTtsVoicesSchema } from './schemas.js';
import { timedSpeech } from './timed-response.js';
import type { VoiceQuery } from './voice-list.js';
import { streamSpeech } from './stream-response.js';
import type { TtsService } from './service.js';

const listGuard = { permission: null, rate: 'models' } as const;
/** Validated in the handler (parseTtsBody; voice-list.ts), after authentication, with errors in the TTS body. */
const passThrough = () => (data: unknown) => ({ value: data });

export interface TtsRoutesOptions {
  tts: TtsService;
  errorReferenceUrl: () => string;
}

export const ttsRoutes: RoutePlugin<TtsRoutesOptions> = async (app, { tts, errorReferenceUrl }) => {
  app.get('/v1/tts-models', { schema: listTtsModelsSchema, config: { guard: listGuard } }, async () => tts.listModels());

  app.get('/v1/tts-voices', { schema: listTtsVoicesSchema, config: { guard: listGuard }, validatorCompiler: passThrough }, async (req) =>
    tts.listVoices(req.query as VoiceQuery),
  );

  const renderError = (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'tts request failed');
    if (reply.raw.headersSent) return void reply.raw.destroy();
    void reply
      .code(apiErr.status)
      .headers(apiErr.headers)
      .send(ttsErrorBody(apiErr, req.id, errorReferenceUrl()));
  };

  const speechRoute = {
    validatorCompiler: passThrough,
    errorHandler: renderError,
    onRequest: async (req: FastifyRequest) => {
      req.auth = await tts.admission.authorize(AuthService.bearerToken(req.headers.authorization));
    },
  };

  /** POST /tts's body (both routes take it): checked, resolved against the model, its text checked; before any audio. */
  const resolveSpeech = async (req: FastifyRequest) => {
    const body = parseTtsBody(req.body);
    const cfg = await tts.resolveConfigFor(req.auth, body);
    return { cfg, text: tts.checkText(body.text, cfg, body.text_format) };
  };

  app.post('/tts/with-timestamps', { schema: generateSpeechWithTimestampsSchema, ...speechRoute }, async (req, reply) => {
    const startedAt = new Date();
    const { cfg, text } = await resolveSpeech(req);
    return timedSpeech(tts, req, reply, cfg, text, startedAt);
  });

  app.post('/tts', { schema: generateSpeechSchema, ...speechRoute }, async (req, reply) => {
    const startedAt = new Date();
    const { cfg, text } = await resolveSpeech(req);
    await streamSpeech(tts, req, reply, cfg, text, startedAt, { contentType: cfg.contentType, label: 'tts' });
  });
};
