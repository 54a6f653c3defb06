// Transport for multipart uploads of exactly one file part plus text fields (files, cloned voices, OpenAI's audio
// requests): the size must be declared (unless the caller allows otherwise), the body must end with its close
// delimiter, and the staged file is discarded on any failure. What to stage and where is the caller's (its service's
// receive/discard).
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { watchCloseDelimiter } from '../lib/multipart-close.js';
import { ApiError, invalidField } from '../wire/api-error.js';

/** The multipart parser's limits for every upload (src/http/app.ts); one request may widen them (`wider`). */
export const MULTIPART_LIMITS = { files: 1, fields: 10, parts: 12, fieldSize: 64 * 1024, headerPairs: 200 } as const;

/** A form with more room than MULTIPART_LIMITS: many list entries, or fields that carry audio (data URLs). */
export interface WiderLimits {
  /** Entries of the list fields, beyond the plain fields' MULTIPART_LIMITS.fields. */
  listEntries: number;
  /** Bytes of the largest text field. */
  fieldSize: number;
  /** Bytes of all text fields together: with a larger fieldSize, what bounds the memory one request holds. */
  totalBytes: number;
}

export interface SingleFileUpload<S> {
  /** Says what the endpoint expects when the body is not multipart. */
  notMultipart: string;
  /** Text fields kept (others are ignored), or all of them. */
  fields: readonly string[] | 'all';
  /** Fields kept as the list of their values (`name[]` counts as `name`), in `lists`. */
  listFields?: ReadonlySet<string>;
  /** How to send the one file part, for the error about any other. */
  filePart?: string;
  wider?: WiderLimits;
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
    const { wider } = opts;
    const maxFields = MULTIPART_LIMITS.fields + (wider?.listEntries ?? 0);
    const parts = req.parts(wider ? { limits: { fields: maxFields, parts: maxFields + 2, fieldSize: wider.fieldSize } } : undefined);
    let plainFields = 0;
    let fieldBytes = 0;
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
        // The parser cuts a value at the size limit and says so: a cut value is never taken for the whole one.
        if (part.valueTruncated) throw invalidField(name, 'is longer than a form field may be', 'invalid_length');
        const value = String(part.value);
        // With room for list entries, the other fields keep the usual count.
        if (wider && !opts.listFields?.has(name) && ++plainFields > MULTIPART_LIMITS.fields)
          throw new ApiError('invalid_request', 'Too many multipart fields.');
        fieldBytes += Buffer.byteLength(value);
        if (wider && fieldBytes > wider.totalBytes)
          throw new ApiError('invalid_request', `The form's text fields are larger than ${wider.totalBytes} bytes together.`);
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
