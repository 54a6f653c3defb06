import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, ListQuery } from '../../wire/schemas.js';

export const FileRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    filename: Type.String(),
    size: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    client_reference_id: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  },
  { $id: 'File' },
);
export type FileRecord = Static<typeof FileRecord>;

export const FileList = Type.Object({
  files: Type.Array(FileRecord),
  next_page_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const FilesCount = Type.Object({
  playground: Type.Integer(),
  public_api: Type.Integer(),
  total: Type.Integer(),
});

export const FileIdParams = Type.Object({ file_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const listFilesSchema = {
  tags: ['files'],
  summary: 'List files, newest first',
  querystring: ListQuery,
  response: { 200: FileList, '4xx': ErrorBody, 500: ErrorBody },
};

/**
 * The multipart body of an upload, for /openapi.json only: the route reads the parts as a stream
 * (@fastify/multipart) and checks them itself, so it is never validated against this (see uploadValidator).
 */
export const UploadFileBody = Type.Object({
  file: Type.String({ format: 'binary', description: 'The audio file (one part; the request needs a Content-Length)' }),
  client_reference_id: Type.Optional(Type.String({ maxLength: 256 })),
  filename: Type.Optional(Type.String({ description: "Overrides the file part's own file name" })),
});

/** Route validator for multipart uploads: the body schema documents, readSingleFileUpload enforces. */
export const uploadValidator = () => (data: unknown) => ({ value: data });

export const uploadFileSchema = {
  tags: ['files'],
  summary: 'Upload an audio file (multipart/form-data: file, client_reference_id)',
  consumes: ['multipart/form-data'],
  body: UploadFileBody,
  response: { 201: FileRecord, '4xx': ErrorBody, 500: ErrorBody },
};

export const countFilesSchema = {
  tags: ['files'],
  summary: 'Count files by source',
  response: { 200: FilesCount, '4xx': ErrorBody, 500: ErrorBody },
};

export const getFileSchema = {
  tags: ['files'],
  summary: 'Get one file',
  params: FileIdParams,
  response: { 200: FileRecord, '4xx': ErrorBody, 500: ErrorBody },
};

export const deleteFileSchema = {
  tags: ['files'],
  summary: 'Delete a file permanently',
  params: FileIdParams,
  response: { 204: Type.Null(), '4xx': ErrorBody, 500: ErrorBody },
};

const FileBytes = Type.String({ format: 'binary', description: "The file's bytes as uploaded" });

export const fileContentSchema = {
  tags: ['files'],
  summary: "Download a file's bytes (Parlance extension; supports Range requests)",
  description:
    'The bytes of an uploaded file, streamed, with its media type and length. A single `Range: bytes=...` answers 206 with ' +
    '`Content-Range`; a range that starts past the end answers 416 `range_not_satisfiable`. Needs `files:read`.',
  params: FileIdParams,
  produces: ['audio/*', 'application/octet-stream'],
  response: {
    200: FileBytes,
    206: { ...FileBytes, description: 'The requested range of the bytes' },
    '4xx': ErrorBody,
    500: ErrorBody,
  },
};
