// From speaker turns to wire labels: every timed token gets the speaker whose turns overlap it most (or, for a
// token the VAD missed, the nearest turn), and speakers are named "1", "2", ... in order of first appearance in
// the token stream, as the spec's real-time examples show. Speakers recognised as enrolled voices carry their names
// instead, and the numbers go to the others only.
import type { SpeakerTurn } from './interface.js';

/** Speaker overlapping [startMs, endMs) most; the nearest turn's when none overlaps; undefined with no turns. */
export function speakerForSpan(turns: SpeakerTurn[], startMs: number, endMs: number): number | undefined {
  const overlap = new Map<number, number>();
  let nearest: number | undefined;
  let nearestDist = Infinity;
  for (const t of turns) {
    const o = Math.min(endMs, t.endMs) - Math.max(startMs, t.startMs);
    if (o > 0) overlap.set(t.speaker, (overlap.get(t.speaker) ?? 0) + o);
    const dist = Math.max(t.startMs - endMs, startMs - t.endMs, 0);
    if (dist < nearestDist) {
      nearestDist = dist;
      nearest = t.speaker;
    }
  }
  let best: number | undefined;
  let bestOverlap = 0;
  for (const [s, o] of overlap)
    if (o > bestOverlap) {
      bestOverlap = o;
      best = s;
    }
  return best ?? nearest;
}

/** Speaker numbers (any) → wire labels "1", "2", ... in order of first use. */
export class SpeakerLabels {
  private readonly names = new Map<number, string>();

  label(speaker: number): string {
    let name = this.names.get(speaker);
    if (name === undefined) {
      name = String(this.names.size + 1);
      this.names.set(speaker, name);
    }
    return name;
  }
}

/**
 * A copy of the tokens with `speaker` set on each timed token: the speaker's name from `names` (recognised enrolled
 * voices), else its number. Tokens without times (none here) keep none.
 */
export function labelTokens<T extends { start_ms?: number; end_ms?: number }>(
  tokens: T[],
  turns: SpeakerTurn[],
  names: ReadonlyMap<number, string> = new Map(),
): (T & { speaker?: string })[] {
  const labels = new SpeakerLabels();
  // Audio with no speech found at all: one speaker.
  const fallback = turns.length === 0 ? 0 : undefined;
  return tokens.map((t) => {
    if (t.start_ms === undefined || t.end_ms === undefined) return t;
    const s = speakerForSpan(turns, t.start_ms, t.end_ms) ?? fallback;
    return s === undefined ? t : { ...t, speaker: names.get(s) ?? labels.label(s) };
  });
}
