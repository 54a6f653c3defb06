// Decoder profiles for live second passes (`npm run bench -- wer --second-pass`), chosen on the tuning half only:
// each profile decodes the tuning half's recordings as files are decoded (a second pass decodes an utterance the
// same way), and the suite reports raw word errors and the process's CPU seconds per profile. In-process and
// engine-only: it says what a profile costs and loses, not what the server's live path gives (`npm run bench -- live`).
import { SECOND_PASS_DECODER_ARGS, STREAM_DECODER_ARGS } from '../src/engines/stt/pocketsphinx/options.js';
import type { RealClip } from '../test/real-speech.js';
import { splitOf } from '../test/real-speech.js';
import { round, type Row, type SuiteOptions } from './lib.js';
import { decodeClips, pct, totals, withRecognizer } from './wer-decode.js';

const PROFILES: Record<string, Readonly<Record<string, string>>> = {
  'file settings': {},
  'second pass (default)': SECOND_PASS_DECODER_ARGS,
  '-maxhmmpf 3000 -maxwpf 10': { '-maxhmmpf': '3000', '-maxwpf': '10' },
  'streaming profile': STREAM_DECODER_ARGS,
};

export async function secondPassProfiles(clips: readonly RealClip[], opts: SuiteOptions): Promise<{ rows: Row[]; raw: Record<string, unknown> }> {
  const tune = clips.filter((c) => splitOf(c.file) === 'tune');
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  let fileErrors: number | undefined;
  for (const [name, args] of Object.entries(PROFILES)) {
    opts.log(`second-pass profile "${name}": decoding ${tune.length} tuning recordings`);
    const before = process.cpuUsage();
    const results = await withRecognizer({ decoderArgs: { ...args } }, (r) => decodeClips(r, tune, () => 'tune'));
    const used = process.cpuUsage(before);
    const cpuS = round((used.user + used.system) / 1e6, 1);
    const { raw: wer } = totals(results);
    fileErrors ??= wer.errors;
    raw[name] = { decoder_args: args, errors: wer.errors, words: wer.words, cpu_s: cpuS };
    rows.push({
      benchmark: `second-pass profile "${name}" (${Object.entries(args).flat().join(' ') || 'none'}): tuning half, raw WER, CPU`,
      result: `${pct(wer.wer)} (${wer.errors}/${wer.words}), ${cpuS} CPU s`,
      target: name === 'second pass (default)' ? `errors ≤ file settings' (${fileErrors})` : '—',
      met: name === 'second pass (default)' ? wer.errors <= fileErrors : null,
    });
  }
  return { rows, raw };
}
