// Transcriptions and the STT model list over HTTP: parse, delegate, shape. No rules live here.
import type { RouteModule } from '../../http/context.js';
import { countSchema, createSchema, deleteSchema, getSchema, listSchema, modelsSchema, transcriptSchema } from './schemas.js';

const read = { permission: { scope: 'stt_async', level: 'read' }, rate: 'transcribe_async' } as const;
const write = { permission: { scope: 'stt_async', level: 'write' }, rate: 'transcribe_async' } as const;

export const transcriptionsRoutes: RouteModule = async (app, { ctx }) => {
  const svc = ctx.transcriptions;

  app.post('/v1/transcriptions', { schema: createSchema, config: { guard: write } }, async (req, reply) =>
    reply.code(201).send(await svc.create(req.auth, req.body, req.id)),
  );

  app.get('/v1/transcriptions', { schema: listSchema, config: { guard: read } }, async (req) => {
    const page = await svc.list(req.auth, req.query.limit, req.query.cursor);
    return { transcriptions: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/transcriptions/count', { schema: countSchema, config: { guard: read } }, async (req) => svc.count(req.auth));

  app.get('/v1/transcriptions/:id', { schema: getSchema, config: { guard: read } }, async (req) => svc.get(req.auth, req.params.id));

  app.get('/v1/transcriptions/:id/transcript', { schema: transcriptSchema, config: { guard: read } }, async (req) => svc.transcript(req.auth, req.params.id));

  app.delete('/v1/transcriptions/:id', { schema: deleteSchema, config: { guard: write } }, async (req, reply) => {
    await svc.delete(req.auth, req.params.id);
    return reply.code(204).send(null);
  });

  app.get('/v1/models', { schema: modelsSchema, config: { guard: { permission: null, rate: 'models' } } }, async () => ({ models: ctx.models.list() }));
};
