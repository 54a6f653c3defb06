// Stream speaker clustering. Speech frames are grouped into windows (2.5 s of speech, or less at a pause). While
// the stream is young (up to RECLUSTER_MAX_WINDOWS windows, ~3 min of speech), every closed window triggers a fresh
// agglomerative BIC clustering of all windows so far (the offline algorithm, minus resegmentation), whose clusters
// are matched to the speaker numbers already handed out (Hungarian on shared speech) so labels stay stable. After
// that, each new window joins the known speaker with the lowest ΔBIC when it is negative, else starts a new one.
// Windows are remembered (start, end, speaker, statistics) for labelling tokens.
// A speaker-count hint's max (options.speakers) caps both steps: the re-clustering merges down to max clusters, a
// new cluster takes the lowest speaker number free below max, and once max speakers are known every window joins
// the nearest. Its min is not enforced: tokens are labelled as they turn final, before the stream can know that
// another voice will come, and splitting the voices heard so far to reach min would label one person as two.
import { maxWeightAssignment } from './der.js';
import type { SpeakerCount } from './interface.js';
import { agglomerate, DEFAULT_BIC_LAMBDA, DEFAULT_WINDOW_FRAMES } from './offline-clusterer.js';
import { speakerRange } from './speaker-count.js';
import { SpeakerStats, speakerBic } from './speaker-stats.js';
import { FRAME_MS, type SpeakerFrame } from './speech-frames.js';

export interface OnlineClusterOptions {
  /** λ of the re-clustering (default: the offline one). */
  lambda?: number;
  /** λ of the incremental step once the stream is too long to re-cluster. */
  incrementalLambda?: number;
  windowFrames?: number;
  /** Most speakers the incremental step opens; further windows go to the closest one (default 10, or speakers.max). */
  maxSpeakers?: number;
  /** Re-cluster everything after each window while there are at most this many windows (default 120). */
  reclusterMaxWindows?: number;
  /** The caller's speaker-count hint (StreamOptions.speakers): max is honoured throughout, min is not (see above). */
  speakers?: SpeakerCount;
}

/**
 * Lower than the offline λ: a window's ΔBIC against a grown speaker model is penalised by log(window + model
 * frames), so the offline λ would merge distinct voices once the models hold a minute of speech.
 */
export const DEFAULT_ONLINE_BIC_LAMBDA = 2;
const WINDOW_GAP_FRAMES = 30;
const MIN_WINDOW_FRAMES = 50;
/** Speech a re-clustered speaker needs to stand on its own (frames; less than offline: a turn is labelled as soon as it is final). */
const MIN_SPEAKER_FRAMES = 150;

export interface ClosedWindow {
  startMs: number;
  endMs: number;
  speaker: number;
  stats: SpeakerStats;
}

export class OnlineClusterer {
  private readonly lambda: number;
  private readonly incrementalLambda: number;
  private readonly windowFrames: number;
  private readonly maxSpeakers: number;
  /** The hint's max: no more speaker numbers than this, and all of them below it. */
  private readonly capped: number | undefined;
  private readonly reclusterMax: number;
  /** Speaker number → model (sum of its windows). */
  private speakers = new Map<number, SpeakerStats>();
  private nextSpeaker = 0;
  readonly windows: ClosedWindow[] = [];
  private open = new SpeakerStats();
  private openStart = -1;
  private openEnd = -1;
  /** changes(): windows reported so far, and the first one whose speaker changed since. */
  private reported = 0;
  private relabelledFrom = 0;

  constructor(options: OnlineClusterOptions = {}) {
    this.lambda = options.lambda ?? DEFAULT_BIC_LAMBDA;
    this.incrementalLambda = options.incrementalLambda ?? DEFAULT_ONLINE_BIC_LAMBDA;
    this.windowFrames = options.windowFrames ?? DEFAULT_WINDOW_FRAMES;
    const max = speakerRange(options.speakers).max;
    this.capped = max < Infinity ? max : undefined;
    this.maxSpeakers = this.capped ?? options.maxSpeakers ?? 10;
    this.reclusterMax = options.reclusterMaxWindows ?? 120;
  }

  get speakerCount(): number {
    return this.speakers.size;
  }

  /** Each speaker's model so far (for recognising enrolled voices). */
  speakerModels(): ReadonlyMap<number, SpeakerStats> {
    return this.speakers;
  }

  add(frames: SpeakerFrame[]): void {
    for (const f of frames) {
      if (this.open.n >= MIN_WINDOW_FRAMES && f.index - this.openEnd > WINDOW_GAP_FRAMES) this.close();
      if (this.open.n === 0) this.openStart = f.index;
      this.open.add(f);
      this.openEnd = f.index;
      if (this.open.n >= this.windowFrames) this.close();
    }
  }

  /** End of stream: the last window is clustered whatever its length. */
  flush(): void {
    if (this.open.n > 0) this.close();
  }

  private close(): void {
    const stats = this.open;
    this.open = new SpeakerStats();
    const window: ClosedWindow = { startMs: this.openStart * FRAME_MS, endMs: (this.openEnd + 1) * FRAME_MS, speaker: -1, stats };
    this.windows.push(window);
    if (this.windows.length <= this.reclusterMax) return this.recluster();
    let speaker = this.closest(stats);
    const full = this.speakers.size >= this.maxSpeakers;
    if (speaker === undefined || (!full && stats.n >= MIN_WINDOW_FRAMES && speakerBic(stats, this.speakers.get(speaker)!, this.incrementalLambda) >= 0)) {
      speaker = this.newNumber(this.speakers.keys());
      this.speakers.set(speaker, new SpeakerStats());
    }
    this.speakers.get(speaker)!.merge(stats);
    window.speaker = speaker;
  }

  /** Cluster all windows afresh and keep the speaker numbers already in use where the clusters match them. */
  private recluster(): void {
    const clusters = agglomerate(
      this.windows.map((w) => new SpeakerStats().merge(w.stats)),
      this.lambda,
      MIN_SPEAKER_FRAMES,
      { min: 1, max: this.capped ?? Infinity },
    );
    const k = Math.max(...clusters) + 1;
    const old = [...this.speakers.keys()];
    // Shared speech (frames) between new cluster c and old speaker old[j].
    const shared = Array.from({ length: k }, () => new Array<number>(old.length).fill(0));
    this.windows.forEach((w, i) => {
      const j = old.indexOf(w.speaker);
      if (j >= 0) shared[clusters[i]!]![j]! += w.stats.n;
    });
    const match = old.length ? maxWeightAssignment(shared) : new Array<number>(k).fill(-1);
    const kept = match.map((j, c) => (j >= 0 && shared[c]![j]! > 0 ? old[j]! : undefined));
    const taken = new Set(kept.filter((s) => s !== undefined));
    const number = kept.map((s) => {
      if (s !== undefined) return s;
      const fresh = this.newNumber(taken);
      taken.add(fresh);
      return fresh;
    });
    this.speakers = new Map();
    this.relabelledFrom = 0;
    this.windows.forEach((w, i) => {
      w.speaker = number[clusters[i]!]!;
      const model = this.speakers.get(w.speaker) ?? new SpeakerStats();
      this.speakers.set(w.speaker, model.merge(w.stats));
    });
  }

  /** A number for a new speaker: the next unused one, or under a max, the lowest that `taken` does not hold. */
  private newNumber(taken: Iterable<number>): number {
    if (this.capped === undefined) return this.nextSpeaker++;
    const used = new Set(taken);
    let n = 0;
    while (used.has(n)) n++;
    return n;
  }

  private closest(window: SpeakerStats): number | undefined {
    let best: number | undefined;
    let bestBic = Infinity;
    for (const [id, s] of this.speakers) {
      const v = speakerBic(window, s, this.incrementalLambda);
      if (v < bestBic) {
        bestBic = v;
        best = id;
      }
    }
    return best;
  }

  /** Speaker of the window overlapping [startMs, endMs) most; else of the nearest window; else the open window's guess. */
  speakerAt(startMs: number, endMs: number): number | undefined {
    return speakerOfWindows(this.windows, startMs, endMs, this.openGuess());
  }

  /** The open window's closest speaker, once it has enough frames to judge. */
  openGuess(): OpenGuess | undefined {
    if (this.open.n < MIN_WINDOW_FRAMES) return undefined;
    return { endMs: this.openEnd * FRAME_MS, speaker: this.closest(this.open) };
  }

  /**
   * The open window as it stands (speaker: its closest so far, -1 for none), once it has enough frames to judge. Its
   * statistics keep growing: they are this window's own until it closes.
   */
  openWindow(): ClosedWindow | undefined {
    if (this.open.n < MIN_WINDOW_FRAMES) return undefined;
    return { startMs: this.openStart * FRAME_MS, endMs: (this.openEnd + 1) * FRAME_MS, speaker: this.closest(this.open) ?? -1, stats: this.open };
  }

  /**
   * What changed for speakerAt since the last call: windows from index `from` on (all of them after a re-clustering,
   * else the new ones) and the open window's guess. A thread that clusters reports this to the one that labels.
   */
  changes(): WindowChanges {
    const from = Math.min(this.reported, this.relabelledFrom);
    this.reported = this.relabelledFrom = this.windows.length;
    return { from, windows: this.windows.slice(from).map(({ startMs, endMs, speaker }) => ({ startMs, endMs, speaker })), open: this.openGuess() };
  }
}

export interface WindowLabel {
  startMs: number;
  endMs: number;
  speaker: number;
}

export interface OpenGuess {
  endMs: number;
  speaker: number | undefined;
}

export interface WindowChanges {
  from: number;
  windows: WindowLabel[];
  open: OpenGuess | undefined;
}

/** Index of the window overlapping [startMs, endMs) most, if any does. */
export function windowAt(windows: readonly WindowLabel[], startMs: number, endMs: number): number | undefined {
  let best: number | undefined;
  let bestOverlap = 0;
  for (let i = windows.length - 1; i >= 0; i--) {
    const w = windows[i]!;
    const overlap = Math.min(endMs, w.endMs) - Math.max(startMs, w.startMs);
    if (overlap > bestOverlap) {
      bestOverlap = overlap;
      best = i;
    }
    if (w.endMs < startMs - 30_000) break;
  }
  return best;
}

/** Speaker of the window overlapping [startMs, endMs) most; else of the nearest window; else the open window's guess. */
export function speakerOfWindows(windows: readonly WindowLabel[], startMs: number, endMs: number, open: OpenGuess | undefined): number | undefined {
  const at = windowAt(windows, startMs, endMs);
  if (at !== undefined) return windows[at]!.speaker;
  let nearest: number | undefined;
  let nearestDist = Infinity;
  // Tokens are asked about in time order, near the end: scan back from the newest window.
  for (let i = windows.length - 1; i >= 0; i--) {
    const w = windows[i]!;
    const dist = Math.max(w.startMs - endMs, startMs - w.endMs, 0);
    if (dist < nearestDist) {
      nearestDist = dist;
      nearest = w.speaker;
    }
    if (w.endMs < startMs - 30_000) break;
  }
  // Not clustered yet: the open window, once it has enough frames to judge, else the nearest window.
  if (open && open.endMs >= startMs) return open.speaker ?? nearest;
  return nearest;
}
