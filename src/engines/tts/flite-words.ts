// flite's own word times. With `-psdur` flite prints every phone segment it synthesized with its end time (the
// pauses as "pau"); which word each phone belongs to it does not say. Each word's phones come from flite's own
// lexicon and letter-to-sound rules (`t2p <word>`, a few milliseconds a word); the two phone sequences are aligned
// (edit distance, so a word pronounced a little differently in context still finds its phones) and a word runs from
// its first phone's start to its last phone's end.
import { INTERACTIVE_NICE } from '../../lib/priority.js';
import { runChild } from '../../lib/spawner/spawn-child.js';
import { alignSequences, fillGaps, type TextWord, textWords, type WordTiming } from './word-timings.js';

export interface FliteSegment {
  phone: string;
  start: number;
  end: number;
}

/** `-psdur` output ("pau:0.184 dh:0.228 ...") as segments, each starting where the previous one ended. */
export function parseFliteSegments(stdout: string): FliteSegment[] {
  const out: FliteSegment[] = [];
  let prev = 0;
  for (const m of stdout.matchAll(/(?:^|\s)([a-z]+):(\d+(?:\.\d+)?)(?=\s|$)/g)) {
    const end = Number(m[2]);
    out.push({ phone: m[1]!, start: prev, end });
    prev = end;
  }
  return out;
}

/** Phones without their stress digit ("ow1" → "ow"); pauses dropped. */
function phones(t2p: string): string[] {
  return t2p
    .trim()
    .split(/\s+/)
    .map((p) => p.replace(/[0-9]$/, ''))
    .filter((p) => p && p !== 'pau');
}

/** Each word's phones from flite's lexicon (`t2p`), asked concurrently; a word t2p cannot say has none. */
export async function wordPhones(words: readonly TextWord[], t2p = 't2p'): Promise<string[][]> {
  return Promise.all(
    words.map(async (w) => {
      try {
        const r = await runChild(t2p, [w.text], { timeoutMs: 10_000, nice: INTERACTIVE_NICE });
        return r.code === 0 ? phones(r.stdout) : [];
      } catch {
        return [];
      }
    }),
  );
}

/**
 * The times of `words` from flite's segments, given each word's phones; `duration` (seconds of audio) bounds them
 * (a diphone voice's last pause can be shorter than its segment says).
 */
export function fliteWordTimes(
  words: readonly TextWord[],
  wordsPhones: readonly string[][],
  segments: readonly FliteSegment[],
  duration: number,
): WordTiming[] {
  const ref: { phone: string; word: number }[] = [];
  wordsPhones.forEach((ps, word) => ps.forEach((phone) => ref.push({ phone, word })));
  const spoken = segments.filter((s) => s.phone !== 'pau');
  const start: (number | undefined)[] = new Array(words.length).fill(undefined);
  const end: (number | undefined)[] = new Array(words.length).fill(undefined);
  let lastWord: number | undefined;
  for (const [i, j] of alignSequences(ref, spoken, (r, s) => (r.phone === s.phone ? 0 : 1))) {
    if (j === undefined) continue;
    // A phone flite spoke that no word's pronunciation has belongs to the word before it.
    const word = i !== undefined ? ref[i]!.word : lastWord;
    if (word === undefined) continue;
    lastWord = word;
    const seg = spoken[j]!;
    start[word] = Math.min(start[word] ?? Infinity, seg.start);
    end[word] = Math.max(end[word] ?? -Infinity, seg.end);
  }
  return fillGaps(words, start, end).map((w) => ({ text: w.text, start: Math.min(w.start, duration), end: Math.min(w.end, duration) }));
}

/** flite's word times for `text` from its `-psdur` output. */
export async function fliteWords(text: string, psdur: string, duration: number, t2p?: string): Promise<WordTiming[] | undefined> {
  const segments = parseFliteSegments(psdur);
  if (!segments.length) return undefined;
  const words = textWords(text);
  return fliteWordTimes(words, await wordPhones(words, t2p), segments, duration);
}
