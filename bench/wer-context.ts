// Term recall with and without `context` (issue 14): the real recordings whose references hold words the model's
// dictionary lacks ("unmute", "Digium", "PBX", "voicemail"-like product words). Without context those words cannot be
// recognised at all; with `context.terms` = the clip's unknown words, as a user who knows the topic would send them,
// they should be. Reported per half (the context weight was chosen on the tuning half), with the WER of the same
// clips with and without context (a bias that wrecks the words around a term is no gain).
import { readFileSync } from 'node:fs';
import { DEFAULT_BIAS_WEIGHT, dictionaryWords } from '../src/engines/stt/pocketsphinx/bias.js';
import { defaultModelPaths } from '../src/engines/stt/pocketsphinx/options.js';
import { normalizeWords } from '../src/engines/stt/wer.js';
import { asteriskEnClips, type RealClip, splitOf, testdataClips } from '../test/real-speech.js';
import { round, type Row, type SuiteOptions } from './lib.js';
import { type ClipResult, decodeClips, pct, totals, withRecognizer } from './wer-decode.js';

interface TermClip extends RealClip {
  terms: string[];
}

/** Clips with reference words the dictionary lacks, and those words as the reference writes them. */
export function termClips(clips: readonly RealClip[]): TermClip[] {
  const dict = new Set(
    readFileSync(defaultModelPaths().dict, 'utf8')
      .split('\n')
      .map((l) => l.split(/\s/)[0]!.replace(/\(\d+\)$/, '')),
  );
  const out: TermClip[] = [];
  for (const c of clips) {
    const terms = [...new Set((c.reference.match(/\p{L}[\p{L}']*/gu) ?? []).filter((w) => !dict.has(dictionaryWords(w)[0] ?? '')))];
    if (terms.length > 0) out.push({ ...c, terms });
  }
  return out;
}

/** Occurrences of the terms' words in the reference that the hypothesis also has (bag of words). */
function recall(clips: readonly TermClip[], results: readonly ClipResult[]): { hits: number; total: number } {
  let hits = 0;
  let total = 0;
  clips.forEach((c, i) => {
    const termWords = new Set(c.terms.flatMap((t) => normalizeWords(t)));
    const count = (words: string[]) => {
      const m = new Map<string, number>();
      for (const w of words) if (termWords.has(w)) m.set(w, (m.get(w) ?? 0) + 1);
      return m;
    };
    const ref = count(normalizeWords(c.reference));
    const hyp = count(normalizeWords(results[i]!.raw));
    for (const [w, n] of ref) {
      total += n;
      hits += Math.min(n, hyp.get(w) ?? 0);
    }
  });
  return { hits, total };
}

export async function contextRecall(opts: SuiteOptions, weight = DEFAULT_BIAS_WEIGHT): Promise<{ rows: Row[]; raw: Record<string, unknown> }> {
  const clips = termClips([...testdataClips(), ...asteriskEnClips()]);
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { weight, clips: clips.map((c) => ({ file: c.file, terms: c.terms })) };
  if (clips.length === 0) return { rows, raw };
  opts.log(`term recall on ${clips.length} clips with words the dictionary lacks (context weight ${weight})`);
  const split = (c: RealClip) => splitOf(c.file);
  const [without, withContext] = await withRecognizer({ contextWeight: weight }, async (r) => [
    await decodeClips(r, clips, split),
    await decodeClips(r, clips, split, (c) => ({ context: { terms: (c as TermClip).terms, text: '' } })),
  ]);
  for (const half of ['tune', 'held-out']) {
    const idx = clips.map((c, i) => (split(c) === half ? i : -1)).filter((i) => i >= 0);
    if (idx.length === 0) continue;
    const part = idx.map((i) => clips[i]!);
    const r0 = recall(
      part,
      idx.map((i) => without[i]!),
    );
    const r1 = recall(
      part,
      idx.map((i) => withContext[i]!),
    );
    const w0 = totals(idx.map((i) => without[i]!));
    const w1 = totals(idx.map((i) => withContext[i]!));
    raw[half] = { recall_without: r0, recall_with: r1, wer_without: w0.raw.wer, wer_with: w1.raw.wer, rtf_without: w0.rtf, rtf_with: w1.rtf };
    const rc1 = r1.total ? r1.hits / r1.total : 0;
    rows.push({
      benchmark: `term recall, ${half} half (${part.length} clips, ${r1.total} term words the dictionary lacks)`,
      result: `without context ${pct(r0.total ? r0.hits / r0.total : 0)}, with ${pct(rc1)}; WER ${pct(w0.raw.wer)} → ${pct(w1.raw.wer)}; RTF ${round(w0.rtf, 3)} → ${round(w1.rtf, 3)}`,
      target: half === 'held-out' ? '≥ 80 % with context' : '— (weight chosen here)',
      met: half === 'held-out' ? rc1 >= 0.8 : null,
    });
  }
  raw.per_clip = clips.map((c, i) => ({ file: c.file, terms: c.terms, reference: c.reference, without: without[i]!.raw, with: withContext[i]!.raw }));
  return { rows, raw };
}
