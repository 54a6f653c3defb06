// Diarization error rate, as NIST's md-eval scores it:
//
//   DER = (missed speech + false alarm + speaker confusion) / total reference speech
//
// over the time outside a no-score collar (default 250 ms) on each side of every reference turn boundary, with the
// hypothesis speakers mapped one-to-one onto reference speakers so that their overlap is largest (Hungarian
// algorithm). Overlapping speech counts once per speaker. Time is scored on a 10 ms grid.
import type { SpeakerTurn } from './interface.js';

export interface LabelledTurn {
  startMs: number;
  endMs: number;
  speaker: string | number;
}

export interface DerResult {
  der: number;
  /** Scored reference speech, ms. */
  referenceMs: number;
  missedMs: number;
  falseAlarmMs: number;
  confusionMs: number;
  referenceSpeakers: number;
  hypothesisSpeakers: number;
  /** hypothesis speaker → reference speaker, as mapped. */
  mapping: Map<string, string>;
}

const STEP_MS = 10;

export function diarizationErrorRate(reference: LabelledTurn[], hypothesis: (LabelledTurn | SpeakerTurn)[], collarMs = 250): DerResult {
  const refIds = [...new Set(reference.map((t) => String(t.speaker)))];
  const hypIds = [...new Set(hypothesis.map((t) => String(t.speaker)))];
  const end = Math.max(0, ...reference.map((t) => t.endMs), ...hypothesis.map((t) => t.endMs));
  const steps = Math.ceil(end / STEP_MS);
  const grid = (turns: LabelledTurn[], ids: string[]) => {
    const rows = ids.map(() => new Uint8Array(steps));
    for (const t of turns) {
      const row = rows[ids.indexOf(String(t.speaker))]!;
      for (let i = Math.floor(t.startMs / STEP_MS); i < Math.min(steps, Math.ceil(t.endMs / STEP_MS)); i++) row[i] = 1;
    }
    return rows;
  };
  const ref = grid(reference, refIds);
  const hyp = grid(hypothesis, hypIds);
  const scored = new Uint8Array(steps).fill(1);
  for (const t of reference)
    for (const edge of [t.startMs, t.endMs])
      for (let i = Math.max(0, Math.floor((edge - collarMs) / STEP_MS)); i < Math.min(steps, Math.ceil((edge + collarMs) / STEP_MS)); i++) scored[i] = 0;

  const overlap = refIds.map(() => new Array<number>(hypIds.length).fill(0));
  let refTotal = 0;
  let missed = 0;
  let falseAlarm = 0;
  let paired = 0; // Σ min(|R|, |H|)
  for (let i = 0; i < steps; i++) {
    if (!scored[i]) continue;
    let nr = 0;
    let nh = 0;
    for (const r of ref) nr += r[i]!;
    for (const h of hyp) nh += h[i]!;
    refTotal += nr;
    missed += Math.max(0, nr - nh);
    falseAlarm += Math.max(0, nh - nr);
    paired += Math.min(nr, nh);
    if (nr && nh) ref.forEach((r, a) => r[i] && hyp.forEach((h, b) => h[i] && overlap[a]![b]!++));
  }
  const assignment = maxWeightAssignment(overlap);
  let correct = 0;
  const mapping = new Map<string, string>();
  assignment.forEach((b, a) => {
    if (b < 0) return;
    correct += overlap[a]![b]!;
    if (overlap[a]![b]! > 0) mapping.set(hypIds[b]!, refIds[a]!);
  });
  const confusion = paired - correct;
  const ms = (steps: number) => steps * STEP_MS;
  return {
    der: refTotal ? (missed + falseAlarm + confusion) / refTotal : 0,
    referenceMs: ms(refTotal),
    missedMs: ms(missed),
    falseAlarmMs: ms(falseAlarm),
    confusionMs: ms(confusion),
    referenceSpeakers: refIds.length,
    hypothesisSpeakers: hypIds.length,
    mapping,
  };
}

/**
 * Hungarian algorithm (Kuhn–Munkres, O(n³)) on a rows × cols weight matrix: the one-to-one assignment with the
 * largest total weight. Returns, per row, the column it got or -1.
 */
export function maxWeightAssignment(weights: number[][]): number[] {
  const rows = weights.length;
  const cols = weights[0]?.length ?? 0;
  const n = Math.max(rows, cols);
  if (n === 0) return [];
  const max = Math.max(0, ...weights.flat());
  // Square cost matrix (1-based, as in the classic formulation); padding costs max (weight 0).
  const cost = (i: number, j: number) => max - (i <= rows && j <= cols ? weights[i - 1]![j - 1]! : 0);
  const u = new Float64Array(n + 1);
  const v = new Float64Array(n + 1);
  const p = new Int32Array(n + 1); // p[j]: row matched to column j
  const way = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Float64Array(n + 1).fill(Infinity);
    const used = new Uint8Array(n + 1);
    do {
      used[j0] = 1;
      const i0 = p[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const cur = cost(i0, j) - u[i0]! - v[j]!;
        if (cur < minv[j]!) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          u[p[j]!]! += delta;
          v[j]! -= delta;
        } else minv[j]! -= delta;
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0);
  }
  const out = new Array<number>(rows).fill(-1);
  for (let j = 1; j <= n; j++) if (p[j]! >= 1 && p[j]! <= rows && j <= cols) out[p[j]! - 1] = j - 1;
  return out;
}
