// TTS word timestamps (issue 37, item 2): each English voice of espeak-ng, flite and festival speaks the Harvard
// sentences and a few with commas and semicolons (one POST /tts/with-timestamps per voice, 16 kHz PCM), the audio is
// force-aligned with its words by the built-in recognizer (forced-align.ts), and the word times the server gave are
// compared with the alignment's: the median absolute error of word starts and ends together, per engine (target
// ≤ 80 ms), with p90. Two references for scale, computed here on the same audio: the estimate from the audio
// (word-estimate.ts: what sherpa-onnx voices get, and espeak-ng without native/espeak-words) and words spread evenly
// by characters over the whole audio. sherpa-onnx voices are measured when a real one is installed
// (--sherpa=<model id>,<voice>); none ships with the project.
import { estimateWordTimings } from '../src/engines/tts/word-estimate.js';
import { textWords } from '../src/engines/tts/word-timings.js';
import { startParlance } from '../test/harness.js';
import { benchServerEnv, HARVARD_SENTENCES, percentile, round, type Row, type SuiteOptions, type SuiteResult } from './lib.js';
import { type AlignedWord, alignKey, forceAlign } from './forced-align.js';

const TARGET_MS = 80;
const RATE = 16000;

/** Sentences with pauses inside: commas, a semicolon, a colon, a question. */
const CLAUSES: readonly string[] = [
  'After the storm, the river rose quickly; we moved the boats to higher ground.',
  'She asked a simple question: where did all the yellow paint go?',
  'When the bell rang, the children ran outside, laughing and shouting.',
];

const VOICES: Record<string, { model: string; voices: string[]; method: string }> = {
  'espeak-ng': { model: 'parlance-tts-espeak-v1', voices: ['Adrian', 'Maya', 'Oliver', 'Fiona'], method: 'engine word events (espeak-words)' },
  flite: { model: 'parlance-tts-flite-v1', voices: ['Adrian', 'Maya', 'Alan', 'Kevin', 'Kenneth'], method: 'engine phone times (-psdur) + t2p' },
  festival: { model: 'parlance-tts-festival-v1', voices: ['Kal', 'Keith', 'Sarah'], method: 'engine word times (utterance)' },
};

interface Word {
  text: string;
  start_ms: number;
  end_ms: number;
}

interface VoiceResult {
  errors: number[];
  baseline: number[];
  estimate: number[];
  words: number;
  aligned: boolean;
}

/** Words spread evenly by their characters over the whole audio: what a client without word times would guess. */
function evenByCharacters(words: readonly Word[], durationMs: number): { start_ms: number; end_ms: number }[] {
  const total = words.reduce((a, w) => a + w.text.length + 1, 0);
  let at = 0;
  return words.map((w) => {
    const start = (at / total) * durationMs;
    at += w.text.length + 1;
    return { start_ms: start, end_ms: (at / total) * durationMs };
  });
}

function errorsOf(ours: readonly { start_ms: number; end_ms: number }[], ref: readonly AlignedWord[]): number[] {
  return ours.flatMap((w, i) => [Math.abs(w.start_ms - ref[i]!.start_ms), Math.abs(w.end_ms - ref[i]!.end_ms)]);
}

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const sentences = opts.quick ? [...HARVARD_SENTENCES.slice(0, 3), CLAUSES[0]!] : [...HARVARD_SENTENCES, ...CLAUSES];
  const texts = sentences.map((x) => `${x.charAt(0).toUpperCase()}${x.slice(1)}${/[.?!]$/.test(x) ? '' : '.'}`);
  const engines = { ...VOICES };
  if (opts.args.sherpa) {
    const [model, voice] = opts.args.sherpa.split(',');
    engines['sherpa-onnx'] = { model: model!, voices: [voice!], method: 'estimated from the audio' };
  }
  const s = await startParlance({ env: benchServerEnv() });
  opts.cleanup.add(`stop server ${s.url}`, () => s.stop());
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { sentences: texts, target_ms: TARGET_MS };
  const perVoice: Record<string, unknown> = {};
  for (const [engine, { model, voices, method }] of Object.entries(engines)) {
    const all: number[] = [];
    const baseline: number[] = [];
    const estimate: number[] = [];
    let words = 0;
    let unaligned = 0;
    for (const voice of voices.slice(0, opts.quick ? 2 : voices.length)) {
      const r: VoiceResult = { errors: [], baseline: [], estimate: [], words: 0, aligned: true };
      // One sentence per request: a sentence the recognizer cannot align is left out alone.
      for (const text of texts) {
        opts.log(`${engine} / ${voice}: ${text}`);
        const res = await s.request('/tts/with-timestamps', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, language: 'en', voice, audio_format: 'pcm_s16le', sample_rate: RATE, text }),
        });
        if (res.status !== 200) throw new Error(`POST /tts/with-timestamps ${model}/${voice}: ${res.status} ${await res.text()}`);
        const body = (await res.json()) as { audio_base64: string; words: Word[] };
        const pcm = Buffer.from(body.audio_base64, 'base64');
        const ours = body.words.filter((w) => alignKey(w.text).length > 0);
        const ref = await forceAlign(
          pcm,
          ours.map((w) => w.text),
        );
        if (!ref) {
          unaligned++;
          r.aligned = false;
          opts.log(`  not aligned: left out`);
          continue;
        }
        r.errors.push(...errorsOf(ours, ref));
        r.baseline.push(...errorsOf(evenByCharacters(ours, (pcm.length / 2 / RATE) * 1000), ref));
        const estimated = estimateWordTimings(textWords(text), pcm, RATE).filter((w) => alignKey(w.text).length > 0);
        if (estimated.length === ref.length)
          r.estimate.push(
            ...errorsOf(
              estimated.map((w) => ({ start_ms: w.start * 1000, end_ms: w.end * 1000 })),
              ref,
            ),
          );
        r.words += ours.length;
      }
      all.push(...r.errors);
      baseline.push(...r.baseline);
      estimate.push(...r.estimate);
      words += r.words;
      perVoice[`${engine}/${voice}`] = {
        words: r.words,
        median_ms: round(percentile(r.errors, 50), 1),
        p90_ms: round(percentile(r.errors, 90), 1),
        even_median_ms: round(percentile(r.baseline, 50), 1),
        estimate_median_ms: round(percentile(r.estimate, 50), 1),
      };
      rows.push({
        benchmark: `  ${engine} / ${voice}: median |error| (p90)`,
        result: `${round(percentile(r.errors, 50), 1)} ms (${round(percentile(r.errors, 90), 1)} ms), ${r.words} words`,
        target: '(info)',
        met: null,
      });
    }
    const median = percentile(all, 50);
    raw[engine] = {
      method,
      words,
      sentences_not_aligned: unaligned,
      median_ms: median,
      p90_ms: percentile(all, 90),
      mean_ms: all.reduce((a, b) => a + b, 0) / Math.max(1, all.length),
      even_median_ms: percentile(baseline, 50),
      estimate_median_ms: percentile(estimate, 50),
      estimate_p90_ms: percentile(estimate, 90),
    };
    rows.push({
      benchmark: `${engine} word start/end vs forced alignment, median |error| (p90) — ${method}`,
      result: `${round(median, 1)} ms (${round(percentile(all, 90), 1)} ms), ${words} words${unaligned ? `, ${unaligned} sentences not aligned` : ''}`,
      target: `≤ ${TARGET_MS} ms`,
      met: median <= TARGET_MS,
    });
    rows.push({
      benchmark: `${engine}: the estimate from the audio instead (sherpa-onnx's method), median |error| (p90)`,
      result: `${round(percentile(estimate, 50), 1)} ms (${round(percentile(estimate, 90), 1)} ms)`,
      target: '(info)',
      met: null,
    });
    rows.push({
      benchmark: `${engine}: words spread evenly by characters over the audio (for scale)`,
      result: `${round(percentile(baseline, 50), 1)} ms (${round(percentile(baseline, 90), 1)} ms)`,
      target: '(info)',
      met: null,
    });
  }
  raw.voices = perVoice;
  return { rows, raw };
}
