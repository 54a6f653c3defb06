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
import type { SpeakerTurn } from './interface.js';
import { SpeakerStats } from './speaker-stats.js';
import { FRAME_MS } from './speech-frames.js';

/** Sufficient statistics of one Gaussian, as plain JSON. */
export interface GaussianJson {
  n: number;
  sum: number[];
  outer: number[];
}

/** A voice as stored (speaker profiles) and sent between threads. */
export interface VoicePrint {
  /** Speech the print was measured on, ms (speech frames of the voice activity detector). */
  speechMs: number;
  spectral: GaussianJson;
  pitch: GaussianJson;
  /** The speaker embedding (mean of unit vectors) and the model that made it, when one is installed. */
  embedding?: { model: string; vector: number[] };
}

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

export interface MatchThresholds {
  /** Feature distance up to which two voices are one person. */
  maxDistance: number;
  /** Embedding cosine similarity from which two voices are one person. */
  minSimilarity: number;
  /** Speech a diarized speaker needs before it is compared at all, ms. */
  minSpeechMs: number;
}

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

/** Turns with this much speech are checked on their own against the name their speaker got. */
export const VERIFY_TURN_MS = 1500;
/** A turn alone is noisier than its whole speaker: how much farther than the threshold it may still be. */
const TURN_SLACK = { distance: 1.25, similarity: 0.1 };

/**
 * Enrolled voices in a file's diarization, from a voice print of each turn (by turn index): speakers are identified
 * on their turns' prints merged (identifySpeakers), then each long enough turn of a named speaker is checked on its
 * own, and one that does not match moves to a speaker of its own without the name (the diarizer had merged two
 * voices). Returns the turns (renumbered where moved) and speaker → enrolled index.
 */
export function identifyTurns(
  turns: readonly SpeakerTurn[],
  turnPrints: ReadonlyMap<number, VoicePrint>,
  enrolled: readonly VoicePrint[],
  t: MatchThresholds,
): { turns: SpeakerTurn[]; names: Map<number, number> } {
  const bySpeaker = new Map<number, VoicePrint[]>();
  turns.forEach((turn, i) => {
    const p = turnPrints.get(i);
    if (p) bySpeaker.set(turn.speaker, [...(bySpeaker.get(turn.speaker) ?? []), p]);
  });
  const heard = new Map([...bySpeaker].map(([s, ps]) => [s, mergePrints(ps)]));
  const names = identifySpeakers(heard, enrolled, t);
  const loose: MatchThresholds = { ...t, maxDistance: t.maxDistance * TURN_SLACK.distance, minSimilarity: t.minSimilarity - TURN_SLACK.similarity };
  const rest = 1 + Math.max(0, ...turns.map((x) => x.speaker));
  const out = turns.map((turn, i) => {
    const e = names.get(turn.speaker);
    const p = turnPrints.get(i);
    if (e === undefined || !p || p.speechMs < VERIFY_TURN_MS || matchScore(p, enrolled[e]!, loose).score >= 0) return { ...turn };
    return { ...turn, speaker: rest + turn.speaker };
  });
  return { turns: out, names };
}
