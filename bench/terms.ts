// Term recall of the neural streaming model through the server (issue 32): the clips of the wer suite's term-recall
// set (wer-context.ts: real recordings whose references hold words pocketsphinx's dictionary lacks), each transcribed
// as a file and streamed as a session, with and without `context.terms` = the clip's unknown words, per half of the
// real-speech set. The hotword bonus is sherpa-onnx's default (1.5); nothing was chosen on either half.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { normalizeWords } from '../src/engines/stt/wer.js';
import { type Parlance, startParlance, streamRealtime, tempDir, transcribeFile } from '../test/harness.js';
import { hasRealModel, importRealModel } from '../test/real-model.js';
import { asteriskEnClips, splitOf, testdataClips, werOf } from '../test/real-speech.js';
import { pcm16k, type Row, type SuiteOptions, type SuiteResult } from './lib.js';
import { termClips } from './wer-context.js';

const MODEL = 'gigaspeech-kws-3m-v1';
/** Silence after each clip streamed, so its last words close at a pause as in a conversation. */
const TAIL = Buffer.alloc(16_000 * 2);

type Mode = 'async' | 'real time';

async function hypothesis(s: Parlance, mode: Mode, file: string, terms: string[] | undefined): Promise<string> {
  const body = { model: MODEL, enable_text_formatting: false, ...(terms ? { context: { terms } } : {}) };
  if (mode === 'async') return (await transcribeFile(s, file, body)).text;
  const frames = await streamRealtime(s, Buffer.concat([await pcm16k(file), TAIL]), body);
  return frames
    .flatMap((f) => f.tokens)
    .filter((t) => t.is_final && !t.text.startsWith('<'))
    .map((t) => t.text)
    .join('');
}

/** Occurrences of the terms' words in the reference that the hypothesis has too (bag of words). */
function termHits(reference: string, terms: string[], text: string): { hits: number; total: number } {
  const termWords = new Set(terms.flatMap((t) => normalizeWords(t)));
  const ref = normalizeWords(reference).filter((w) => termWords.has(w));
  const hyp = normalizeWords(text);
  let hits = 0;
  for (const w of new Set(ref)) hits += Math.min(ref.filter((x) => x === w).length, hyp.filter((x) => x === w).length);
  return { hits, total: ref.length };
}

export async function run({ cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  if (!hasRealModel)
    return { rows: [{ benchmark: 'term recall (neural)', result: 'the real model is not beside the project', target: '—', met: null }], raw: {} };
  const dir = tempDir('parlance-bench-terms-');
  cleanup.add('remove temp dir', () => rmSync(dir, { recursive: true, force: true }));
  await importRealModel(path.join(dir, 'data'), MODEL);
  const s = await startParlance({ dataDir: path.join(dir, 'data') });
  cleanup.add('stop server', () => s.stop());
  const clips = termClips([...testdataClips(), ...asteriskEnClips()]);
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { model: MODEL, clips: clips.length };
  for (const half of ['tune', 'held-out'] as const) {
    const part = clips.filter((c) => splitOf(c.file) === half);
    for (const mode of ['async', 'real time'] as const) {
      log(`${half} half, ${mode}: ${part.length} clips`);
      const without: string[] = [];
      const withTerms: string[] = [];
      for (const c of part) {
        without.push(await hypothesis(s, mode, c.file, undefined));
        withTerms.push(await hypothesis(s, mode, c.file, c.terms));
      }
      const recall = (texts: string[]) =>
        part.reduce(
          (a, c, i) => {
            const h = termHits(c.reference, c.terms, texts[i]!);
            return { hits: a.hits + h.hits, total: a.total + h.total };
          },
          { hits: 0, total: 0 },
        );
      const r0 = recall(without);
      const r1 = recall(withTerms);
      const w0 = werOf(part.map((c, i) => ({ reference: c.reference, text: without[i]! })));
      const w1 = werOf(part.map((c, i) => ({ reference: c.reference, text: withTerms[i]! })));
      raw[`${half} ${mode}`] = {
        recall_without: r0,
        recall_with: r1,
        wer_without: w0,
        wer_with: w1,
        per_clip: part.map((c, i) => ({ file: c.file, terms: c.terms, without: without[i], with: withTerms[i] })),
      };
      const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
      rows.push({
        benchmark: `${MODEL} term recall, ${half} half, ${mode} (${part.length} clips, ${r1.total} term words)`,
        result: `without context ${r0.hits}/${r0.total}, with ${r1.hits}/${r1.total} (${pct(r1.total ? r1.hits / r1.total : 0)}); WER ${pct(w0.wer)} → ${pct(w1.wer)}`,
        target: '— (report; pocketsphinx: see the wer suite)',
        met: null,
      });
    }
  }
  return { rows, raw };
}
