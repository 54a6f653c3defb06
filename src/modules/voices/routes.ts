// Cloned voices over HTTP: parse, delegate to VoicesService, shape the reply. No rules live here.
import type { RoutePlugin } from '../../http/app-types.js';
import { readSingleFileUpload } from '../../http/single-file-upload.js';
import { uploadValidator } from '../files/schemas.js';
import { countVoicesSchema, createVoiceSchema, deleteVoiceSchema, getVoiceSchema, listVoicesSchema, recomputeVoiceSchema } from './schemas.js';
import type { VoicesService } from './service.js';

const read = { permission: { scope: 'voices', level: 'read' }, rate: 'voices' } as const;
const write = { permission: { scope: 'voices', level: 'write' }, rate: 'voices' } as const;

export interface VoicesRoutesOptions {
  voices: VoicesService;
}

export const voicesRoutes: RoutePlugin<VoicesRoutesOptions> = async (app, { voices }) => {
  app.get('/v1/voices', { schema: listVoicesSchema, config: { guard: read } }, async (req) => {
    const page = await voices.list(req.auth, req.query.limit, req.query.cursor);
    return { voices: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/voices/count', { schema: countVoicesSchema, config: { guard: read } }, async (req) => voices.count(req.auth));

  app.get('/v1/voices/:voice_id', { schema: getVoiceSchema, config: { guard: read } }, async (req) => voices.get(req.auth, req.params.voice_id));

  app.delete('/v1/voices/:voice_id', { schema: deleteVoiceSchema, config: { guard: write } }, async (req, reply) => {
    await voices.delete(req.auth, req.params.voice_id);
    return reply.code(204).send(null);
  });

  app.post('/v1/voices/:voice_id/recompute', { schema: recomputeVoiceSchema, config: { guard: write } }, async (req) =>
    voices.recompute(req.auth, req.params.voice_id, req.body?.model),
  );

  app.post('/v1/voices', { schema: createVoiceSchema, validatorCompiler: uploadValidator, config: { guard: write } }, async (req, reply) => {
    const { staged, fields } = await readSingleFileUpload(req, {
      notMultipart: 'Voice creation must be multipart/form-data with "name" and "file" parts.',
      fields: ['name', 'filename'],
      precheck: (declared) => voices.clips.precheck(declared),
      receive: (file, filename) => voices.clips.receive(file, filename),
      discard: (s) => voices.clips.discard(s),
    });
    const record = await voices.create(req.auth, staged, fields);
    return reply.code(201).send(record);
  });
};
