// Recognising enrolled speakers: what is kept of a voice (a voice print), how far apart two voices are, and which
// diarized speaker is which enrolled one. A print always holds the diarizer's features (the MFCC and pitch Gaussians
// of speaker-stats.ts), and a speaker embedding when a speaker-embedding model made one; two prints are compared on
// embeddings when both have one from the same model, else on the features.
//
// Feature distance: the Jensen–Shannon-like divergence of two Gaussians pooled with equal weights,
//   d = ½·log|Σp| − ¼·log|Σa| − ¼·log|Σb|,   Σp = (Σa + Σb)/2 + ¼·(μa − μb)(μa − μb)ᵀ
// (the per-frame ΔBIC without its penalty, with both sides weighted alike): 0 for one voice, growing as the means or
// the shapes part, and unlike ΔBIC it does not grow with the amount of speech.
import { GaussianStats, logDet } from './gaussian.js';
import type { GaussianJson, MatchThresholds, SpeakerTurn, VoicePrint } from './interface.js';
import { SpeakerStats } from './speaker-stats.js';
import { FRAME_MS } from './speech-frames.js';

/** Voiced frames each side needs before pitch counts (as in speaker-stats.ts). */
const MIN_PITCH_FRAMES = 20;

const toJson = (g: GaussianStats): GaussianJson => ({ n: g.n, sum: Array.from(g.sum), outer: Array.from(g.outer) });

function fromJson(j: GaussianJson, dim: number): GaussianStats {
  const g = new GaussianStats(dim);
  if (j.sum.length !== dim || j.outer.length !== (dim * (dim + 1)) / 2) throw new Error('voice print of another feature layout');
  g.n = j.n;
  g.sum.set(j.sum);
  g.outer.set(j.outer);
  return g;
}

export function printOfStats(stats: SpeakerStats): VoicePrint {
  return { speechMs: stats.n * FRAME_MS, spectral: toJson(stats.spectral), pitch: toJson(stats.pitch) };
}

export function statsOfPrint(p: Pick<VoicePrint, 'spectral' | 'pitch'>): SpeakerStats {
  return new SpeakerStats(fromJson(p.spectral, p.spectral.sum.length), fromJson(p.pitch, 1));
}

/** One print of several (an enrolled speaker's samples): features summed, embeddings averaged by speech. */
export function mergePrints(prints: VoicePrint[]): VoicePrint {
  const stats = new SpeakerStats();
  for (const p of prints) stats.merge(statsOfPrint(p));
  const out = printOfStats(stats);
  const embedded = prints.filter((p) => p.embedding);
  const model = embedded[0]?.embedding?.model;
  if (model && embedded.length === prints.length && embedded.every((p) => p.embedding!.model === model)) {
    const dim = embedded[0]!.embedding!.vector.length;
    const v = new Float64Array(dim);
    for (const p of embedded) {
      const u = unitVector(p.embedding!.vector);
      for (let i = 0; i < dim; i++) v[i]! += u[i]! * Math.max(1, p.speechMs);
    }
    out.embedding = { model, vector: Array.from(unitVector(v)) };
  }
  return out;
}

export function unitVector(v: ArrayLike<number>): Float64Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  return Float64Array.from(v as ArrayLike<number>, (x) => x * s);
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  const ua = unitVector(a);
  const ub = unitVector(b);
  let d = 0;
  for (let i = 0; i < ua.length; i++) d += ua[i]! * ub[i]!;
  return d;
}

/** Equal-weight divergence of two Gaussians (see the top of the file); ≥ 0. */
export function gaussianDivergence(a: GaussianStats, b: GaussianStats): number {
  const d = a.dim;
  const ca = a.covariance();
  const cb = b.covariance();
  const ma = a.mean();
  const mb = b.mean();
  const pooled = new Float64Array(d * d);
  for (let i = 0; i < d; i++)
    for (let j = 0; j < d; j++) pooled[i * d + j] = (ca[i * d + j]! + cb[i * d + j]!) / 2 + ((ma[i]! - mb[i]!) * (ma[j]! - mb[j]!)) / 4;
  return 0.5 * logDet(pooled, d) - 0.25 * logDet(ca, d) - 0.25 * logDet(cb, d);
}

/** Feature distance of two voices: spectral divergence, plus pitch divergence when both have enough voiced frames. */
export function voiceDistance(a: SpeakerStats, b: SpeakerStats): number {
  const pitch = a.pitch.n >= MIN_PITCH_FRAMES && b.pitch.n >= MIN_PITCH_FRAMES ? gaussianDivergence(a.pitch, b.pitch) : 0;
  return gaussianDivergence(a.spectral, b.spectral) + pitch;
}

/** Speech a diarized speaker needs before it is compared with enrolled voices (less is too little to judge), ms. */
export const MIN_HEARD_SPEECH_MS = 2000;

/** How well a diarized voice fits an enrolled one: > 0 accepted (margin past the threshold), and on which features. */
export function matchScore(heard: VoicePrint, enrolled: VoicePrint, t: MatchThresholds): { score: number; by: 'embedding' | 'features'; value: number } {
  if (heard.embedding && enrolled.embedding && heard.embedding.model === enrolled.embedding.model) {
    const value = cosine(heard.embedding.vector, enrolled.embedding.vector);
    return { score: value - t.minSimilarity, by: 'embedding', value };
  }
  const value = voiceDistance(statsOfPrint(heard), statsOfPrint(enrolled));
  // Relative margin, so that a feature match and an embedding match can be ranked together.
  return { score: (t.maxDistance - value) / Math.max(t.maxDistance, 1e-9), by: 'features', value };
}

/**
 * Diarized speaker number → index of the enrolled voice it is, for the speakers that match one. One-to-one: the
 * best-fitting pair is taken first, and neither side is used again; a voice that fits none stays unknown.
 */
export function identifySpeakers(heard: ReadonlyMap<number, VoicePrint>, enrolled: readonly VoicePrint[], t: MatchThresholds): Map<number, number> {
  const pairs: { speaker: number; index: number; score: number }[] = [];
  for (const [speaker, print] of heard) {
    if (print.speechMs < t.minSpeechMs) continue;
    enrolled.forEach((e, index) => {
      const { score } = matchScore(print, e, t);
      if (score >= 0) pairs.push({ speaker, index, score });
    });
  }
  pairs.sort((a, b) => b.score - a.score);
  const out = new Map<number, number>();
  const taken = new Set<number>();
  for (const p of pairs) {
    if (out.has(p.speaker) || taken.has(p.index)) continue;
    out.set(p.speaker, p.index);
    taken.add(p.index);
  }
  return out;
}

/** Turns with this much speech are judged on their own; shorter ones take what their diarized speaker's turns say. */
export const JUDGED_TURN_MS = 1000;

/** Knobs of identifyTurns (tuned on the benchmark's tune half: docs/benchmarks-history.md#enrolled-speakers). */
export interface TurnRule {
  /** Speech at which a turn's threshold is `maxDistance`, ms; a shorter turn gets more room (its estimate is noisier). */
  refSpeechMs: number;
  /** How fast the room grows: threshold = maxDistance · (1 + slack · (refSpeechMs / speech − 1)) for shorter turns. */
  slack: number;
  /** How many times farther the second-best enrolled voice must be than the best (distance, or 1 − similarity). */
  margin: number;
  /** Share of a speaker's judged speech one name needs before its short turns carry it too. */
  majority: number;
}

export const DEFAULT_TURN_RULE: TurnRule = { refSpeechMs: 4000, slack: 1, margin: 1.4, majority: 0.6 };

/** One turn against every enrolled voice: the index it is, or undefined (none close enough, or two too alike). */
export function identifyTurn(print: VoicePrint, enrolled: readonly VoicePrint[], t: MatchThresholds, rule: TurnRule = DEFAULT_TURN_RULE): number | undefined {
  // Room for a short turn (its Gaussians are estimated from fewer frames, which inflates the divergence): features
  // only; an embedding's similarity has no such bias with length.
  const room = 1 + rule.slack * Math.max(0, rule.refSpeechMs / Math.max(print.speechMs, 1) - 1);
  const scored = enrolled.map((e, index) => {
    const m = matchScore(print, e, t);
    // As a distance with its threshold: features as they are, embeddings as 1 − similarity.
    return m.by === 'features' ? { index, d: m.value, max: t.maxDistance * room } : { index, d: 1 - m.value, max: 1 - t.minSimilarity };
  });
  scored.sort((x, y) => x.d - y.d);
  const [best, second] = scored;
  if (!best || best.d > best.max) return undefined;
  return !second || second.d >= best.d * rule.margin ? best.index : undefined;
}

/**
 * Each turn with enough speech judged on its own (`judge`, by default identifyTurn; undefined for a shorter turn),
 * and each diarized speaker's name: the one most (`rule.majority`) of its judged speech got, or, with no judged
 * turn, its turns' merged print judged as one.
 */
export function judgeTurns(
  turns: readonly SpeakerTurn[],
  turnPrints: ReadonlyMap<number, VoicePrint>,
  enrolled: readonly VoicePrint[],
  t: MatchThresholds,
  rule: TurnRule = DEFAULT_TURN_RULE,
  judge: (i: number, print: VoicePrint) => number | undefined = (_, p) => identifyTurn(p, enrolled, t, rule),
): { own: { judged: boolean; index: number | undefined }[]; speakerName: Map<number, number | undefined> } {
  const own = turns.map((_, i) => {
    const p = turnPrints.get(i);
    return p && p.speechMs >= JUDGED_TURN_MS ? { judged: true, index: judge(i, p) } : { judged: false, index: undefined };
  });
  // Per diarized speaker: judged speech by name (-1: no name), and the prints of all its turns.
  const votes = new Map<number, Map<number, number>>();
  const bySpeaker = new Map<number, VoicePrint[]>();
  turns.forEach((turn, i) => {
    const p = turnPrints.get(i);
    if (p) {
      const list = bySpeaker.get(turn.speaker);
      if (list) list.push(p);
      else bySpeaker.set(turn.speaker, [p]);
    }
    if (!own[i]!.judged) return;
    const v = votes.get(turn.speaker) ?? new Map<number, number>();
    v.set(own[i]!.index ?? -1, (v.get(own[i]!.index ?? -1) ?? 0) + p!.speechMs);
    votes.set(turn.speaker, v);
  });
  const speakerName = new Map<number, number | undefined>();
  for (const [speaker, prints] of bySpeaker) {
    const v = votes.get(speaker);
    if (!v) {
      const merged = mergePrints(prints);
      speakerName.set(speaker, merged.speechMs >= t.minSpeechMs ? identifyTurn(merged, enrolled, t, rule) : undefined);
      continue;
    }
    const total = [...v.values()].reduce((x, y) => x + y, 0);
    const [top, ms] = [...v].sort((x, y) => y[1] - x[1])[0]!;
    speakerName.set(speaker, top >= 0 && ms >= rule.majority * total ? top : undefined);
  }
  return { own, speakerName };
}

/**
 * Enrolled voices in a file's diarization, from a voice print of each turn (by turn index). Each turn with enough
 * speech is judged on its own (identifyTurn), so a diarized speaker that merged two voices is split by what its
 * turns sound like, and one voice the diarizer split in two gets one name; a short turn takes its speaker's name
 * (judgeTurns). Returns the turns, renumbered (speaker rest + k for name k; unnamed turns keep their number), and
 * speaker → enrolled index.
 */
export function identifyTurns(...args: Parameters<typeof judgeTurns>): { turns: SpeakerTurn[]; names: Map<number, number> } {
  const turns = args[0];
  const { own, speakerName } = judgeTurns(...args);
  // Named turns move to one speaker number per name; unnamed ones keep theirs.
  const rest = 1 + Math.max(0, ...turns.map((x) => x.speaker));
  const names = new Map<number, number>();
  const out = turns.map((turn, i) => {
    const index = own[i]!.judged ? own[i]!.index : speakerName.get(turn.speaker);
    if (index === undefined) return { ...turn };
    names.set(rest + index, index);
    return { ...turn, speaker: rest + index };
  });
  return { turns: out, names };
}
