// The SSML subset every TTS engine speaks: <speak>, <break time|strength>, <prosody rate|pitch|volume>,
// <say-as interpret-as="characters|spell-out|digits">, <sub alias>, <phoneme ph alphabet>. A document becomes a
// flat list of items: text runs with the prosody in effect, and breaks. Anything else (another element or
// attribute, a bad value, text outside <speak>, malformed XML) throws an SsmlError naming its line and column.
import { type Attribute, SsmlError, tokens } from './lexer.js';
import { breakStrength, breakTime, prosodyPitch, prosodyRate, prosodyVolume } from './values.js';

export { SsmlError } from './lexer.js';

/** The prosody in effect: a rate multiplier, a pitch shift in semitones, a volume change in decibels. */
export interface Prosody {
  rate: number;
  pitch: number;
  volume: number;
}

export const NEUTRAL_PROSODY: Prosody = { rate: 1, pitch: 0, volume: 0 };

export interface SsmlText {
  kind: 'text';
  /** What to say, as plain text (say-as expanded, a sub's alias, a phoneme's own text); whitespace collapsed. */
  text: string;
  prosody: Prosody;
  /** say-as characters: the characters to spell (engines that spell natively use these). */
  spell?: string;
  /** phoneme: the pronunciation, for engines that read its alphabet (else `text` is said). */
  phoneme?: { alphabet: string; ph: string };
}

export interface SsmlBreak {
  kind: 'break';
  seconds: number;
}

export type SsmlItem = SsmlText | SsmlBreak;

export interface SsmlDocument {
  items: SsmlItem[];
  /** The spoken text (markup removed, a sub's alias for its content, whitespace collapsed): what caps and meters count. */
  text: string;
}

export const SSML_ELEMENTS = ['speak', 'break', 'prosody', 'say-as', 'sub', 'phoneme'] as const;

/** Attributes each element takes; `xmlns` and namespaced ones (`xml:lang`, `xsi:…`) are accepted and ignored everywhere. */
const ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  speak: ['version'],
  break: ['time', 'strength'],
  prosody: ['rate', 'pitch', 'volume'],
  'say-as': ['interpret-as', 'format', 'detail'],
  sub: ['alias'],
  phoneme: ['ph', 'alphabet'],
};
const REQUIRED: Readonly<Record<string, string>> = { 'say-as': 'interpret-as', sub: 'alias', phoneme: 'ph' };
const SAY_AS = ['characters', 'spell-out', 'digits'];

interface Frame {
  name: string;
  offset: number;
  prosody: Prosody;
  attrs: Map<string, string>;
  /** say-as, sub, phoneme: their text, collected until they close. */
  content?: string;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ');

/** Each character spelled as its own word (letters in upper case where that stays one character). */
export function spellCharacters(text: string): string {
  const chars = Array.from(text.replace(/\s+/g, '')).map((c) => (c.toUpperCase().length === 1 ? c.toUpperCase() : c));
  return chars.length ? ` ${chars.join(' ')} ` : ' ';
}

/** Each digit said on its own ("1 2 3"); other characters kept. */
export function spellDigits(text: string): string {
  return ` ${collapse(text.replace(/\p{Nd}/gu, (d) => ` ${d} `)).trim()} `;
}

export function parseSsml(src: string): SsmlDocument {
  const fail = (offset: number, reason: string): never => {
    throw new SsmlError(src, offset, reason);
  };
  const items: SsmlItem[] = [];
  let spoken = '';
  const stack: Frame[] = [];
  let rootClosed = false;
  const say = (text: string, prosody: Prosody, extra: Partial<SsmlText> = {}, heard = text) => {
    items.push({ kind: 'text', text: collapse(text), prosody, ...extra });
    spoken += heard;
  };

  const attributes = (name: string, attrs: Attribute[], offset: number): Map<string, string> => {
    const allowed = ATTRIBUTES[name]!;
    const out = new Map<string, string>();
    for (const a of attrs) {
      if (a.name === 'xmlns' || a.name.includes(':')) continue;
      if (!allowed.includes(a.name)) fail(a.offset, `<${name}> has no attribute ${a.name}${allowed.length ? ` (it takes ${allowed.join(', ')})` : ''}`);
      out.set(a.name, a.value);
    }
    const required = REQUIRED[name];
    if (required && !out.has(required)) fail(offset, `<${name}> needs the attribute ${required}`);
    return out;
  };
  /** An attribute value read by `read`, its error placed at the attribute. */
  const value = <T>(attrs: Attribute[], name: string, read: (v: string) => T): T | undefined => {
    const a = attrs.find((x) => x.name === name);
    if (!a) return undefined;
    try {
      return read(a.value);
    } catch (err) {
      return fail(a.offset, (err as Error).message);
    }
  };

  for (const t of tokens(src)) {
    const top = stack.at(-1);
    if (t.kind === 'text') {
      if (!top) {
        if (t.text.trim()) fail(t.offset + t.text.search(/\S/), rootClosed ? 'text after </speak>' : 'text outside <speak>');
        continue;
      }
      if (top.content !== undefined) top.content += t.text;
      else if (top.name === 'break') {
        if (t.text.trim()) fail(t.offset, '<break> must be empty');
      } else say(t.text, top.prosody);
      continue;
    }
    if (t.kind === 'close') {
      if (!top) fail(t.offset, `</${t.name}> closes no element`);
      if (top!.name !== t.name) {
        const at = new SsmlError(src, top!.offset, '');
        fail(t.offset, `</${t.name}> where </${top!.name}> was expected (<${top!.name}> opened at line ${at.line}, column ${at.column})`);
      }
      stack.pop();
      closeElement(top!);
      if (t.name === 'speak') rootClosed = true;
      continue;
    }
    if (!top) {
      if (rootClosed) fail(t.offset, `<${t.name}> after </speak>`);
      if (t.name !== 'speak') fail(t.offset, `the document must be one <speak> element, not <${t.name}>`);
    } else if (top.content !== undefined) fail(t.offset, `<${top.name}> may contain only text, not <${t.name}>`);
    else if (top.name === 'break') fail(t.offset, '<break> must be empty');
    else if (t.name === 'speak') fail(t.offset, '<speak> inside <speak>');
    if (!(t.name in ATTRIBUTES)) fail(t.offset, `unknown element <${t.name}> (supported: ${SSML_ELEMENTS.join(', ')})`);
    const attrs = attributes(t.name, t.attrs, t.offset);
    const prosody = { ...(top?.prosody ?? NEUTRAL_PROSODY) };
    const frame: Frame = { name: t.name, offset: t.offset, prosody, attrs };
    if (t.name === 'break') {
      // time wins over strength (SSML 1.1); a bad strength is refused even beside a time. Neither: medium.
      const strength = value(t.attrs, 'strength', breakStrength);
      items.push({ kind: 'break', seconds: value(t.attrs, 'time', breakTime) ?? strength ?? breakStrength('medium') });
    } else if (t.name === 'prosody') {
      prosody.rate *= value(t.attrs, 'rate', prosodyRate) ?? 1;
      prosody.pitch += value(t.attrs, 'pitch', prosodyPitch) ?? 0;
      prosody.volume += value(t.attrs, 'volume', prosodyVolume) ?? 0;
    } else if (t.name === 'say-as') {
      value(t.attrs, 'interpret-as', (v) => {
        if (!SAY_AS.includes(v)) throw new Error(`interpret-as="${v}" is not supported (supported: ${SAY_AS.join(', ')})`);
      });
      frame.content = '';
    } else if (t.name === 'sub' || t.name === 'phoneme') frame.content = '';
    if (t.empty) closeElement(frame);
    else stack.push(frame);
    if (t.empty && t.name === 'speak') rootClosed = true;
  }
  const open = stack.at(-1);
  if (open) fail(open.offset, `<${open.name}> is never closed`);
  if (!rootClosed) fail(0, 'the document must be one <speak> element');
  return { items, text: collapse(spoken).trim() };

  function closeElement(f: Frame): void {
    const content = f.content ?? '';
    if (f.name === 'say-as') {
      const how = f.attrs.get('interpret-as')!;
      if (how === 'digits') say(spellDigits(content), f.prosody, {}, content);
      else say(spellCharacters(content), f.prosody, { spell: collapse(content).trim() }, content);
    } else if (f.name === 'sub') {
      const alias = f.attrs.get('alias')!;
      say(` ${alias} `, f.prosody, {}, alias);
    } else if (f.name === 'phoneme') {
      const alphabet = f.attrs.get('alphabet') ?? 'ipa';
      say(content, f.prosody, { phoneme: { alphabet, ph: f.attrs.get('ph')! } });
    }
  }
}
