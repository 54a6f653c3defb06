// Text segmentation shared by the engines: sentences (or clauses of overlong sentences) out of a text
// stream, emitted as soon as a boundary is seen, the remainder when the stream ends.

const MAX_SEGMENT = 300;

/** Index just after the first segment boundary in `buf`, or -1. A boundary needs the following whitespace. */
function boundary(buf: string, final: boolean): number {
  const re = /[.!?;:。！？…]+["')\]]*(\s+)|\n\s*\n/g;
  const m = re.exec(buf);
  if (m) return m.index + m[0].length;
  if (buf.length > MAX_SEGMENT) {
    // An overlong run without a sentence end: cut at the last comma or space before the limit.
    const head = buf.slice(0, MAX_SEGMENT);
    const cut = Math.max(head.lastIndexOf(', '), head.lastIndexOf(' '));
    return cut > 0 ? cut + 1 : MAX_SEGMENT;
  }
  return final && buf.length ? buf.length : -1;
}

export async function* segments(text: AsyncIterable<string> | string): AsyncGenerator<string> {
  let buf = '';
  const source: AsyncIterable<string> | Iterable<string> = typeof text === 'string' ? [text] : text;
  for await (const chunk of source) {
    buf += chunk;
    for (let i = boundary(buf, false); i > 0; i = boundary(buf, false)) {
      const seg = buf.slice(0, i).trim();
      buf = buf.slice(i);
      if (/[\p{L}\p{N}]/u.test(seg)) yield seg;
    }
  }
  const rest = buf.trim();
  if (/[\p{L}\p{N}]/u.test(rest)) yield rest;
}
