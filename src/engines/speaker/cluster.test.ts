import { describe, expect, it } from 'vitest';
import { clusterEmbeddings, cosine, unit } from './cluster.js';

/** A point near `centre` (a few percent of noise per axis, from a fixed seed). */
function near(centre: number[], seed: number): number[] {
  let x = seed * 7919 + 1;
  const rand = () => ((x = (x * 48271) % 2147483647) / 2147483647) * 2 - 1;
  return centre.map((c) => c + 0.05 * rand());
}

const A = [1, 0, 0, 0];
const B = [0, 1, 0, 0];
const C = [0, 0, 1, 0];

describe('cosine and unit', () => {
  it('measure direction only', () => {
    expect(cosine([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosine([1, 0], [0, 3])).toBe(0);
    expect(cosine([1, 0], [-1, 0])).toBe(-1);
    expect(cosine([0, 0], [1, 0])).toBe(0);
    const u = unit([3, 4]);
    expect(u[0]).toBeCloseTo(0.6, 12);
    expect(u[1]).toBeCloseTo(0.8, 12);
    expect([...unit([0, 0])]).toEqual([0, 0]);
  });
});

describe('clusterEmbeddings', () => {
  it('finds the speaker count: alternating voices get two labels, numbered in order of first appearance', () => {
    const points = [B, A, B, A, A, B].map((c, i) => near(c, i));
    expect(clusterEmbeddings(points, { threshold: 0.5 })).toEqual([0, 1, 0, 1, 1, 0]);
    expect(
      clusterEmbeddings(
        [A, B, C, A, C].map((c, i) => near(c, i)),
        { threshold: 0.5 },
      ),
    ).toEqual([0, 1, 2, 0, 2]);
  });

  it('one voice throughout is one speaker; everything apart is as many speakers as points', () => {
    expect(
      clusterEmbeddings(
        [0, 1, 2, 3, 4].map((i) => near(A, i)),
        { threshold: 0.5 },
      ),
    ).toEqual([0, 0, 0, 0, 0]);
    expect(clusterEmbeddings([A, B, C], { threshold: 0.5 })).toEqual([0, 1, 2]);
    expect(clusterEmbeddings([], { threshold: 0.5 })).toEqual([]);
    expect(clusterEmbeddings([A], { threshold: 0.5 })).toEqual([0]);
  });

  it('the threshold decides: similar voices are one speaker under a low threshold, two under a high one', () => {
    const close = [
      [1, 0.3],
      [0.3, 1],
      [1, 0.35],
      [0.35, 1],
    ];
    // the two directions have cosine ~0.55
    expect(clusterEmbeddings(close, { threshold: 0.5 })).toEqual([0, 0, 0, 0]);
    expect(clusterEmbeddings(close, { threshold: 0.7 })).toEqual([0, 1, 0, 1]);
  });

  it('scale does not matter (cosine); linkage is the average similarity, weighted', () => {
    expect(
      clusterEmbeddings(
        [
          [10, 0],
          [0, 0.1],
          [0.2, 0],
          [0, 50],
        ],
        { threshold: 0.5 },
      ),
    ).toEqual([0, 1, 0, 1]);
    // [1, 0.9] is nearer [1, 0] (0.74) than [0, 1] (0.67): it joins the first, and the pair averages 0.33 to [0, 1]
    expect(
      clusterEmbeddings(
        [
          [1, 0],
          [0, 1],
          [1, 0.9],
        ],
        { threshold: 0.6 },
      ),
    ).toEqual([0, 1, 0]);
    // [1, 1] is 0.71 from both sides; a heavy [1, 0] brings the pair's average to [0, 1] under 0.3, a light one not
    const points = [
      [1, 0],
      [1, 1],
      [0, 1],
    ];
    expect(clusterEmbeddings(points, { threshold: 0.3 }, [10, 1, 1])).toEqual([0, 0, 1]);
    expect(clusterEmbeddings(points, { threshold: 0.3 }, [1, 1, 1])).toEqual([0, 0, 0]);
  });

  it('a speaker with less than minWeight joins the most similar one', () => {
    const points = [A, A, B, A, C].map((c, i) => near(c, i));
    const weights = [1500, 1500, 1500, 1500, 400];
    expect(clusterEmbeddings(points, { threshold: 0.5 }, weights)).toEqual([0, 0, 1, 0, 2]);
    const folded = clusterEmbeddings(points, { threshold: 0.5, minWeight: 1000 }, weights);
    expect(folded.slice(0, 4)).toEqual([0, 0, 1, 0]);
    expect([0, 1]).toContain(folded[4]);
    // a lone speaker is never folded away
    expect(clusterEmbeddings([near(A, 1)], { threshold: 0.5, minWeight: 1e9 }, [10])).toEqual([0]);
    // below minWeight on both sides: they still end as one
    expect(new Set(clusterEmbeddings([A, B], { threshold: 0.5, minWeight: 1e9 }))).toEqual(new Set([0]));
  });

  it('minClusters and maxClusters bound the count: the most similar pairs merge, the least similar stay apart', () => {
    // [0.8, 0.6] is 0.8 from [1, 0] and 0.6 from [0, 1]
    const points = [
      [1, 0],
      [0.8, 0.6],
      [0, 1],
    ];
    expect(clusterEmbeddings(points, { threshold: 0.9 })).toEqual([0, 1, 2]);
    expect(clusterEmbeddings(points, { threshold: 0.9, maxClusters: 2 })).toEqual([0, 0, 1]);
    expect(clusterEmbeddings(points, { threshold: 0.9, maxClusters: 1 })).toEqual([0, 0, 0]);
    expect(clusterEmbeddings(points, { threshold: 0.9, maxClusters: 3 })).toEqual([0, 1, 2]);
    // the first two together average 0.3 to the third
    expect(clusterEmbeddings(points, { threshold: 0.2 })).toEqual([0, 0, 0]);
    expect(clusterEmbeddings(points, { threshold: 0.2, minClusters: 2 })).toEqual([0, 0, 1]);
    expect(clusterEmbeddings(points, { threshold: 0.2, minClusters: 3, maxClusters: 3 })).toEqual([0, 1, 2]);
    // more than there are points: one each
    expect(clusterEmbeddings(points, { threshold: 0.2, minClusters: 5 })).toEqual([0, 1, 2]);
    // a bound that does not bind changes nothing
    const voices = [B, A, B, A, A, B].map((c, i) => near(c, i));
    expect(clusterEmbeddings(voices, { threshold: 0.5, minClusters: 2, maxClusters: 2 })).toEqual([0, 1, 0, 1, 1, 0]);
  });

  it('the bounds count speakers, not fragments lighter than minWeight', () => {
    // Two voices with 3 s each, and a 0.3 s fragment nearer the first (0.5) than the second (0.3); the voices are
    // 0.6 apart, more similar than the fragment is to either.
    const V = [1, 0, 0];
    const W = [0.6, 0.8, 0];
    const F = [0.5, 0, 0.866];
    const points = [V, V, W, W, F].map((c, i) => near(c, i));
    const weights = [1500, 1500, 1500, 1500, 300];
    // min 2 with everything above the threshold: the voices stay apart and the fragment joins the first
    expect(clusterEmbeddings(points, { threshold: -1, minWeight: 1000, minClusters: 2 }, weights)).toEqual([0, 0, 1, 1, 0]);
    // max 2 when the threshold keeps all three apart: the fragment is folded first, so the voices stay two
    expect(clusterEmbeddings(points, { threshold: 0.9, minWeight: 1000 }, weights)).toEqual([0, 0, 1, 1, 0]);
    expect(clusterEmbeddings(points, { threshold: 0.9, minWeight: 1000, maxClusters: 2 }, weights)).toEqual([0, 0, 1, 1, 0]);
    // without minWeight the fragment counts as a speaker: min 3 keeps it
    expect(clusterEmbeddings(points, { threshold: -1, minClusters: 3 }, weights)).toEqual([0, 0, 1, 1, 2]);
  });

  // Every window in its speaker's cluster (how long it takes is for a benchmark, not a test).
  it('clusters 2400 windows of 192 values (an hour of speech)', () => {
    const dims = 192;
    const centres = [0, 1, 2].map((k) => Array.from({ length: dims }, (_, i) => (i % 3 === k ? 1 : 0)));
    const points = Array.from({ length: 2400 }, (_, i) => near(centres[Math.floor(i / 100) % 3]!, i));
    const labels = clusterEmbeddings(points, { threshold: 0.5 });
    expect(new Set(labels)).toEqual(new Set([0, 1, 2]));
    labels.forEach((l, i) => expect(l).toBe(Math.floor(i / 100) % 3));
  }, 30_000);
});
