// Whole-file speaker clustering with an automatic speaker count:
//   1. speech frames are cut into short windows (2.5 s of speech, or at pauses);
//   2. agglomerative clustering: merge the pair of clusters with the lowest ΔBIC while it is negative (one full-
//      covariance MFCC Gaussian and one pitch Gaussian per cluster explain the merged frames well enough), so the
//      BIC decides when to stop; clusters with under 3 s of speech then join their nearest cluster;
//   3. resegmentation: one Gaussian per speaker scores every speech frame, the scores are smoothed over ±0.5 s and
//      each frame goes to the best speaker (two passes), which moves turn boundaries off the window grid.
// A speaker-count hint (options.speakers) bounds steps 2 and 3. Under a min, two clusters of 3 s of speech each no
// longer merge once only min such are left (smaller ones still do), merging and the fold stop at min clusters, and
// a resegmentation pass that would leave fewer than min speakers is undone; min needs min windows (each 0.5–2.5 s of
// speech): a file with fewer gets one speaker per window. Over a max, after the fold, the closest pair merges
// whatever its ΔBIC until max are left. Counting only clusters of a speaker's worth of speech, and forcing merges
// after the fold, was chosen on the benchmark's tuning half (docs/benchmarks-history.md, speaker counts).
import type { SpeakerCount, SpeakerTurn } from './interface.js';
import { ANY_SPEAKER_COUNT, speakerRange, type SpeakerRange } from './speaker-count.js';
import { SpeakerModel, SpeakerStats, speakerBic } from './speaker-stats.js';
import { FRAME_MS, type SpeakerFrame } from './speech-frames.js';

export interface OfflineClusterOptions {
  /** Penalty weight λ of the BIC stopping rule (higher: fewer speakers). */
  lambda?: number;
  /** Speech frames per initial window (default 250 = 2.5 s). */
  windowFrames?: number;
  /** Most initial windows: longer files get longer windows (keeps the O(n²) merge step bounded). */
  maxWindows?: number;
  /** Score smoothing half-width in frames for resegmentation (default 50 = 0.5 s). */
  smoothFrames?: number;
  /** Clusters with less speech than this (frames, default 300 = 3 s) join their nearest cluster. */
  minSpeakerFrames?: number;
  /** Silence inside one speaker's speech that still counts as one turn, ms (default 500). */
  maxTurnGapMs?: number;
  /** Bounds on the speaker count (DiarizeOptions.speakers). */
  speakers?: SpeakerCount;
}

// Tuned together on the benchmark's real and flite conversations (docs/benchmarks-history.md): 2.5 s windows hold enough
// frames for a stable full-covariance estimate; shorter ones split one voice by phonetic content.
export const DEFAULT_BIC_LAMBDA = 3;
export const DEFAULT_WINDOW_FRAMES = 250;

/** A pause this long closes a window early (when it holds enough speech). */
const WINDOW_GAP_FRAMES = 30;
const MIN_WINDOW_FRAMES = 50;

export async function clusterOffline(frames: SpeakerFrame[], options: OfflineClusterOptions = {}): Promise<SpeakerTurn[]> {
  const count = speakerRange(options.speakers);
  if (frames.length === 0) return [];
  const lambda = options.lambda ?? DEFAULT_BIC_LAMBDA;
  const maxWindows = options.maxWindows ?? 600;
  const windowFrames = Math.max(options.windowFrames ?? DEFAULT_WINDOW_FRAMES, Math.ceil(frames.length / maxWindows));
  const windows = cutWindows(frames, windowFrames);

  const cluster = await agglomerateAsync(
    windows.map((w) => statsOf(frames, w.from, w.to)),
    lambda,
    options.minSpeakerFrames ?? 300,
    count,
  );

  // Initial frame labels from the clusters.
  const labels = new Int32Array(frames.length).fill(-1);
  windows.forEach((w, i) => labels.fill(cluster[i]!, w.from, w.to));
  let speakers = Math.max(...cluster) + 1;
  for (let pass = 0; pass < 2 && speakers > 1; pass++) {
    const before = count.min > 1 ? labels.slice() : undefined;
    const after = await resegment(frames, labels, speakers, options.smoothFrames ?? 50);
    // A speaker the pass emptied is gone; under the hint's min (which the clustering met) the pass is undone.
    if (before && after < Math.min(count.min, speakers)) {
      labels.set(before);
      break;
    }
    speakers = after;
  }
  return framesToTurns(frames, labels, options.maxTurnGapMs ?? 500);
}

/**
 * Agglomerative clustering of speech windows on ΔBIC: merge the closest pair while its ΔBIC is negative, then fold
 * clusters with under `minSpeakerFrames` of speech into their nearest cluster. Within `count`: neither step goes
 * below count.min clusters (or the number of windows, if fewer), and two clusters of minSpeakerFrames each do not
 * merge once only count.min such are left; after the fold, the closest pair merges whatever its ΔBIC while there are
 * more than count.max. Returns a cluster number (0, 1, ... in order of first window) per window. Takes ownership of
 * `windowStats` (merged in place).
 */
export function agglomerate(windowStats: SpeakerStats[], lambda: number, minSpeakerFrames: number, count: SpeakerRange = ANY_SPEAKER_COUNT): number[] {
  const steps = agglomerateSteps(windowStats, lambda, minSpeakerFrames, count);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** agglomerate() that gives the event loop a turn every few milliseconds of work (long files take seconds). */
export async function agglomerateAsync(
  windowStats: SpeakerStats[],
  lambda: number,
  minSpeakerFrames: number,
  count: SpeakerRange = ANY_SPEAKER_COUNT,
): Promise<number[]> {
  const steps = agglomerateSteps(windowStats, lambda, minSpeakerFrames, count);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The clustering as a generator: it yields (nothing) at points where the caller may pause. */
function* agglomerateSteps(windowStats: SpeakerStats[], lambda: number, minSpeakerFrames: number, count: SpeakerRange): Generator<void, number[]> {
  const stats = windowStats;
  let work = 0;
  /** Yield about every 2^20 units of work (a ΔBIC is ~64 units, a matrix cell scan 1). */
  const spent = (units: number) => {
    work += units;
    if (work < 1 << 20) return false;
    work = 0;
    return true;
  };
  // Agglomerative clustering on ΔBIC. dist is a dense upper-triangle matrix over live cluster slots.
  const n = stats.length;
  const members: number[][] = stats.map((_, i) => [i]);
  const alive = new Array<boolean>(n).fill(true);
  const dist = new Float64Array(n * n);
  const bic = (i: number, j: number) => speakerBic(stats[i]!, stats[j]!, lambda);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) dist[i * n + j] = bic(i, j);
    if (spent(64 * (n - i))) yield;
  }
  const minFrames = minSpeakerFrames;
  const large = (c: number) => stats[c]!.n >= minFrames;
  let clusters = n;
  for (;;) {
    if (clusters <= count.min) break;
    if (spent(n * n)) yield;
    // Under a min, two clusters with a speaker's worth of speech each stay apart once there are only min such:
    // the rest (odd stretches, fragments) still merge on ΔBIC or are folded below.
    let largeCount = 0;
    for (let i = 0; i < n; i++) if (alive[i] && large(i)) largeCount++;
    const keepLarge = largeCount <= count.min;
    let best = Infinity;
    let bi = -1;
    let bj = -1;
    for (let i = 0; i < n; i++) {
      if (!alive[i]) continue;
      const largeI = keepLarge && large(i);
      for (let j = i + 1; j < n; j++) {
        if (!alive[j] || (largeI && large(j))) continue;
        const v = dist[i * n + j]!;
        if (v < best) {
          best = v;
          bi = i;
          bj = j;
        }
      }
    }
    if (bi < 0 || best >= 0) break;
    stats[bi]!.merge(stats[bj]!);
    members[bi]!.push(...members[bj]!);
    alive[bj] = false;
    clusters--;
    for (let k = 0; k < n; k++) {
      if (!alive[k] || k === bi) continue;
      const v = bic(bi, k);
      if (k < bi) dist[k * n + bi] = v;
      else dist[bi * n + k] = v;
    }
  }

  // A speaker with under minSpeakerFrames of speech is more likely one voice's odd stretch (a laugh, a shout) than
  // a person: it joins the cluster it is closest to in ΔBIC.
  for (;;) {
    const live = [...alive.keys()].filter((c) => alive[c]);
    if (live.length < 2 || live.length <= count.min) break;
    const small = live.filter((c) => stats[c]!.n < minFrames).sort((a, b) => stats[a]!.n - stats[b]!.n)[0];
    if (small === undefined) break;
    let into = -1;
    let best = Infinity;
    for (const c of live) {
      if (c === small) continue;
      const v = bic(small, c);
      if (v < best) {
        best = v;
        into = c;
      }
    }
    stats[into]!.merge(stats[small]!);
    members[into]!.push(...members[small]!);
    alive[small] = false;
  }

  // Over a max: the closest pair merges, whatever its ΔBIC, until there are max (after the fold, so that the
  // clusters merged are speakers, not fragments).
  let live = [...alive.keys()].filter((c) => alive[c]);
  if (live.length > count.max) {
    // The fold left dist stale for the clusters it grew.
    for (const i of live) for (const j of live) if (j > i) dist[i * n + j] = bic(i, j);
    while (live.length > count.max) {
      if (spent(live.length * live.length)) yield;
      let best = Infinity;
      let bi = -1;
      let bj = -1;
      for (const i of live) {
        for (const j of live) {
          if (j > i && dist[i * n + j]! < best) {
            best = dist[i * n + j]!;
            bi = i;
            bj = j;
          }
        }
      }
      stats[bi]!.merge(stats[bj]!);
      members[bi]!.push(...members[bj]!);
      alive[bj] = false;
      live = live.filter((c) => c !== bj);
      for (const k of live) if (k !== bi) dist[Math.min(k, bi) * n + Math.max(k, bi)] = bic(bi, k);
    }
  }

  const out = new Array<number>(n).fill(-1);
  let next = 0;
  for (let w = 0; w < n; w++) {
    if (out[w] !== -1) continue;
    const c = [...alive.keys()].find((k) => alive[k] && members[k]!.includes(w))!;
    for (const m of members[c]!) out[m] = next;
    next++;
  }
  return out;
}

interface Window {
  from: number;
  to: number;
}

function cutWindows(frames: SpeakerFrame[], windowFrames: number): Window[] {
  const out: Window[] = [];
  let from = 0;
  for (let i = 1; i <= frames.length; i++) {
    const len = i - from;
    const pause = i < frames.length && frames[i]!.index - frames[i - 1]!.index > WINDOW_GAP_FRAMES;
    if (i === frames.length || len >= windowFrames || (pause && len >= MIN_WINDOW_FRAMES)) {
      out.push({ from, to: i });
      from = i;
    }
  }
  // A short last window joins the one before it: too few frames for a covariance.
  if (out.length > 1 && out[out.length - 1]!.to - out[out.length - 1]!.from < MIN_WINDOW_FRAMES) {
    const last = out.pop()!;
    out[out.length - 1]!.to = last.to;
  }
  return out;
}

function statsOf(frames: SpeakerFrame[], from: number, to: number): SpeakerStats {
  const s = new SpeakerStats();
  for (let f = from; f < to; f++) s.add(frames[f]!);
  return s;
}

/** One Viterbi-free resegmentation pass: returns the number of speakers left (empty ones are dropped). */
async function resegment(frames: SpeakerFrame[], labels: Int32Array, speakers: number, half: number): Promise<number> {
  const models: SpeakerModel[] = [];
  for (let s = 0; s < speakers; s++) {
    const st = new SpeakerStats();
    labels.forEach((l, f) => {
      if (l === s) st.add(frames[f]!);
    });
    models.push(new SpeakerModel(st));
  }
  const ll: Float64Array[] = [];
  for (const m of models) {
    // One speaker's scores of an hour of speech take ~0.2 s: let the event loop in between.
    await new Promise((resolve) => setImmediate(resolve));
    ll.push(Float64Array.from(frames, (f) => m.logLikelihood(f)));
  }
  // Prefix sums make the ±half smoothing O(frames) per speaker.
  const prefix = ll.map((row) => {
    const p = new Float64Array(row.length + 1);
    for (let i = 0; i < row.length; i++) p[i + 1] = p[i]! + row[i]!;
    return p;
  });
  for (let f = 0; f < frames.length; f++) {
    const lo = Math.max(0, f - half);
    const hi = Math.min(frames.length, f + half + 1);
    let best = -Infinity;
    for (let s = 0; s < speakers; s++) {
      const v = prefix[s]![hi]! - prefix[s]![lo]!;
      if (v > best) {
        best = v;
        labels[f] = s;
      }
    }
  }
  // Renumber so speakers with no frames disappear.
  const map = new Map<number, number>();
  labels.forEach((l, f) => {
    if (!map.has(l)) map.set(l, map.size);
    labels[f] = map.get(l)!;
  });
  return map.size;
}

/** Consecutive frames of one speaker become one turn, across pauses up to maxGapMs. */
export function framesToTurns(frames: SpeakerFrame[], labels: ArrayLike<number>, maxGapMs: number): SpeakerTurn[] {
  const turns: SpeakerTurn[] = [];
  frames.forEach((f, i) => {
    const start = f.index * FRAME_MS;
    const end = start + FRAME_MS;
    const last = turns[turns.length - 1];
    if (last && last.speaker === labels[i] && start - last.endMs <= maxGapMs) last.endMs = end;
    else turns.push({ startMs: start, endMs: end, speaker: labels[i]! });
  });
  return turns;
}
