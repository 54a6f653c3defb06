// Decoder settings for files, chosen on the tuning half of the real recordings only (`npm run bench -- wer --tune`):
// coordinate descent over a small grid of language-model weight, word insertion penalty, beam widths and VAD padding,
// one setting at a time from the current best, by total raw WER of the tuning half (ties: the faster). The chosen
// settings and the defaults are then both reported on the held-out half, which the search never looked at.
import type { PocketsphinxOptions } from '../src/engines/stt/pocketsphinx/options.js';
import type { RealClip } from '../test/real-speech.js';
import { splitOf } from '../test/real-speech.js';
import { round, type Row, type SuiteOptions } from './lib.js';
import { type ClipResult, decodeClips, pct, totals, werRows, withRecognizer } from './wer-decode.js';

interface Candidate {
  decoderArgs: Record<string, string>;
  padMs?: number;
}

/** Values tried per setting; the first of each is pocketsphinx's (or the segmenter's) default. */
const GRID: Record<string, string[]> = {
  '-lw': ['6.5', '5', '8', '10', '12'],
  '-wip': ['0.65', '0.2', '0.05', '1e-3'],
  '-beam': ['1e-48', '1e-60', '1e-40'],
  '-wbeam': ['7e-29', '1e-40', '1e-20'],
  padMs: ['300', '150', '450'],
};

function options(c: Candidate): PocketsphinxOptions {
  return { decoderArgs: c.decoderArgs, ...(c.padMs !== undefined ? { segmentation: { padMs: c.padMs } } : {}) };
}

function describe(c: Candidate): string {
  const parts = Object.entries(c.decoderArgs).map(([k, v]) => `${k} ${v}`);
  if (c.padMs !== undefined) parts.push(`VAD padding ${c.padMs} ms`);
  return parts.join(', ') || 'defaults';
}

async function score(clips: readonly RealClip[], c: Candidate): Promise<{ errors: number; wer: number; rtf: number; results: ClipResult[] }> {
  const results = await withRecognizer(options(c), (r) => decodeClips(r, clips, (x) => splitOf(x.file)));
  const t = totals(results);
  return { errors: t.raw.errors, wer: t.raw.wer, rtf: t.rtf, results };
}

export async function tuneDecoder(clips: readonly RealClip[], opts: SuiteOptions): Promise<{ rows: Row[]; raw: Record<string, unknown> }> {
  const tune = clips.filter((c) => splitOf(c.file) === 'tune');
  const heldOut = clips.filter((c) => splitOf(c.file) === 'held-out');
  let best: Candidate = { decoderArgs: {} };
  let bestScore = await score(tune, best);
  const tried: { settings: string; wer: number; rtf: number }[] = [{ settings: describe(best), wer: bestScore.wer, rtf: bestScore.rtf }];
  opts.log(`tuning on ${tune.length} clips: defaults ${pct(bestScore.wer)}`);
  for (const [name, values] of Object.entries(GRID)) {
    for (const value of values.slice(1)) {
      const c: Candidate = name === 'padMs' ? { ...best, padMs: Number(value) } : { ...best, decoderArgs: { ...best.decoderArgs, [name]: value } };
      const s = await score(tune, c);
      tried.push({ settings: describe(c), wer: s.wer, rtf: s.rtf });
      opts.log(`  ${describe(c)}: ${pct(s.wer)} (RTF ${round(s.rtf, 3)})`);
      if (s.errors < bestScore.errors || (s.errors === bestScore.errors && s.rtf < bestScore.rtf)) {
        best = c;
        bestScore = s;
      }
    }
  }
  opts.log(`chosen: ${describe(best)}; scoring the held-out half`);
  const before = await score(heldOut, { decoderArgs: {} });
  const after = await score(heldOut, best);
  const relative = before.wer > 0 ? 1 - after.wer / before.wer : 0;
  return {
    rows: [
      {
        benchmark: `tuning half (${tune.length} clips): chosen settings`,
        result: `${describe(best)}: ${pct(bestScore.wer)} (defaults ${pct(tried[0]!.wer)})`,
        target: '—',
        met: null,
      },
      {
        benchmark: `held-out half (${heldOut.length} clips): WER defaults → tuned`,
        result: `${pct(before.wer)} → ${pct(after.wer)} (${round(relative * 100, 1)} % lower); RTF ${round(before.rtf, 3)} → ${round(after.rtf, 3)}`,
        target: '≥ 20 % lower, RTF ≤ 0.3',
        met: relative >= 0.2 && after.rtf <= 0.3,
      },
      ...werRows('held-out, defaults', before.results),
      ...werRows('held-out, tuned', after.results),
    ],
    raw: { tried, chosen: best, held_out: { defaults: { wer: before.wer, rtf: before.rtf }, tuned: { wer: after.wer, rtf: after.rtf } } },
  };
}
