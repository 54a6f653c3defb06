// Transport for multipart uploads of exactly one file part plus text fields (files, cloned voices, OpenAI's audio
// requests): the size must be declared (unless the caller allows otherwise), the body must end with its close
// delimiter, and the staged file is discarded on any failure. What to stage and where is the caller's (its service's
// receive/discard).
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { watchCloseDelimiter } from '../lib/multipart-close.js';
import { ApiError, invalidField } from '../wire/api-error.js';

export interface SingleFileUpload<S> {
  /** Says what the endpoint expects when the body is not multipart. */
  notMultipart: string;
  /** Text fields kept (others are ignored), or all of them. */
  fields: readonly string[] | 'all';
  /** Fields kept as the list of their values (`name[]` counts as `name`), in `lists`. */
  listFields?: ReadonlySet<string>;
  /** How to send the one file part, for the error about any other. */
  filePart?: string;
  /** A body of unknown size (no Content-Length) is refused unless this is false. */
  sizeRequired?: boolean;
  /** Checks against the declared Content-Length before any byte is read (size limits, quotas). */
  precheck(declaredBytes: number | undefined): void | Promise<void>;
  receive(file: Readable, filename: string): Promise<S>;
  discard(staged: S): Promise<void>;
}

export interface ReadUpload<S> {
  staged: S;
  fields: Record<string, string>;
  /** The list fields' values, in order. */
  lists: Record<string, string[]>;
}

export async function readSingleFileUpload<S>(req: FastifyRequest, opts: SingleFileUpload<S>): Promise<ReadUpload<S>> {
  if (!req.isMultipart()) throw new ApiError('invalid_request', opts.notMultipart);
  const declared = req.headers['content-length'];
  if (declared === undefined && opts.sizeRequired !== false)
    throw new ApiError('invalid_request', 'Multipart upload of unknown size: send a Content-Length header.');
  await opts.precheck(declared === undefined ? undefined : Number(declared));

  let staged: S | undefined;
  const fields: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  try {
    const parts = req.parts();
    const first = parts.next(); // starts piping the body into the parser; the watcher joins in the same tick
    const closed = watchCloseDelimiter(req.raw, req.headers['content-type']);
    for (let r = await first; !r.done; r = await parts.next()) {
      const part = r.value;
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || staged !== undefined) {
          part.file.resume();
          throw invalidField(part.fieldname, `unexpected file part; ${opts.filePart ?? 'send exactly one part named "file"'}`, 'unknown_field');
        }
        if (part.filename.includes('\u0000')) {
          part.file.resume();
          throw invalidField('filename', 'must not contain NUL characters', 'invalid_format');
        }
        staged = await opts.receive(part.file, part.filename);
      } else {
        const name = part.fieldname.endsWith('[]') ? part.fieldname.slice(0, -2) : part.fieldname;
        if (opts.fields !== 'all' && !opts.fields.includes(part.fieldname) && !opts.listFields?.has(name)) continue;
        const value = String(part.value);
        if (value.includes('\u0000')) throw invalidField(name, 'must not contain NUL characters', 'invalid_format');
        if (opts.listFields?.has(name)) (lists[name] ??= []).push(value);
        else fields[name] = value;
      }
    }
    // @fastify/multipart ends the parts quietly when the body stops before the closing boundary, which would
    // silently drop a cut-off field: a body without its close delimiter is malformed.
    if (!closed()) throw new ApiError('invalid_request', 'Malformed multipart body: it ends before the closing boundary.');
  } catch (err) {
    if (staged !== undefined) await opts.discard(staged);
    throw err;
  }
  if (staged === undefined) throw invalidField('file', 'is required', 'missing');
  return { staged, fields, lists };
}
