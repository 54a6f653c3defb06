// The XML tokens of an SSML document: start tags (with attributes), end tags and text (entities decoded), each
// with its offset in the document. Comments are skipped; an XML declaration is accepted at the start; DOCTYPE,
// other processing instructions and malformed markup are errors naming their position.

export class SsmlError extends Error {
  readonly line: number;
  readonly column: number;

  constructor(
    source: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    const before = source.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - (before.lastIndexOf('\n') + 1) + 1;
    super(`line ${line}, column ${column}: ${reason}`);
    this.name = 'SsmlError';
    this.line = line;
    this.column = column;
  }
}

export interface Attribute {
  name: string;
  value: string;
  offset: number;
}

export type Token =
  | { kind: 'open'; name: string; attrs: Attribute[]; empty: boolean; offset: number }
  | { kind: 'close'; name: string; offset: number }
  | { kind: 'text'; text: string; offset: number };

const NAME = /[A-Za-z_][\w.:-]*/y;
const SPACE = /\s*/y;
const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function* tokens(src: string): Generator<Token> {
  const fail = (offset: number, reason: string): never => {
    throw new SsmlError(src, offset, reason);
  };
  const skipSpace = (i: number) => {
    SPACE.lastIndex = i;
    SPACE.exec(src);
    return SPACE.lastIndex;
  };
  const name = (i: number): string | undefined => {
    NAME.lastIndex = i;
    return NAME.exec(src)?.[0];
  };
  /** Text with its entities decoded; `at` is where `raw` starts in the document. */
  const decode = (raw: string, at: number): string =>
    raw.replace(/&([^;&\s]*);?/g, (whole, ref: string, pos: number) => {
      const where = at + pos;
      if (!whole.endsWith(';')) fail(where, 'a bare "&" (write &amp;)');
      if (ref in ENTITIES) return ENTITIES[ref]!;
      const m = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(ref);
      const code = m ? parseInt(m[1] ?? m[2]!, m[1] ? 16 : 10) : NaN;
      if (!(code > 0 && code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) fail(where, `unknown entity "&${ref};"`);
      return String.fromCodePoint(code);
    });

  let i = src.charCodeAt(0) === 0xfeff ? 1 : 0;
  const declStart = skipSpace(i);
  if (src.startsWith('<?xml', declStart) && /\s/.test(src[declStart + 5] ?? '')) {
    const end = src.indexOf('?>', declStart);
    if (end < 0) fail(declStart, 'the XML declaration is never closed with "?>"');
    i = end + 2;
  }
  while (i < src.length) {
    const lt = src.indexOf('<', i);
    if (lt !== i) {
      const end = lt < 0 ? src.length : lt;
      yield { kind: 'text', text: decode(src.slice(i, end), i), offset: i };
      i = end;
      continue;
    }
    if (src.startsWith('<!--', i)) {
      const end = src.indexOf('-->', i + 4);
      if (end < 0) fail(i, 'a comment is never closed with "-->"');
      i = end + 3;
      continue;
    }
    if (src.startsWith('<![CDATA[', i)) {
      const end = src.indexOf(']]>', i + 9);
      if (end < 0) fail(i, 'a CDATA section is never closed with "]]>"');
      yield { kind: 'text', text: src.slice(i + 9, end), offset: i };
      i = end + 3;
      continue;
    }
    if (src.startsWith('<!', i)) fail(i, 'DOCTYPE and other declarations are not accepted');
    if (src.startsWith('<?', i)) fail(i, 'a processing instruction is only accepted as the XML declaration at the start');
    if (src[i + 1] === '/') {
      const n = name(i + 2);
      if (!n) fail(i, 'an end tag without an element name');
      const j = skipSpace(i + 2 + n!.length);
      if (src[j] !== '>') fail(j, `the end tag </${n}> is not closed with ">"`);
      yield { kind: 'close', name: n!, offset: i };
      i = j + 1;
      continue;
    }
    const n = name(i + 1);
    if (!n) fail(i, 'a "<" that starts no element (write &lt;)');
    let j = i + 1 + n!.length;
    const attrs: Attribute[] = [];
    for (;;) {
      const k = skipSpace(j);
      if (src.startsWith('/>', k) || src[k] === '>') {
        const empty = src[k] === '/';
        yield { kind: 'open', name: n!, attrs, empty, offset: i };
        i = k + (empty ? 2 : 1);
        break;
      }
      if (k === j) fail(k, k >= src.length ? `the tag <${n}> is never closed with ">"` : `unexpected "${src[k]}" in the tag <${n}>`);
      const a = name(k);
      if (!a) fail(k, `unexpected "${src[k]}" in the tag <${n}>`);
      let v = skipSpace(k + a!.length);
      if (src[v] !== '=') fail(v, `the attribute ${a} has no value (write ${a}="...")`);
      v = skipSpace(v + 1);
      const quote = src[v];
      if (quote !== '"' && quote !== "'") fail(v, `the value of ${a} is not quoted`);
      const end = src.indexOf(quote!, v + 1);
      if (end < 0) fail(v, `the value of ${a} is never closed with ${quote}`);
      const raw = src.slice(v + 1, end);
      const lt2 = raw.indexOf('<');
      if (lt2 >= 0) fail(v + 1 + lt2, `a "<" in the value of ${a} (write &lt;)`);
      if (attrs.some((x) => x.name === a)) fail(k, `the attribute ${a} is given twice`);
      attrs.push({ name: a!, value: decode(raw, v + 1), offset: k });
      j = end + 1;
    }
  }
}
