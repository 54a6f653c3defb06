// Agglomerative clustering of speaker embeddings by cosine similarity, with the speaker count left open: clusters
// merge while their similarity reaches the threshold. Linkage is the (weighted) average similarity between the
// members of two clusters, so one odd window cannot pull two voices together. Average linkage never makes a merged
// cluster more similar to a third than its parts were, so the nearest-neighbour chain finds the same clusters as
// "merge the most similar pair first" in O(n²) instead of O(n³): an hour of 1.5 s windows (~2400) clusters in
// about a second. Still a second: callers run it on the speaker-embedding worker thread.
// Bounds on the count: with minClusters the chain's merges are replayed most similar first (the order of "most
// similar pair first", by the same property), skipping those that would join two clusters of minWeight once only
// minClusters such are left; with maxClusters the most similar clusters merge after the fold until no more are left.

export interface ClusterOptions {
  /** Clusters this similar (cosine, -1..1) or more are one speaker. */
  threshold: number;
  /**
   * A cluster whose weight (speech, ms) stays under this joins its most similar cluster: a laugh or a cough is
   * more likely an odd stretch of a known voice than another person. 0: keep every cluster.
   */
  minWeight?: number;
  /**
   * At least this many clusters when there are this many embeddings: two clusters of minWeight each no longer merge
   * once there are only this many such, merging stops at this many clusters, and so does the fold of light ones.
   */
  minClusters?: number;
  /** At most this many clusters: after the fold, the most similar pair merges, whatever its similarity, until then. */
  maxClusters?: number;
}

/** Embedding scaled to length 1 (a zero vector stays zero). */
export function unit(v: ArrayLike<number>): Float64Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  return Float64Array.from(v as ArrayLike<number>, (x) => x * s);
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? d / Math.sqrt(na * nb) : 0;
}

/**
 * Cluster number per embedding (0, 1, ... in order of first appearance). `weights` (default 1 each) weigh each
 * member in its cluster's average and count towards minWeight.
 */
export function clusterEmbeddings(embeddings: readonly ArrayLike<number>[], options: ClusterOptions, weights?: readonly number[]): number[] {
  const n = embeddings.length;
  if (n === 0) return [];
  const mass = Array.from({ length: n }, (_, i) => weights?.[i] ?? 1);
  // Similarity matrix, kept up to date for clusters (slot = the cluster's first member merged into).
  const units = embeddings.map(unit);
  const sim = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    const a = units[i]!;
    for (let j = i + 1; j < n; j++) {
      const b = units[j]!;
      let d = 0;
      for (let k = 0; k < a.length; k++) d += a[k]! * b[k]!;
      sim[i * n + j] = sim[j * n + i] = d;
    }
  }
  const members: number[][] = embeddings.map((_, i) => [i]);
  /** Not merged into another cluster. */
  const alive = new Array<boolean>(n).fill(true);
  /** Still looking for a partner (alive and with one at the threshold, as far as known). */
  const open = new Array<boolean>(n).fill(true);

  const merge = (into: number, from: number) => {
    const wi = mass[into]!;
    const wf = mass[from]!;
    for (let k = 0; k < n; k++) {
      if (!alive[k] || k === into || k === from) continue;
      const s = (wi * sim[into * n + k]! + wf * sim[from * n + k]!) / (wi + wf);
      sim[into * n + k] = sim[k * n + into] = s;
    }
    mass[into] = wi + wf;
    members[into]!.push(...members[from]!);
    alive[from] = open[from] = false;
  };
  /** The most similar cluster to `a` among `among`; `prefer` wins ties (keeps the chain from cycling). */
  const nearestOf = (a: number, among: boolean[], prefer?: number): { b: number; s: number } => {
    let b = -1;
    let s = -Infinity;
    for (let k = 0; k < n; k++) {
      if (!among[k] || k === a) continue;
      const v = sim[a * n + k]!;
      if (v > s || (v === s && k === prefer)) {
        s = v;
        b = k;
      }
    }
    return { b, s };
  };

  /** Merges (a, b, similarity) of the nearest-neighbour chain down to `threshold`, made as it finds them. */
  const runChain = (threshold: number, made?: { a: number; b: number; s: number }[]) => {
    const chain: number[] = [];
    let next = 0;
    for (;;) {
      if (chain.length === 0) {
        while (next < n && !open[next]) next++;
        if (next >= n) break;
        chain.push(next);
      }
      const a = chain[chain.length - 1]!;
      const { b, s } = nearestOf(a, open, chain[chain.length - 2]);
      if (b < 0 || s < threshold) {
        // Nobody similar enough, now or later (a merge is never more similar than its parts): a is final.
        open[a] = false;
        chain.pop();
      } else if (b === chain[chain.length - 2]) {
        chain.length -= 2;
        made?.push({ a, b, s });
        merge(Math.min(a, b), Math.max(a, b));
      } else chain.push(b);
    }
  };

  const minWeight = options.minWeight ?? 0;
  const minClusters = Math.min(options.minClusters ?? 1, n);
  const maxClusters = options.maxClusters ?? Infinity;
  if (minClusters <= 1) runChain(options.threshold);
  else {
    // The merges at the threshold, replayed most similar first (ties in the order they were made, which puts every
    // merge after those of its parts), except that two clusters of minWeight each stay apart once there are only
    // minClusters such: lighter ones still merge, or are folded below.
    const first = Float32Array.from(sim);
    const made: { a: number; b: number; s: number }[] = [];
    runChain(options.threshold, made);
    sim.set(first);
    for (let i = 0; i < n; i++) {
      mass[i] = weights?.[i] ?? 1;
      members[i] = [i];
      alive[i] = true;
    }
    const heavy = (c: number) => mass[c]! >= minWeight;
    let heavyCount = mass.filter((m) => m >= minWeight).length;
    let clusters = n;
    const root = Int32Array.from({ length: n }, (_, i) => i);
    const find = (x: number): number => {
      while (root[x] !== x) x = root[x] = root[root[x]!]!;
      return x;
    };
    for (const { a, b } of made.sort((x, y) => y.s - x.s)) {
      if (clusters <= minClusters) break;
      const [ra, rb] = [find(a), find(b)];
      const both = Number(heavy(ra)) + Number(heavy(rb));
      if (both === 2 && heavyCount <= minClusters) continue;
      const [into, from] = [Math.min(ra, rb), Math.max(ra, rb)];
      root[from] = into;
      merge(into, from);
      clusters--;
      heavyCount += Number(heavy(into)) - both;
    }
  }

  for (;;) {
    const clusters = [...alive.keys()].filter((k) => alive[k]);
    if (clusters.length < 2 || clusters.length <= minClusters) break;
    const small = clusters.filter((c) => mass[c]! < minWeight).sort((x, y) => mass[x]! - mass[y]!)[0];
    if (small === undefined) break;
    const { b } = nearestOf(small, alive);
    merge(Math.min(small, b), Math.max(small, b));
  }

  // Over maxClusters: the most similar pair merges, whatever its similarity, until there are no more (after the
  // fold, so that the clusters merged are speakers, not fragments).
  for (;;) {
    const clusters = [...alive.keys()].filter((k) => alive[k]);
    if (clusters.length <= maxClusters) break;
    let best = { a: -1, b: -1, s: -Infinity };
    for (const a of clusters) {
      const { b, s } = nearestOf(a, alive);
      if (s > best.s) best = { a, b, s };
    }
    merge(Math.min(best.a, best.b), Math.max(best.a, best.b));
  }

  const out = new Array<number>(n).fill(-1);
  let label = 0;
  const clusterOf = new Int32Array(n);
  alive.forEach((live, c) => {
    if (live) for (const m of members[c]!) clusterOf[m] = c;
  });
  const labels = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const c = clusterOf[i]!;
    if (!labels.has(c)) labels.set(c, label++);
    out[i] = labels.get(c)!;
  }
  return out;
}
