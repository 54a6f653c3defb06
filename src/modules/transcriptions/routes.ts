// Transcriptions over HTTP: parse, delegate, shape. No rules live here.
import type { RoutePlugin } from '../../http/app-types.js';
import { exportTranscript } from '../../text/subtitles.js';
import { countSchema, createSchema, deleteSchema, getSchema, listSchema, transcriptSchema } from './schemas.js';
import type { TranscriptionsService } from './service.js';

const read = { permission: { scope: 'stt_async', level: 'read' }, rate: 'transcribe_async' } as const;
const write = { permission: { scope: 'stt_async', level: 'write' }, rate: 'transcribe_async' } as const;
const exportTypes = { srt: 'application/x-subrip; charset=utf-8', vtt: 'text/vtt; charset=utf-8', txt: 'text/plain; charset=utf-8' } as const;

export interface TranscriptionsRoutesOptions {
  transcriptions: TranscriptionsService;
}

export const transcriptionsRoutes: RoutePlugin<TranscriptionsRoutesOptions> = async (app, { transcriptions: svc }) => {
  app.post('/v1/transcriptions', { schema: createSchema, config: { guard: write } }, async (req, reply) =>
    reply.code(201).send(await svc.create(req.auth, req.body, req.id)),
  );

  app.get('/v1/transcriptions', { schema: listSchema, config: { guard: read } }, async (req) => {
    const page = await svc.list(req.auth, req.query.limit, req.query.cursor);
    return { transcriptions: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/transcriptions/count', { schema: countSchema, config: { guard: read } }, async (req) => svc.count(req.auth));

  app.get('/v1/transcriptions/:id', { schema: getSchema, config: { guard: read } }, async (req) => svc.get(req.auth, req.params.id));

  app.get('/v1/transcriptions/:id/transcript', { schema: transcriptSchema, config: { guard: read } }, async (req, reply) => {
    const transcript = await svc.transcript(req.auth, req.params.id);
    const format = req.query.format ?? 'json';
    if (format === 'json') return transcript;
    return reply.type(exportTypes[format]).send(exportTranscript(transcript.tokens, format));
  });

  app.delete('/v1/transcriptions/:id', { schema: deleteSchema, config: { guard: write } }, async (req, reply) => {
    await svc.delete(req.auth, req.params.id);
    return reply.code(204).send(null);
  });
};
