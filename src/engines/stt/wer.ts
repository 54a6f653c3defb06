// Word error rate: word-level Levenshtein distance between a reference and a hypothesis, divided by the number
// of reference words. Shared by the engine tests and the benchmarks.
import { normalizeForScoring } from '../../text/format.js';

export interface WerResult {
  /** (substitutions + deletions + insertions) / reference words; 0 when both are empty. Can exceed 1. */
  wer: number;
  substitutions: number;
  deletions: number;
  insertions: number;
  referenceWords: number;
  hypothesisWords: number;
}

/**
 * Numbers, money, times and titles written out as words one standard way (src/text normalizeForScoring: "$200." and
 * "two hundred dollars" both read "two hundred dollars"), lower-case, punctuation dropped (apostrophes inside words
 * kept), split on whitespace: formatted and raw transcripts, and references in either style, score alike.
 */
export function normalizeWords(text: string): string[] {
  return normalizeForScoring(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .replace(/(^|\s)'+|'+(?=\s|$)/g, '$1')
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

/** WER of `hypothesis` against `reference`; strings are normalized with normalizeWords, arrays are used as given. */
export function wordErrorRate(reference: string | readonly string[], hypothesis: string | readonly string[]): WerResult {
  const ref = typeof reference === 'string' ? normalizeWords(reference) : reference;
  const hyp = typeof hypothesis === 'string' ? normalizeWords(hypothesis) : hypothesis;
  const n = ref.length;
  const m = hyp.length;
  // dist[j] / ops[j]: edit distance and its (sub, del, ins) breakdown for ref[0..i) vs hyp[0..j), row by row.
  type Cell = { d: number; s: number; del: number; ins: number };
  let prev: Cell[] = Array.from({ length: m + 1 }, (_, j) => ({ d: j, s: 0, del: 0, ins: j }));
  for (let i = 1; i <= n; i++) {
    const cur: Cell[] = [{ d: i, s: 0, del: i, ins: 0 }];
    for (let j = 1; j <= m; j++) {
      const diag = prev[j - 1]!;
      const up = prev[j]!;
      const left = cur[j - 1]!;
      const same = ref[i - 1] === hyp[j - 1];
      const sub = diag.d + (same ? 0 : 1);
      const del = up.d + 1;
      const ins = left.d + 1;
      if (sub <= del && sub <= ins) cur.push({ d: sub, s: diag.s + (same ? 0 : 1), del: diag.del, ins: diag.ins });
      else if (del <= ins) cur.push({ d: del, s: up.s, del: up.del + 1, ins: up.ins });
      else cur.push({ d: ins, s: left.s, del: left.del, ins: left.ins + 1 });
    }
    prev = cur;
  }
  const last = prev[m]!;
  return {
    wer: n === 0 ? (m === 0 ? 0 : 1) : last.d / n,
    substitutions: last.s,
    deletions: last.del,
    insertions: last.ins,
    referenceWords: n,
    hypothesisWords: m,
  };
}
