// Files over HTTP: parse, delegate to FilesService, shape the reply. No rules live here.
import type { RouteModule } from '../../http/context.js';
import { watchCloseDelimiter } from '../../lib/multipart-close.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import { countFilesSchema, deleteFileSchema, getFileSchema, listFilesSchema, uploadFileSchema } from './schemas.js';
import type { StagedUpload } from './service.js';

const read = { permission: { scope: 'files', level: 'read' }, rate: 'files' } as const;
const write = { permission: { scope: 'files', level: 'write' }, rate: 'files' } as const;

export const filesRoutes: RouteModule = async (app, { ctx }) => {
  const files = ctx.files;

  app.get('/v1/files', { schema: listFilesSchema, config: { guard: read } }, async (req) => {
    const page = await files.list(req.auth, req.query.limit, req.query.cursor);
    return { files: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/files/count', { schema: countFilesSchema, config: { guard: read } }, async (req) => files.count(req.auth));

  app.get('/v1/files/:file_id', { schema: getFileSchema, config: { guard: read } }, async (req) => files.get(req.auth, req.params.file_id));

  app.delete('/v1/files/:file_id', { schema: deleteFileSchema, config: { guard: write } }, async (req, reply) => {
    await files.delete(req.auth, req.params.file_id);
    return reply.code(204).send(null);
  });

  app.post('/v1/files', { schema: uploadFileSchema, config: { guard: write } }, async (req, reply) => {
    if (!req.isMultipart()) throw new ApiError('invalid_request', 'Upload must be multipart/form-data with a "file" part.');
    const declared = req.headers['content-length'];
    if (declared === undefined) throw new ApiError('invalid_request', 'Multipart upload of unknown size: send a Content-Length header.');
    await files.precheck(req.auth, Number(declared));

    let staged: StagedUpload | undefined;
    const fields: Record<string, string> = {};
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
          staged = await files.receive(req.auth, part.file, part.filename);
        } else if (part.fieldname === 'client_reference_id' || part.fieldname === 'filename') {
          fields[part.fieldname] = String(part.value);
        }
      }
      // @fastify/multipart ends the parts quietly when the body stops before the closing boundary, which
      // would silently drop a cut-off field: a body without its close delimiter is malformed.
      if (!closed()) throw new ApiError('invalid_request', 'Malformed multipart body: it ends before the closing boundary.');
    } catch (err) {
      if (staged) await files.discard(staged);
      throw err;
    }
    if (!staged) throw invalidField('file', 'is required', 'missing');
    const record = await files.commit(req.auth, staged, fields);
    return reply.code(201).send(record);
  });
};
