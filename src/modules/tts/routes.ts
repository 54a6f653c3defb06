// Text-to-speech over HTTP: GET /v1/tts-models, GET /v1/tts-voices, POST /tts (streamed audio). Transport
// only: parse, authenticate, delegate to TtsService, stream the bytes, render errors in the TTS body.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../http/context.js';
import { toApiError } from '../../http/error-mapping.js';
import { ttsErrorBody } from '../../wire/tts-frames.js';
import { AuthService, sessionDeadline } from '../auth/service.js';
import { generateSpeechSchema, listTtsModelsSchema, listTtsVoicesSchema } from './schemas.js';
import type { VoiceQuery } from './service.js';

const listGuard = { permission: null, rate: 'models' } as const;
/** The service validates these requests itself (TTS body, per-format rules). */
const passThrough = () => (data: unknown) => ({ value: data });

export const ttsRoutes: RouteModule = async (app, { ctx }) => {
  const tts = ctx.tts;

  app.get('/v1/tts-models', { schema: listTtsModelsSchema, config: { guard: listGuard } }, async () => tts.listModels());

  app.get(
    '/v1/tts-voices',
    { schema: listTtsVoicesSchema, config: { guard: listGuard }, validatorCompiler: passThrough },
    async (req) => tts.listVoices(req.query as VoiceQuery),
  );

  const renderError = (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'tts request failed');
    if (reply.raw.headersSent) return void reply.raw.destroy();
    void reply.code(apiErr.status).headers(apiErr.headers).send(ttsErrorBody(apiErr, req.id, ctx.errorReferenceUrl()));
  };

  app.post(
    '/tts',
    {
      schema: generateSpeechSchema,
      validatorCompiler: passThrough,
      errorHandler: renderError,
      onRequest: async (req) => {
        const key = AuthService.bearerToken(req.headers.authorization);
        req.auth = await tts.admit(await ctx.auth.authenticate(key, { temporaryUsage: 'tts_rt', consume: true }));
      },
    },
    async (req, reply) => {
      const startedAt = new Date();
      const body = req.body as Record<string, unknown> | undefined;
      const cfg = await tts.resolveConfigFor(req.auth, body);
      const text = tts.checkText(body?.text, cfg);
      const release = await tts.acquire(req.auth);
      const res = reply.raw;
      // The client may have gone while the slot was being taken: its 'close' has fired already.
      if (res.destroyed) return release();
      const ac = new AbortController();
      const out = tts.synthesize(cfg, text, ac.signal);
      const onClose = () => ac.abort();
      res.once('close', onClose);
      res.once('close', release);
      let metered: Promise<void> | undefined;
      const meter = () => (metered ??= tts.recordUsage(req.auth, cfg, { requestId: req.id, startedAt, characters: text.length, seconds: out.seconds() }));
      // The first chunk decides between an error body and a 200: failures before any audio are reported.
      let first: IteratorResult<{ audio: Buffer }>;
      try {
        first = await out.chunks.next();
      } catch (err) {
        res.off('close', onClose);
        release();
        // The client left before the first audio (a timeout on its side): nobody to answer, nothing failed here.
        if (res.destroyed && ac.signal.aborted) {
          void meter().catch((e: unknown) => req.log.error({ err: e }, 'tts usage not recorded'));
          req.log.debug('tts client left before the first audio');
          return void reply.hijack();
        }
        throw err;
      }
      reply.hijack();
      res.writeHead(200, { 'content-type': cfg.contentType, 'x-request-id': req.id, 'cache-control': 'no-store' });
      const deadline = req.auth.temporary ? sessionDeadline(req.auth, startedAt) : null;
      const timer = deadline
        ? setTimeout(() => {
            // temp_api_key_session_expired mid-stream: the connection is dropped.
            ac.abort();
            res.destroy();
          }, Math.max(0, deadline.getTime() - Date.now()))
        : undefined;
      try {
        if (!first.done) {
          if (!res.write(first.value.audio)) await drained(res);
          for await (const chunk of out.chunks) {
            if (res.destroyed) break;
            if (!res.write(chunk.audio)) await drained(res);
          }
        }
        // Metered before the response completes: work that cannot be billed fails (the client sees a cut response).
        if (!res.destroyed) {
          await meter().catch((err: unknown) => {
            throw new UsageNotRecorded(err);
          });
          // The 2-minute cap ends the response cleanly with the truncated audio.
          res.end();
        }
      } catch (err) {
        if (err instanceof UsageNotRecorded) req.log.error({ err: err.cause }, 'tts usage not recorded: the response is failed');
        else if (!res.destroyed) req.log.warn({ err }, 'tts stream failed after audio began');
        res.destroy();
      } finally {
        if (timer) clearTimeout(timer);
        res.off('close', onClose);
        ac.abort();
        release();
        // A stopped or failed response is metered for the audio made so far.
        if (!metered) void meter().catch((err: unknown) => req.log.error({ err }, 'tts usage not recorded'));
      }
    },
  );
};

class UsageNotRecorded extends Error {
  constructor(cause: unknown) {
    super('usage not recorded', { cause });
  }
}

function drained(res: import('node:http').ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
