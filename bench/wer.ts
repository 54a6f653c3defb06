// WER suite (issue 14): word error rate of async transcription on real recordings with references, raw and formatted,
// per file and in total, through the engine's file path (Recognizer.transcribe: VAD segments, batch decoders) and the
// formatter the server applies (src/text). Corpora (test/real-speech.ts):
//   - pocketsphinx-testdata: librivox read speech and the "cards" set (16 kHz)
//   - asterisk-en: Asterisk's US English prompts with Debian's transcripts (8 kHz telephone audio)
//   - or a user's folder: `npm run bench -- wer --dir=<folder>` with <folder>/refs.tsv (`file<TAB>reference`)
// Each built-in recording is in a fixed half (splitOf): 'tune', on which decoder settings may be chosen
// (`--tune` sweeps them), and 'held-out', only reported. Scoring normalisation (src/text/normalize.ts): numbers,
// money and times spelled out one canonical way, lower case, punctuation dropped, so "Press 1." and "press one" agree.
import { asteriskEnClips, folderClips, splitOf, testdataClips } from '../test/real-speech.js';
import type { Row, SuiteOptions, SuiteResult } from './lib.js';
import { decodeClips, pct, totals, werRows, withRecognizer } from './wer-decode.js';
import { contextRecall } from './wer-context.js';
import { secondPassProfiles } from './wer-second-pass.js';
import { tuneDecoder } from './wer-tune.js';

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const dir = opts.args.dir;
  if (dir !== undefined) {
    const clips = folderClips(dir);
    opts.log(`${clips.length} recordings from ${dir}`);
    const results = await withRecognizer({}, (r) => decodeClips(r, clips, () => 'all'));
    raw.clips = results;
    rows.push(...werRows('default settings', results));
    const t = totals(results);
    rows.push({
      benchmark: 'formatted output scores no worse than raw',
      result: `${pct(t.formatted.wer)} vs ${pct(t.raw.wer)}`,
      target: 'formatted ≤ raw',
      met: t.formatted.errors <= t.raw.errors,
    });
    return { rows, raw };
  }

  let clips = [...testdataClips(), ...asteriskEnClips()];
  if (!clips.some((c) => c.set === 'asterisk-en')) opts.log('asterisk-core-sounds-en is not installed: testdata only (make setup installs it)');
  if (opts.quick) clips = clips.filter((_, i) => i % 8 === 0 || !clips[i]!.set.startsWith('asterisk'));
  if (opts.args['second-pass'] !== undefined) return secondPassProfiles(clips, opts);
  opts.log(`decoding ${clips.length} real recordings with the default settings`);
  const results = await withRecognizer({}, (r) => decodeClips(r, clips, (c) => splitOf(c.file)));
  raw.default = { per_clip: results };
  rows.push(...werRows('default settings', results));
  const heldOut = totals(results.filter((r) => r.split === 'held-out'));
  rows.push({
    benchmark: 'held-out half: formatted output scores no worse than raw',
    result: `${pct(heldOut.formatted.wer)} vs ${pct(heldOut.raw.wer)}`,
    target: 'formatted ≤ raw',
    met: heldOut.formatted.errors <= heldOut.raw.errors,
  });

  if (opts.args.tune !== undefined) {
    const tuned = await tuneDecoder(clips, opts);
    rows.push(...tuned.rows);
    raw.tuning = tuned.raw;
  }

  const recall = await contextRecall(opts);
  rows.push(...recall.rows);
  raw.context = recall.raw;
  return { rows, raw };
}
