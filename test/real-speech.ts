// Real human recordings with reference transcripts, for accuracy tests and benchmarks: Debian's
// pocketsphinx-testdata (librivox read speech and the "cards" set, 10 clips, 92 words). And the one way to add up
// word errors over several clips.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { wordErrorRate } from '../src/engines/stt/wer.js';

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
