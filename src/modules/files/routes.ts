// Files over HTTP: parse, delegate to FilesService, shape the reply. No rules live here.
import type { RoutePlugin } from '../../http/app-types.js';
import { readSingleFileUpload } from '../../http/single-file-upload.js';
import { byteRequest } from '../../http/byte-range.js';
import { ApiError } from '../../wire/api-error.js';
import { countFilesSchema, deleteFileSchema, fileContentSchema, getFileSchema, listFilesSchema, uploadFileSchema, uploadValidator } from './schemas.js';
import type { FilesService } from './service.js';

const read = { permission: { scope: 'files', level: 'read' }, rate: 'files' } as const;
const write = { permission: { scope: 'files', level: 'write' }, rate: 'files' } as const;

const oneHeader = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

export interface FilesRoutesOptions {
  files: FilesService;
}

export const filesRoutes: RoutePlugin<FilesRoutesOptions> = async (app, { files }) => {
  app.get('/v1/files', { schema: listFilesSchema, config: { guard: read } }, async (req) => {
    const page = await files.list(req.auth, req.query.limit, req.query.cursor);
    return { files: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/files/count', { schema: countFilesSchema, config: { guard: read } }, async (req) => files.count(req.auth));

  app.get('/v1/files/:file_id', { schema: getFileSchema, config: { guard: read } }, async (req) => files.get(req.auth, req.params.file_id));

  // The bytes, streamed from the blob store; Range lets a browser's audio element seek (issue 18).
  app.get('/v1/files/:file_id/content', { schema: fileContentSchema, config: { guard: read } }, async (req, reply) => {
    const content = await files.content(req.auth, req.params.file_id);
    // The bytes of a file id never change: the id is a strong validator.
    const etag = `"${content.id}"`;
    const want = byteRequest(content.size, req.headers.range, oneHeader(req.headers['if-range']), etag);
    reply.header('accept-ranges', 'bytes').header('etag', etag).header('cache-control', 'private');
    if (want.kind === 'unsatisfiable') {
      reply.header('content-range', `bytes */${content.size}`);
      throw new ApiError('range_not_satisfiable', `The requested range starts past the end of the file (${content.size} bytes).`);
    }
    const range = want.kind === 'partial' ? { start: want.start, end: want.end } : undefined;
    const body = await content.open(range);
    reply
      .type(content.contentType)
      .header('content-disposition', `inline; filename*=UTF-8''${encodeURIComponent(content.filename)}`)
      .header('content-length', range ? range.end - range.start + 1 : content.size);
    if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${content.size}`);
    // A stream: Fastify pipes it as it is read, past the response schema's serializer.
    return reply.send(body as unknown as string);
  });

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
