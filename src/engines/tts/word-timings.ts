// Word timings of synthesized speech: the words of a segment's text, and how an engine's own timing units (festival's
// words under their tokens, flite's phone segments, character timings) become the times of those words.
//
// Which method each engine uses (SynthesisChunk.words; the pipeline estimates where an engine gives none):
// - festival: the engine's own times, read from the utterance it synthesized (each Word's first and last segment,
//   grouped by the Token it came from) — festival.ts.
// - flite: the engine's own phone segment end times (`-psdur`), mapped onto the words by aligning them with each
//   word's phones from flite's own lexicon (`t2p`) — flite-words.ts.
// - espeak-ng: the library's own word events, through native/espeak-words (the command line reports none) —
//   espeak-words.ts; estimated as below where that program is not built.
// - engines with character timings: the characters of each word, grouped.
// - sherpa-onnx voices: estimated from the audio (word-estimate.ts), as sherpa-onnx's offline TTS reports no
//   durations: each stretch of speech between detected pauses is shared among its words by their estimated spoken
//   length, pauses going to punctuation first. Not a forced alignment: the recognizer is English-only and these
//   voices speak any language.

/** One word of a segment with its time, in seconds from the start of the segment's audio. */
export interface WordTiming {
  text: string;
  start: number;
  end: number;
}

/** A word of a text: what it says and what follows it up to the next word (punctuation, spaces). */
export interface TextWord {
  text: string;
  /** The punctuation and spaces after the word (a pause is likelier after ",", "." and the like). */
  after: string;
}

/** Scripts written without spaces between words: each character is a word of its own. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

/**
 * The words of `text` in order: whitespace-separated runs holding a letter or digit, without their leading and trailing
 * punctuation ("don't", "well-known" and "3.5" stay whole); characters of unspaced scripts are words one by one.
 */
export function textWords(text: string): TextWord[] {
  const out: TextWord[] = [];
  const push = (word: string, after: string) => {
    if (word) out.push({ text: word, after });
    else if (out.length) out[out.length - 1]!.after += after;
  };
  for (const m of text.matchAll(/(\S+)(\s*)/gu)) {
    const token = m[1]!;
    const chars = Array.from(token);
    let a = 0;
    let b = chars.length;
    while (a < b && !WORD_CHAR.test(chars[a]!)) a++;
    while (b > a && !WORD_CHAR.test(chars[b - 1]!)) b--;
    if (out.length && a > 0) out[out.length - 1]!.after += chars.slice(0, a).join('');
    const core = chars.slice(a, b);
    const tail = chars.slice(b).join('') + m[2]!;
    if (!core.some((c) => UNSPACED.test(c))) {
      push(core.join(''), tail);
      continue;
    }
    // Unspaced script: each of its characters a word, runs of other letters kept together.
    let run = '';
    core.forEach((c, i) => {
      const last = i === core.length - 1;
      if (UNSPACED.test(c)) {
        if (run) push(run, '');
        run = '';
        push(c, last ? tail : '');
      } else if (WORD_CHAR.test(c)) {
        run += c;
        if (last) push(run, tail);
      } else {
        if (run) push(run, c);
        else if (out.length) out[out.length - 1]!.after += c;
        run = '';
      }
    });
  }
  return out;
}

/** Character timings (seconds) grouped into the words of their text: a word runs from its first to its last character. */
export function wordsFromCharacters(timings: { characters: string[]; start: number[]; end: number[] }): WordTiming[] {
  const text = timings.characters.join('');
  const words = textWords(text);
  const out: WordTiming[] = [];
  let pos = 0; // index into characters
  for (const w of words) {
    const chars = Array.from(w.text);
    // Find the word's first character from where the previous word ended.
    while (pos < timings.characters.length && !startsAt(timings.characters, pos, chars)) pos++;
    if (pos >= timings.characters.length) break;
    const last = pos + chars.length - 1;
    out.push({ text: w.text, start: timings.start[pos]!, end: timings.end[last]! });
    pos = last + 1;
  }
  return out;
}

function startsAt(chars: string[], pos: number, word: string[]): boolean {
  for (let i = 0; i < word.length; i++) if (chars[pos + i] !== word[i]) return false;
  return true;
}

/** Lowercase letters and digits only, accents dropped: how words from an engine are compared with the text's. */
export function wordKey(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * Times an engine gave for its own words (`timed`, in order, possibly normalized differently or missing some) put on
 * the words of the text: the two sequences are aligned on their keys (edit distance), a text word takes the times of
 * the engine word matched or substituted for it, and a text word left without any lies between its neighbours.
 */
export function alignWordTimes(words: readonly TextWord[], timed: readonly WordTiming[]): WordTiming[] {
  const a = words.map((w) => wordKey(w.text));
  const b = timed.map((w) => wordKey(w.text));
  const pairs = alignSequences(a, b, (x, y) => (x === y ? 0 : 1));
  const start: (number | undefined)[] = new Array(words.length).fill(undefined);
  const end: (number | undefined)[] = new Array(words.length).fill(undefined);
  for (const [i, j] of pairs) {
    if (i === undefined || j === undefined) continue;
    start[i] = Math.min(start[i] ?? Infinity, timed[j]!.start);
    end[i] = Math.max(end[i] ?? -Infinity, timed[j]!.end);
  }
  return fillGaps(words, start, end);
}

/**
 * Words without a time get one between their neighbours: the gap between the previous timed word's end and the next
 * one's start is shared equally (a word the engine did not speak lasts nothing).
 */
export function fillGaps(words: readonly TextWord[], start: (number | undefined)[], end: (number | undefined)[]): WordTiming[] {
  const out: WordTiming[] = [];
  for (let i = 0; i < words.length;) {
    if (start[i] !== undefined && end[i] !== undefined) {
      out.push({ text: words[i]!.text, start: start[i]!, end: end[i]! });
      i++;
      continue;
    }
    let j = i;
    while (j < words.length && (start[j] === undefined || end[j] === undefined)) j++;
    const from = out.length ? out[out.length - 1]!.end : j < words.length ? start[j]! : 0;
    const to = j < words.length ? Math.max(from, start[j]!) : from;
    const step = (to - from) / (j - i);
    for (let k = i; k < j; k++) out.push({ text: words[k]!.text, start: from + (k - i) * step, end: from + (k - i + 1) * step });
    i = j;
  }
  // Times never go backwards: an engine's overlapping words are cut at the next one's start.
  for (let i = 1; i < out.length; i++) {
    const prev = out[i - 1]!;
    const w = out[i]!;
    if (w.start < prev.end) {
      if (w.end <= prev.end) w.start = w.end = prev.end;
      else w.start = prev.end;
    }
  }
  return out;
}

/**
 * Edit-distance alignment of two sequences: the pairs [i, j] in order, with `undefined` on one side for an element
 * only the other has. Quadratic: for a segment's words or phones (a few hundred at most).
 */
export function alignSequences<A, B>(a: readonly A[], b: readonly B[], cost: (x: A, y: B) => number): [number | undefined, number | undefined][] {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const d = new Float64Array((n + 1) * w);
  for (let i = 0; i <= n; i++) d[i * w] = i;
  for (let j = 0; j <= m; j++) d[j] = j;
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++) d[i * w + j] = Math.min(d[(i - 1) * w + j - 1]! + cost(a[i - 1]!, b[j - 1]!), d[(i - 1) * w + j]! + 1, d[i * w + j - 1]! + 1);
  const out: [number | undefined, number | undefined][] = [];
  let i = n;
  let j = m;
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i * w + j] === d[(i - 1) * w + j - 1]! + cost(a[i - 1]!, b[j - 1]!)) {
      out.push([--i, --j]);
    } else if (i > 0 && d[i * w + j] === d[(i - 1) * w + j]! + 1) out.push([--i, undefined]);
    else out.push([undefined, --j]);
  }
  return out.reverse();
}
