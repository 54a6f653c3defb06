// Festival's own word times. text2wave runs its `tts_hooks` on each utterance it synthesizes (a sentence of the
// segment); one more hook prints, for every word festival made of a token of the text, the token's number, the word's
// start (its first segment's start) and end (its last segment's end) in the utterance, and the token as written. The
// words of a token ("42" → forty two) make its time; utterances follow one another in the audio.
import { alignWordTimes, textWords, type WordTiming } from './word-timings.js';

/** A text2wave `-eval` expression: the hook above, run after the utterance's audio is saved (and resampled). */
export const FESTIVAL_WORDS_HOOK =
  '(begin (define (parlance_words utt) (let ((info (wave.info (utt.wave utt))) (n 0))' +
  ` (format t "PARLANCE_UTT %d %d\\n" (get_param 'num_samples info 0) (get_param 'sample_rate info 0))` +
  ' (mapcar (lambda (tok) (set! n (+ n 1)) (mapcar (lambda (w) (format t "PARLANCE_WORD %d %f %f %s\\n" n' +
  ' (item.feat w "R:SylStructure.daughter1.daughter1.segment_start") (item.feat w "R:SylStructure.daughtern.daughtern.end")' +
  " (item.name tok))) (item.daughters tok))) (utt.relation.items utt 'Token))))" +
  ' (set! tts_hooks (list utt.synth save_record_wave_fp parlance_words)))';

/** The hook's output decoded in the voice's coding. */
export function decodeFestivalOutput(stdout: Buffer, coding: string): string {
  const c = coding.toLowerCase().replace(/^utf8$/, 'utf-8');
  if (c === 'utf-8') return stdout.toString('utf8');
  try {
    return new TextDecoder(c === 'iso-8859-1' ? 'latin1' : c).decode(stdout);
  } catch {
    return stdout.toString('latin1');
  }
}

/**
 * The times of the words of `text` from the hook's output (seconds from the start of the segment's audio), `stretch`
 * applied (a tempo change after synthesis); undefined when festival printed none.
 */
export function festivalWordTimes(text: string, output: string, stretch = 1): WordTiming[] | undefined {
  const tokens: WordTiming[] = [];
  let offset = 0;
  let next = 0;
  let current: { key: string; timing: WordTiming } | undefined;
  for (const line of output.split('\n')) {
    const utt = /^PARLANCE_UTT (\d+) (\d+)/.exec(line);
    if (utt) {
      offset = next;
      next = offset + Number(utt[1]) / Math.max(1, Number(utt[2]));
      current = undefined;
      continue;
    }
    const m = /^PARLANCE_WORD (\d+) (\S+) (\S+) (.*)$/.exec(line);
    if (!m) continue;
    const start = Number(m[2]);
    const end = Number(m[3]);
    if (!(end > start)) continue; // a word without segments (a silent "'s", punctuation read as nothing)
    const key = `${offset}:${m[1]}`;
    if (current?.key === key) {
      current.timing.end = (offset + end) * stretch;
      continue;
    }
    current = { key, timing: { text: m[4]!, start: (offset + start) * stretch, end: (offset + end) * stretch } };
    tokens.push(current.timing);
  }
  if (!tokens.length) return undefined;
  return alignWordTimes(textWords(text), tokens);
}
