// Real human recordings with reference transcripts, for accuracy tests and benchmarks: Debian's
// pocketsphinx-testdata (librivox read speech and the "cards" set, 10 clips, 92 words). And the one way to add up
// word errors over several clips.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { normalizeWords, wordErrorRate } from '../src/engines/stt/wer.js';

export const TESTDATA = '/usr/share/pocketsphinx/test/data';

export interface RealClip {
  file: string;
  reference: string;
  /** librivox or cards. */
  set: string;
}

export function testdataClips(): RealClip[] {
  const clips: RealClip[] = [];
  for (const [dir, refFile] of [
    ['librivox', 'transcription'],
    ['cards', 'cards.transcription'],
  ] as const) {
    for (const line of readFileSync(path.join(TESTDATA, dir, refFile), 'utf8').split('\n')) {
      const m = /^<s>\s*(.*?)\s*<\/s>\s*\(([^)]+)\)/.exec(line.trim());
      if (m) clips.push({ file: path.join(TESTDATA, dir, `${m[2]}.wav`), reference: m[1]!, set: dir });
    }
  }
  return clips;
}

/** Word errors (substitutions + deletions + insertions) over all pairs, and the WER they make. */
export function werOf(pairs: { reference: string; text: string }[]): { wer: number; words: number; errors: number } {
  let errors = 0;
  let words = 0;
  for (const p of pairs) {
    const w = wordErrorRate(p.reference, p.text);
    errors += w.substitutions + w.deletions + w.insertions;
    words += w.referenceWords;
  }
  return { wer: words ? errors / words : 0, words, errors };
}

export const ASTERISK_EN = '/usr/share/asterisk/sounds/en_US_f_Allison';
export const ASTERISK_EN_TRANSCRIPTS = '/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz';

/**
 * Misspellings in Asterisk's transcripts, where the speaker says the word correctly. Found by listing every
 * transcript word the model's dictionary lacks and keeping those that are a dictionary word misspelled (before any
 * decoding was looked at for them); without this a recogniser that hears the word right is scored wrong, and a
 * "term" that nobody can say sits in the term-recall set.
 */
const ASTERISK_EN_ERRATA: Readonly<Record<string, string>> = {
  umute: 'unmute',
  fourtieth: 'fortieth',
  represenatives: 'representatives',
  indentified: 'identified',
  witheld: 'withheld',
  exclaimation: 'exclamation',
};

/**
 * Asterisk's US English prompts (asterisk-core-sounds-en-wav, read by Allison Smith, 8 kHz telephone audio) with
 * the transcripts Debian ships in asterisk-core-sounds-en (`name: text` lines), with the errata above. Prompts whose
 * transcript only describes a sound ("[ascending tones]", "<beep ascending>") are left out, and a symbol's gloss is
 * dropped from the words that name it ("dash [-]" → "dash"). Empty when either package is missing.
 */
export function asteriskEnClips(): RealClip[] {
  if (!existsSync(ASTERISK_EN_TRANSCRIPTS) || !existsSync(ASTERISK_EN)) return [];
  const clips: RealClip[] = [];
  for (const line of gunzipSync(readFileSync(ASTERISK_EN_TRANSCRIPTS)).toString('utf8').split('\n')) {
    const m = /^([\w./-]+):\s*(.+)$/.exec(line.trim());
    if (!m) continue;
    // "[ascending tones]" and "<beep ascending>" describe tones; "at [@]" glosses the symbol a spoken word names.
    const spoken = m[2]!
      .replace(/\[[^\]]*\]|<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (!spoken) continue;
    const reference = spoken.replace(/\p{L}+/gu, (w) => ASTERISK_EN_ERRATA[w] ?? w);
    const file = path.join(ASTERISK_EN, `${m[1]}.wav`);
    if (existsSync(file)) clips.push({ file, reference, set: 'asterisk-en' });
  }
  return clips;
}

/**
 * A user's folder of recordings: `refs.tsv` holds one `<audio file, relative to the folder>\t<reference>` per line
 * (blank lines and lines starting with # are skipped). Throws naming the line when a file is missing.
 */
export function folderClips(dir: string): RealClip[] {
  const tsv = path.join(dir, 'refs.tsv');
  if (!existsSync(tsv)) throw new Error(`${tsv} not found: put one "<audio file>\\t<reference text>" line per recording there`);
  const clips: RealClip[] = [];
  readFileSync(tsv, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim() || line.startsWith('#')) return;
      const tab = line.indexOf('\t');
      if (tab < 0) throw new Error(`${tsv}:${i + 1}: expected "<audio file>\\t<reference text>"`);
      const file = path.resolve(dir, line.slice(0, tab).trim());
      if (!existsSync(file)) throw new Error(`${tsv}:${i + 1}: ${file} not found`);
      clips.push({ file, reference: line.slice(tab + 1).trim(), set: path.basename(path.resolve(dir)) });
    });
  return clips;
}

/**
 * Which half of the real recordings a clip is in: 'tune' (decoder settings may be chosen on it) or 'held-out'
 * (only ever reported). Fixed by a hash of the file name, so the halves never change between runs or machines.
 */
export function splitOf(file: string): 'tune' | 'held-out' {
  return createHash('sha256')
    .update(path.basename(path.dirname(file)) + '/' + path.basename(file))
    .digest()[0]! < 128
    ? 'tune'
    : 'held-out';
}

/** Speech onset and end in ms of 16 kHz s16le: the first and last 10 ms window with a peak above -30 dBFS. */
export function speechBounds(pcm: Buffer): { start: number; end: number } {
  let start = -1;
  let end = 0;
  for (let w = 0; w + 320 <= pcm.length; w += 320) {
    let peak = 0;
    for (let i = w; i < w + 320; i += 2) peak = Math.max(peak, Math.abs(pcm.readInt16LE(i)));
    if (peak > 1000) {
      if (start < 0) start = w / 32;
      end = (w + 320) / 32;
    }
  }
  return { start: Math.max(0, start), end };
}

/**
 * Clips of one half (held-out by default), pocketsphinx-testdata first and then Asterisk's prompts, each set sorted by
 * file name, until `minWords` reference words: the same clips on every run and machine.
 */
export function halfClips(minWords: number, half: 'held-out' | 'tune' = 'held-out'): RealClip[] {
  const byFile = (a: RealClip, b: RealClip) => a.file.localeCompare(b.file);
  const pool = [...testdataClips().sort(byFile), ...asteriskEnClips().sort(byFile)].filter((c) => splitOf(c.file) === half);
  const out: RealClip[] = [];
  let words = 0;
  for (const clip of pool) {
    if (words >= minWords) break;
    out.push(clip);
    words += normalizeWords(clip.reference).length;
  }
  if (words < minWords) throw new Error(`only ${words} ${half} reference words found (wanted ${minWords}): install asterisk-core-sounds-en-wav`);
  return out;
}
