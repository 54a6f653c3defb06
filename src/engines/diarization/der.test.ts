import { describe, expect, it } from 'vitest';
import { diarizationErrorRate, maxWeightAssignment } from './der.js';

const ref = [
  { startMs: 0, endMs: 10_000, speaker: 'A' },
  { startMs: 10_000, endMs: 20_000, speaker: 'B' },
];

describe('diarizationErrorRate', () => {
  it('is 0 for a perfect hypothesis whatever the hypothesis names its speakers', () => {
    const r = diarizationErrorRate(ref, [
      { startMs: 0, endMs: 10_000, speaker: 7 },
      { startMs: 10_000, endMs: 20_000, speaker: 3 },
    ]);
    expect(r.der).toBe(0);
    expect(r.mapping.get('7')).toBe('A');
    expect(r.mapping.get('3')).toBe('B');
  });

  it('counts missed speech, false alarm and confusion outside the 250 ms collar', () => {
    // Hypothesis: A right for 0–8 s, nothing 8–10 s (missed), B's turn split: 10–15 s labelled as A's speaker
    // (confusion), 15–20 s right, plus speech at 20–22 s that is not in the reference (false alarm).
    const r = diarizationErrorRate(ref, [
      { startMs: 0, endMs: 8_000, speaker: 'x' },
      { startMs: 10_000, endMs: 15_000, speaker: 'x' },
      { startMs: 15_000, endMs: 22_000, speaker: 'y' },
    ]);
    // Collar: ±250 ms around 0, 10 000 and 20 000 ms → 250 + 500 + 250 ms of reference not scored.
    expect(r.referenceMs).toBe(19_000);
    expect(r.missedMs).toBe(1_750); // 8 000–9 750
    expect(r.confusionMs).toBe(4_750); // 10 250–15 000
    expect(r.falseAlarmMs).toBe(1_750); // 20 250–22 000
    expect(r.der).toBeCloseTo((1_750 + 4_750 + 1_750) / 19_000, 6);
  });

  it('scores without a collar when asked and counts extra hypothesis speakers as confusion', () => {
    const r = diarizationErrorRate(
      ref,
      [
        { startMs: 0, endMs: 5_000, speaker: 1 },
        { startMs: 5_000, endMs: 10_000, speaker: 2 },
        { startMs: 10_000, endMs: 20_000, speaker: 3 },
      ],
      0,
    );
    expect(r.referenceMs).toBe(20_000);
    expect(r.confusionMs).toBe(5_000);
    expect(r.der).toBeCloseTo(0.25, 6);
  });

  it('is 1 when nothing is found', () => {
    expect(diarizationErrorRate(ref, []).der).toBe(1);
  });
});

describe('maxWeightAssignment', () => {
  it('finds the optimal one-to-one mapping where greedy choice would not', () => {
    // Greedy takes 9 (row 0 → col 0) and then has 1; optimal is 8 + 8.
    expect(
      maxWeightAssignment([
        [9, 8],
        [8, 1],
      ]),
    ).toEqual([1, 0]);
  });

  it('handles more rows than columns', () => {
    expect(maxWeightAssignment([[1], [5], [3]])).toEqual([-1, 0, -1]);
  });
});
