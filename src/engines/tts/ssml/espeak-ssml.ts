// SSML for espeak-ng (-m): a parsed document rendered back into the markup espeak-ng reads, one piece per sentence
// (so the first audio comes after the first sentence, as with plain text). espeak-ng reads <prosody rate|pitch|volume>
// as percentages and spells <say-as interpret-as="characters">; it ignores <phoneme> but reads its own phoneme
// mnemonics between [[ and ]], so a phoneme in the "x-espeak" alphabet is spoken from its `ph`, any other from its
// text. Digits are spelled by the parser (espeak-ng reads say-as digits as a number).
// Breaks are not left to espeak-ng: it drops one before the first words, and its <break time> counts from the end of
// a word's breath noise, which the breathy variants (Maya, f2) keep up for 100–150 ms above the near-silence level:
// a 700 ms break measured 575–590 ms of silence on de+f2. Each break ends the piece and goes out as a pause chunk,
// placed exactly by ssml/pauses.ts, as on every other engine.
import type { Prosody, SsmlItem } from './parse.js';
import { clampSpeed } from './translate.js';

/** The phoneme alphabets espeak-ng reads: its own mnemonics (`espeak-ng -x` prints them). */
export const ESPEAK_ALPHABETS: readonly string[] = ['x-espeak', 'espeak'];
/** A piece grows past this many characters only up to the next space. */
const MAX_PIECE = 300;
const SENTENCE_END = /[.!?;:。！？…]+["')\]]*\s+/g;

export interface EspeakPiece {
  /** Seconds of break before the piece. */
  before: number;
  /** The piece as espeak-ng SSML (empty: nothing to say). */
  markup: string;
  /** Its plain text, for timings. */
  text: string;
}

const escapeXml = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    // "[[" starts phoneme input in espeak-ng's text: plain text keeps its brackets apart.
    .replace(/\[\[/g, '[ [');

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The prosody attributes espeak-ng reads, relative to the voice at the request's `speed` (-s). */
function prosodyAttributes(p: Prosody, speed: number): string {
  const attrs: string[] = [];
  if (p.rate !== 1) attrs.push(`rate="${pct(clampSpeed(speed * p.rate) / speed)}"`);
  if (p.pitch !== 0) attrs.push(`pitch="${p.pitch > 0 ? '+' : '-'}${pct(Math.abs(2 ** (p.pitch / 12) - 1))}"`);
  if (p.volume !== 0) attrs.push(`volume="${p.volume === -Infinity ? '0%' : pct(10 ** (p.volume / 20))}"`);
  return attrs.join(' ');
}

/** One text item as espeak-ng markup. */
function renderText(item: Extract<SsmlItem, { kind: 'text' }>, speed: number): string {
  let inner = escapeXml(item.text);
  if (item.spell !== undefined) inner = ` <say-as interpret-as="characters">${escapeXml(item.spell)}</say-as> `;
  else if (item.phoneme && ESPEAK_ALPHABETS.includes(item.phoneme.alphabet)) inner = ` [[${item.phoneme.ph.replace(/[[\]<>&]/g, '')}]] `;
  const attrs = prosodyAttributes(item.prosody, speed);
  return attrs ? `<prosody ${attrs}>${inner}</prosody>` : inner;
}

/** Text items cut at sentence ends (and overlong runs at a space), each part marking whether a piece ends after it. */
function* parts(items: readonly SsmlItem[]): Generator<{ item: SsmlItem; ends: boolean }> {
  let length = 0;
  for (const item of items) {
    if (item.kind === 'break' || item.spell !== undefined || item.phoneme) {
      if (item.kind === 'text') length += item.text.length;
      yield { item, ends: false };
      continue;
    }
    let rest = item.text;
    for (;;) {
      SENTENCE_END.lastIndex = 0;
      const m = SENTENCE_END.exec(rest);
      let cut = m ? m.index + m[0].length : -1;
      if (length + (cut < 0 ? rest.length : cut) > MAX_PIECE) {
        const space = rest.indexOf(' ', Math.max(0, MAX_PIECE - length));
        if (space >= 0 && (cut < 0 || space < cut)) cut = space + 1;
      }
      if (cut < 0 || cut >= rest.length) {
        length += rest.length;
        yield { item: { ...item, text: rest }, ends: cut >= 0 };
        if (cut >= 0) length = 0;
        break;
      }
      yield { item: { ...item, text: rest.slice(0, cut) }, ends: true };
      length = 0;
      rest = rest.slice(cut);
    }
  }
}

/** A document's items as espeak-ng pieces; `range` is a cloned voice's intonation range (percent) when set. */
export function espeakPieces(items: readonly SsmlItem[], speed: number, range?: number): EspeakPiece[] {
  const pieces: EspeakPiece[] = [];
  let piece = { before: 0, body: '', text: '', speaks: false };
  const close = () => {
    if (piece.speaks) {
      const body = range === undefined ? piece.body : `<prosody range="${range}%">${piece.body}</prosody>`;
      pieces.push({ before: piece.before, markup: `<speak>${body}</speak>`, text: piece.text.replace(/\s+/g, ' ').trim() });
      piece = { before: 0, body: '', text: '', speaks: false };
    }
  };
  for (const { item, ends } of parts(items)) {
    if (item.kind === 'break') {
      close();
      piece.before += item.seconds;
      continue;
    }
    piece.body += renderText(item, speed);
    piece.text += item.text;
    piece.speaks ||= /[\p{L}\p{N}]/u.test(item.text);
    if (ends) close();
  }
  close();
  // Breaks after the last words: a pause of their own.
  if (piece.before > 0) pieces.push({ before: piece.before, markup: '', text: '' });
  return pieces;
}
