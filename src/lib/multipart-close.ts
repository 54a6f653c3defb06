// @fastify/multipart (busboy) ends the parts quietly when a body stops before its closing boundary, which
// would silently drop a cut-off field. Watching the raw bytes for the close delimiter tells the two apart.
import type { Readable } from 'node:stream';

/** Watches the raw body for the multipart close delimiter (`--boundary--` at the start or after CRLF). */
export function watchCloseDelimiter(raw: Readable, contentType: string | undefined): () => boolean {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return () => false;
  const delimiter = Buffer.from(`\r\n--${boundary}--`, 'latin1');
  // Bytes carried over from the previous chunk, so a delimiter split across chunks is still found; the
  // body starts as if after a CRLF (a close delimiter may open the body). Searching buffers, not strings,
  // keeps a gigabyte upload from being copied into strings chunk by chunk.
  let tail = Buffer.from('\r\n', 'latin1');
  let seen = false;
  const onData = (chunk: Buffer) => {
    const head = chunk.subarray(0, delimiter.length - 1);
    if (Buffer.concat([tail, head]).includes(delimiter) || chunk.includes(delimiter)) {
      seen = true;
      raw.off('data', onData);
      return;
    }
    tail = Buffer.from(
      chunk.length >= delimiter.length - 1
        ? chunk.subarray(chunk.length - (delimiter.length - 1))
        : Buffer.concat([tail, chunk]).subarray(-(delimiter.length - 1)),
    );
  };
  raw.on('data', onData);
  return () => seen;
}
