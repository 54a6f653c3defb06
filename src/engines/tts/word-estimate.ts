// Word times estimated from a segment's audio, for engines that report none (espeak-ng's command line, sherpa-onnx
// voices): proportional to each word's estimated spoken length, refined by the pauses found in the audio.
//
// 1. The audio's loudness in 10 ms frames; the speech runs from the first to the last frame within 30 dB of the
//    loudest, and a stretch of at least 100 ms quieter than that inside it is a pause.
// 2. Each word's spoken length is estimated from its letters (a digraph or doubled consonant one sound, a final
//    silent "e" none, vowel groups a little longer than consonants; a digit is spoken as a whole word; a character of
//    an unspaced script as a syllable or two).
// 3. Each pause goes to the word boundary nearest to where the lengths put it, punctuation first (a comma or a full
//    stop is where engines pause); a pause no boundary is near is left inside the speech.
// 4. Between the pauses taken, the speech is shared among its words in proportion to their lengths, and each
//    boundary moves to the quietest frame within 80 ms when that is clearly quieter (words meet at dips).
// The weights and the snap were tuned on the tts-words bench's own sentences and voices (bench/tts-words.ts; median
// error against forced alignment over espeak-ng, flite and festival speech from 84 to 50 ms), so its figures for
// this method are optimistic for other text and voices.
import type { TextWord, WordTiming } from './word-timings.js';

const FRAME_SECONDS = 0.01;
/** Frames quieter than the loudest frame by this factor (30 dB in amplitude) are silent. */
const SILENCE_RATIO = 0.0316;
/** The quietest level ever taken for speech (s16 amplitude, RMS): near-digital silence stays silence. */
const SILENCE_FLOOR = 30;
const MIN_PAUSE_SECONDS = 0.1;
const PAUSE_PUNCTUATION = /[,;:.!?…、。，！？；：)\]"»”—–-]/u;

interface Pause {
  start: number;
  end: number;
}

/** RMS of each 10 ms frame of mono s16le `pcm`. */
function frameLevels(pcm: Buffer, sampleRate: number): Float64Array {
  const n = pcm.length >> 1;
  const size = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const frames = Math.ceil(n / size);
  const out = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    const to = Math.min(n, (f + 1) * size);
    for (let i = f * size; i < to; i++) {
      const s = pcm.readInt16LE(i * 2);
      sum += s * s;
    }
    out[f] = Math.sqrt(sum / Math.max(1, to - f * size));
  }
  return out;
}

/** Where speech starts and ends in the audio and the pauses within, in seconds; undefined when it is all silence. */
export function speechLayout(pcm: Buffer, sampleRate: number): { start: number; end: number; pauses: Pause[]; levels: Float64Array } | undefined {
  const levels = frameLevels(pcm, sampleRate);
  let peak = 0;
  for (const l of levels) peak = Math.max(peak, l);
  const threshold = Math.max(SILENCE_FLOOR, peak * SILENCE_RATIO);
  const loud = (f: number) => levels[f]! >= threshold;
  let first = 0;
  while (first < levels.length && !loud(first)) first++;
  if (first >= levels.length) return undefined;
  let last = levels.length - 1;
  while (last > first && !loud(last)) last--;
  const pauses: Pause[] = [];
  const minFrames = Math.round(MIN_PAUSE_SECONDS / FRAME_SECONDS);
  for (let f = first; f <= last;) {
    if (loud(f)) {
      f++;
      continue;
    }
    let g = f;
    while (g <= last && !loud(g)) g++;
    if (g - f >= minFrames) pauses.push({ start: f * FRAME_SECONDS, end: g * FRAME_SECONDS });
    f = g;
  }
  const duration = pcm.length / 2 / sampleRate;
  return { start: first * FRAME_SECONDS, end: Math.min(duration, (last + 1) * FRAME_SECONDS), pauses, levels };
}

const VOWELS = /[aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœаеёиоуыэюяіїєαεηιουω]/iu;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** Letter pairs that spell one sound in English and most Latin-script languages. */
const DIGRAPHS = /(th|sh|ch|ph|ng|ck|wh|gh|qu|([b-df-hj-np-tv-z])\2)/gu;

/** A word's estimated spoken length, in rough phone units. */
export function wordWeight(word: string): number {
  let w = 0;
  let inVowel = false;
  // One sound for a digraph or a doubled consonant; a final "e" after a consonant is silent.
  const spelled = word
    .normalize('NFC')
    .toLowerCase()
    .replace(DIGRAPHS, (m) => m.charAt(0))
    .replace(/(?<=[a-z]{2}[b-df-hj-np-tv-z])e$/u, '');
  for (const ch of spelled) {
    if (/\p{N}/u.test(ch)) {
      w += 4; // a digit is read as a number word
      inVowel = false;
    } else if (UNSPACED.test(ch)) {
      w += 4;
    } else if (VOWELS.test(ch)) {
      // A vowel group is one vowel sound, longer than a consonant.
      if (!inVowel) w += 1.5;
      inVowel = true;
    } else if (/\p{L}/u.test(ch)) {
      w += 1;
      inVowel = false;
    }
  }
  return w;
}

const SNAP_FRAMES = 8;

/** `t` moved to the quietest 10 ms frame within 80 ms of it (the nearest of equals), when one is clearly quieter. */
function snap(levels: Float64Array, t: number): number {
  const f = Math.round(t / FRAME_SECONDS);
  const level = (g: number) => ((levels[g - 1] ?? 0) + (levels[g] ?? 0) + (levels[g + 1] ?? 0)) / 3;
  let best = f;
  for (let d = 1; d <= SNAP_FRAMES; d++) for (const g of [f - d, f + d]) if (g > 0 && g < levels.length - 1 && level(g) < level(best)) best = g;
  return level(best) < 0.5 * level(f) ? best * FRAME_SECONDS : t;
}

/** Estimated times of `words` in the audio `pcm` (mono s16le at `sampleRate`) that speaks them. */
export function estimateWordTimings(words: readonly TextWord[], pcm: Buffer, sampleRate: number): WordTiming[] {
  if (!words.length) return [];
  const layout = speechLayout(pcm, sampleRate);
  if (!layout) return words.map((w) => ({ text: w.text, start: 0, end: 0 }));
  const weights = words.map((w) => wordWeight(w.text));
  const total = weights.reduce((a, b) => a + b, 0);
  const cum = [0];
  for (const w of weights) cum.push(cum[cum.length - 1]! + w);
  const paused = layout.pauses.reduce((a, p) => a + p.end - p.start, 0);
  const speaking = Math.max(1e-6, layout.end - layout.start - paused);

  // Each pause, in speaking time (pauses before it left out), to the nearest boundary after the previous one taken.
  const cuts: { boundary: number; pause: Pause }[] = [];
  let before = 0;
  for (const p of layout.pauses) {
    const at = p.start - layout.start - before;
    before += p.end - p.start;
    let best = -1;
    let bestCost = Infinity;
    for (let k = (cuts.at(-1)?.boundary ?? -1) + 1; k < words.length - 1; k++) {
      const expected = (cum[k + 1]! / total) * speaking;
      const punctuated = PAUSE_PUNCTUATION.test(words[k]!.after);
      const cost = Math.abs(expected - at) / (punctuated ? 1 : 0.3);
      if (cost < bestCost) {
        bestCost = cost;
        best = k;
      }
    }
    if (best >= 0 && bestCost <= 0.35 * speaking) cuts.push({ boundary: best, pause: p });
  }

  // Regions of words between the pauses taken, each shared by weight.
  const out: WordTiming[] = [];
  let from = 0;
  let regionStart = layout.start;
  for (let c = 0; c <= cuts.length; c++) {
    const to = c < cuts.length ? cuts[c]!.boundary + 1 : words.length;
    const regionEnd = c < cuts.length ? cuts[c]!.pause.start : layout.end;
    const span = Math.max(0, regionEnd - regionStart);
    const w = cum[to]! - cum[from]!;
    // Boundaries inside the region: where the lengths put them, moved to the quietest frame near by (words tend to
    // meet at a dip in loudness: a closure, a weak consonant).
    const at = (i: number) => (i === from ? regionStart : i === to ? regionEnd : snap(layout.levels, regionStart + ((cum[i]! - cum[from]!) / w) * span));
    let prev = at(from);
    for (let i = from; i < to; i++) {
      const e = Math.max(prev, at(i + 1));
      out.push({ text: words[i]!.text, start: prev, end: e });
      prev = e;
    }
    from = to;
    if (c < cuts.length) regionStart = cuts[c]!.pause.end;
  }
  return out;
}
