// Cloned voices over HTTP: parse, delegate to VoicesService, shape the reply. No rules live here.
import type { RouteModule } from '../../http/context.js';
import { watchCloseDelimiter } from '../../lib/multipart-close.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { StagedUpload } from '../files/staging.js';
import { countVoicesSchema, createVoiceSchema, deleteVoiceSchema, getVoiceSchema, listVoicesSchema, recomputeVoiceSchema } from './schemas.js';

const read = { permission: { scope: 'voices', level: 'read' }, rate: 'voices' } as const;
const write = { permission: { scope: 'voices', level: 'write' }, rate: 'voices' } as const;

export const voicesRoutes: RouteModule = async (app, { ctx }) => {
  const voices = ctx.voices;

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

  app.post('/v1/voices', { schema: createVoiceSchema, config: { guard: write } }, async (req, reply) => {
    if (!req.isMultipart()) throw new ApiError('invalid_request', 'Voice creation must be multipart/form-data with "name" and "file" parts.');
    const declared = req.headers['content-length'];
    if (declared === undefined) throw new ApiError('invalid_request', 'Multipart upload of unknown size: send a Content-Length header.');
    voices.precheck(Number(declared));

    let staged: StagedUpload | undefined;
    const fields: { name?: string; filename?: string } = {};
    try {
      const parts = req.parts();
      const first = parts.next(); // starts piping the body into the parser; the watcher joins in the same tick
      const closed = watchCloseDelimiter(req.raw, req.headers['content-type']);
      for (let r = await first; !r.done; r = await parts.next()) {
        const part = r.value;
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || staged) {
            part.file.resume();
            throw invalidField(part.fieldname, 'unexpected file part; send exactly one part named "file"', 'unknown_field');
          }
          staged = await voices.receive(part.file, part.filename);
        } else if (part.fieldname === 'name' || part.fieldname === 'filename') {
          fields[part.fieldname] = String(part.value);
        }
      }
      if (!closed()) throw new ApiError('invalid_request', 'Malformed multipart body: it ends before the closing boundary.');
    } catch (err) {
      if (staged) await voices.discard(staged);
      throw err;
    }
    if (!staged) throw invalidField('file', 'is required', 'missing');
    const record = await voices.create(req.auth, staged, fields);
    return reply.code(201).send(record);
  });
};
