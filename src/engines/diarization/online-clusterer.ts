// Stream speaker clustering: speech frames are grouped into windows (1.5 s of speech, or less at a pause); each
// closed window joins the known speaker with the lowest ΔBIC when that is negative, else it starts a new speaker.
// Speaker models keep growing with the windows they absorb, so later decisions rest on more data. Windows are
// remembered (start, end, speaker) for labelling tokens; memory grows by a few numbers per 1.5 s of speech.
import { SpeakerStats, speakerBic } from './speaker-stats.js';
import { FRAME_MS, type SpeakerFrame } from './speech-frames.js';

export interface OnlineClusterOptions {
  lambda?: number;
  windowFrames?: number;
  /** Most speakers one stream may have; further windows go to the closest one (default 10). */
  maxSpeakers?: number;
}

interface ClosedWindow {
  startMs: number;
  endMs: number;
  speaker: number;
}

/**
 * Lower than the offline λ: a window's ΔBIC against a grown speaker model is penalised by log(window + model
 * frames), so the same λ would merge distinct voices once the models hold a minute of speech (tuned on flite voices).
 */
export const DEFAULT_ONLINE_BIC_LAMBDA = 2;
const WINDOW_GAP_FRAMES = 30;
const MIN_WINDOW_FRAMES = 50;

export class OnlineClusterer {
  private readonly lambda: number;
  private readonly windowFrames: number;
  private readonly maxSpeakers: number;
  private readonly speakers: SpeakerStats[] = [];
  readonly windows: ClosedWindow[] = [];
  private open = new SpeakerStats();
  private openStart = -1;
  private openEnd = -1;

  constructor(options: OnlineClusterOptions = {}) {
    this.lambda = options.lambda ?? DEFAULT_ONLINE_BIC_LAMBDA;
    this.windowFrames = options.windowFrames ?? 150;
    this.maxSpeakers = options.maxSpeakers ?? 10;
  }

  get speakerCount(): number {
    return this.speakers.length;
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

  /** End of stream: a last window with enough frames is clustered; a shorter one joins its nearest speaker. */
  flush(): void {
    if (this.open.n > 0) this.close();
  }

  private close(): void {
    const window = this.open;
    let speaker = this.closest(window);
    if (speaker === undefined || (window.n >= MIN_WINDOW_FRAMES && speakerBic(window, this.speakers[speaker]!, this.lambda) >= 0 && this.speakers.length < this.maxSpeakers)) {
      speaker = this.speakers.length;
      this.speakers.push(new SpeakerStats());
    }
    this.speakers[speaker]!.merge(window);
    this.windows.push({ startMs: this.openStart * FRAME_MS, endMs: (this.openEnd + 1) * FRAME_MS, speaker });
    this.open = new SpeakerStats();
  }

  private closest(window: SpeakerStats): number | undefined {
    let best: number | undefined;
    let bestBic = Infinity;
    this.speakers.forEach((s, i) => {
      const v = speakerBic(window, s, this.lambda);
      if (v < bestBic) {
        bestBic = v;
        best = i;
      }
    });
    return best;
  }

  /** Speaker of the window overlapping [startMs, endMs) most; else of the nearest window; else the open window's guess. */
  speakerAt(startMs: number, endMs: number): number | undefined {
    let best: number | undefined;
    let bestOverlap = 0;
    let nearest: number | undefined;
    let nearestDist = Infinity;
    // Tokens are asked about in time order, near the end: scan back from the newest window.
    for (let i = this.windows.length - 1; i >= 0; i--) {
      const w = this.windows[i]!;
      const overlap = Math.min(endMs, w.endMs) - Math.max(startMs, w.startMs);
      if (overlap > bestOverlap) {
        bestOverlap = overlap;
        best = w.speaker;
      }
      const dist = Math.max(w.startMs - endMs, startMs - w.endMs, 0);
      if (dist < nearestDist) {
        nearestDist = dist;
        nearest = w.speaker;
      }
      if (w.endMs < startMs - 30_000) break;
    }
    if (best !== undefined) return best;
    // Not clustered yet: the open window, once it has enough frames to judge, else the nearest window.
    if (this.open.n >= MIN_WINDOW_FRAMES && this.openEnd * FRAME_MS >= startMs) return this.closest(this.open) ?? nearest;
    return nearest;
  }
}
