// Files over HTTP: parse, delegate to FilesService, shape the reply. No rules live here.
import type { RouteModule } from '../../http/context.js';
import { readSingleFileUpload } from '../../http/single-file-upload.js';
import { countFilesSchema, deleteFileSchema, getFileSchema, listFilesSchema, uploadFileSchema, uploadValidator } from './schemas.js';

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

  app.post('/v1/files', { schema: uploadFileSchema, validatorCompiler: uploadValidator, config: { guard: write } }, async (req, reply) => {
    const { staged, fields } = await readSingleFileUpload(req, {
      notMultipart: 'Upload must be multipart/form-data with a "file" part.',
      fields: ['client_reference_id', 'filename'],
      precheck: (declared) => files.precheck(req.auth, declared),
      receive: (file, filename) => files.receive(req.auth, file, filename),
      discard: (s) => files.discard(s),
    });
    const record = await files.commit(req.auth, staged, fields);
    return reply.code(201).send(record);
  });
};
