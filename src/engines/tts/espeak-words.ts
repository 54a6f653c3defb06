// espeak-ng's own word times. The espeak-ng command line reports none, but the library does (a word event at each word's
// start, a phoneme event at each phoneme's, pauses included): native/espeak-words is a small program on
// libespeak-ng.so.1 that speaks exactly as `espeak-ng --stdout` does (same library, same flags; the audio is
// identical) and prints those events. A word runs from its event to the first pause after it, else to the next word.
// Events name the character of the input where their word is, so each goes to the word of the text it falls in ("42"
// has two events, forty and two, both its own). Without the program (not built), the pipeline estimates the times.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillGaps, textWords, type WordTiming } from './word-timings.js';

const RELATIVE = path.join('native', 'espeak-words', 'build', 'espeak-words');

let found: string | null | undefined;

/** The built program (native/espeak-words, `make native`), from the checkout or package this module runs from. */
export function espeakWordsProgram(): string | undefined {
  if (found === undefined) {
    found = null;
    for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
      if (existsSync(path.join(dir, RELATIVE))) {
        found = path.join(dir, RELATIVE);
        break;
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return found ?? undefined;
}

/**
 * The times of the words of `text` from the program's events (seconds), `input` being what it read (the text, or the
 * text inside SSML), in which the events' character positions count.
 */
export function espeakWordTimes(text: string, input: string, events: string): WordTiming[] {
  const words = textWords(text);
  const chars = Array.from(input);
  // Each word's character range in the input, searched in order.
  const ranges: [number, number][] = [];
  let cursor = 0;
  for (const w of words) {
    const wc = Array.from(w.text);
    let at = cursor;
    while (at + wc.length <= chars.length && !wc.every((c, k) => chars[at + k] === c)) at++;
    if (at + wc.length > chars.length) at = cursor; // not found as written (escaped): placed where the search stood
    ranges.push([at, at + wc.length]);
    cursor = at + wc.length;
  }
  const starts: { pos: number; ms: number }[] = [];
  const pauses: number[] = [];
  let endMs = 0;
  for (const line of events.split('\n')) {
    const [kind, a, , c] = line.split(' ');
    if (kind === 'WORD') starts.push({ pos: Number(a) - 1, ms: Number(c) });
    else if (kind === 'PHONEME' && a?.startsWith('_')) pauses.push(Number(line.split(' ')[2]));
    else if (kind === 'END') endMs = Number(a);
  }
  const start: (number | undefined)[] = new Array(words.length).fill(undefined);
  const end: (number | undefined)[] = new Array(words.length).fill(undefined);
  starts.forEach((ev, i) => {
    // The word the event's character falls in, else the last one starting before it.
    let word = ranges.findIndex(([a, b]) => ev.pos >= a && ev.pos < b);
    if (word < 0) for (let k = 0; k < ranges.length && ranges[k]![0] <= ev.pos; k++) word = k;
    if (word < 0) word = 0;
    const next = starts[i + 1]?.ms ?? endMs;
    const pause = pauses.find((p) => p > ev.ms && p < next);
    const to = Math.max(ev.ms, pause ?? next);
    start[word] = Math.min(start[word] ?? Infinity, ev.ms / 1000);
    end[word] = Math.max(end[word] ?? -Infinity, to / 1000);
  });
  if (!words.length) return [];
  // espeak-ng speaks some short words with the one before as one ("on the"): one event for both, whose span they
  // share by their letters.
  for (let i = 0; i < words.length; i++) {
    if (start[i] === undefined) continue;
    let j = i + 1;
    while (j < words.length && start[j] === undefined) j++;
    if (j === i + 1 || (j < words.length && start[j]! < end[i]!)) continue;
    const letters = words.slice(i, j).map((w) => w.text.length);
    const total = letters.reduce((a, b) => a + b, 0);
    const [from, to] = [start[i]!, end[i]!];
    let at = 0;
    for (let k = i; k < j; k++) {
      start[k] = from + ((to - from) * at) / total;
      at += letters[k - i]!;
      end[k] = from + ((to - from) * at) / total;
    }
    i = j - 1;
  }
  return fillGaps(words, start, end);
}
