// Shared by the e2e diarization tests: transcript tokens with speaker labels checked against the turns of the
// conversation they were made from.
import { expect } from 'vitest';
import type { ReferenceTurn } from './diarization-corpus.js';

export interface LabelledToken {
  start_ms?: number;
  end_ms?: number;
  speaker?: string;
}

/** The reference speaker of a token: the turn it overlaps most. */
function trueSpeaker(t: LabelledToken, turns: readonly ReferenceTurn[]): string {
  let best = '';
  let most = -Infinity;
  for (const turn of turns) {
    const o = Math.min(t.end_ms!, turn.endMs) - Math.max(t.start_ms!, turn.startMs);
    if (o > most) {
      most = o;
      best = turn.speaker;
    }
  }
  return best;
}

/**
 * Every token labelled, two distinct labels "1" and "2", the kal and slt voices under different labels; returns the
 * share of tokens under the label most tokens of their voice carry.
 */
export function twoSpeakerShare(tokens: LabelledToken[], turns: readonly ReferenceTurn[]): number {
  expect(tokens.length).toBeGreaterThan(10);
  expect(tokens.every((t) => typeof t.speaker === 'string')).toBe(true);
  expect(tokens[0]!.speaker).toBe('1');
  expect(new Set(tokens.map((t) => t.speaker))).toEqual(new Set(['1', '2']));
  const votes = new Map<string, Map<string, number>>();
  for (const t of tokens) {
    const who = trueSpeaker(t, turns);
    const v = votes.get(who) ?? new Map<string, number>();
    v.set(t.speaker!, (v.get(t.speaker!) ?? 0) + 1);
    votes.set(who, v);
  }
  const majority = (who: string) => [...votes.get(who)!.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  expect(majority('kal')).not.toBe(majority('slt'));
  return tokens.filter((t) => t.speaker === majority(trueSpeaker(t, turns))).length / tokens.length;
}
