// Full-covariance Gaussian models of feature frames, kept as sufficient statistics (count, sum, sum of outer
// products) so two models merge by adding them, and the Bayesian information criterion that decides whether two
// stretches of speech come from one speaker (Chen & Gopalakrishnan, 1998):
//
//   ΔBIC = N/2·log|Σ| − N₁/2·log|Σ₁| − N₂/2·log|Σ₂| − λ·P,   P = ½·(d + d(d+1)/2)·log N
//
// ΔBIC > 0: two Gaussians explain the frames better than one even after paying for the extra parameters, so they
// are different speakers. The log-determinant is a d×d Cholesky factorisation (d = 12 here): a dozen lines that do
// not justify a linear-algebra dependency.

export class GaussianStats {
  n = 0;
  readonly sum: Float64Array;
  /** Upper triangle of Σ x·xᵀ, row-major (i ≤ j). */
  readonly outer: Float64Array;

  constructor(readonly dim: number) {
    this.sum = new Float64Array(dim);
    this.outer = new Float64Array((dim * (dim + 1)) / 2);
  }

  add(x: ArrayLike<number>): void {
    const d = this.dim;
    this.n++;
    let k = 0;
    for (let i = 0; i < d; i++) {
      const xi = x[i]!;
      this.sum[i]! += xi;
      for (let j = i; j < d; j++) this.outer[k++]! += xi * x[j]!;
    }
  }

  /** this += other. */
  merge(other: GaussianStats): this {
    this.n += other.n;
    for (let i = 0; i < this.sum.length; i++) this.sum[i]! += other.sum[i]!;
    for (let i = 0; i < this.outer.length; i++) this.outer[i]! += other.outer[i]!;
    return this;
  }

  clone(): GaussianStats {
    return new GaussianStats(this.dim).merge(this);
  }

  static sum(a: GaussianStats, b: GaussianStats): GaussianStats {
    return a.clone().merge(b);
  }

  mean(): Float64Array {
    return this.sum.map((s) => s / Math.max(1, this.n));
  }

  /** Maximum-likelihood covariance (full, d×d), with a small ridge so short stretches stay invertible. */
  covariance(): Float64Array {
    const d = this.dim;
    const mu = this.mean();
    const cov = new Float64Array(d * d);
    let k = 0;
    for (let i = 0; i < d; i++)
      for (let j = i; j < d; j++) {
        const c = this.outer[k++]! / Math.max(1, this.n) - mu[i]! * mu[j]!;
        cov[i * d + j] = c;
        cov[j * d + i] = c;
      }
    for (let i = 0; i < d; i++) cov[i * d + i]! += RIDGE;
    return cov;
  }

  logDetCovariance(): number {
    return logDet(this.covariance(), this.dim);
  }
}

/** Added to the covariance diagonal: features are standardised, so this is 1 % of a unit variance. */
const RIDGE = 0.01;

/** Lower Cholesky factor of a symmetric positive-definite d×d matrix (row-major), or undefined if it is not. */
export function cholesky(a: Float64Array, d: number): Float64Array | undefined {
  const l = new Float64Array(d * d);
  for (let i = 0; i < d; i++)
    for (let j = 0; j <= i; j++) {
      let s = a[i * d + j]!;
      for (let k = 0; k < j; k++) s -= l[i * d + k]! * l[j * d + k]!;
      if (i === j) {
        if (!(s > 0)) return undefined;
        l[i * d + i] = Math.sqrt(s);
      } else l[i * d + j] = s / l[j * d + j]!;
    }
  return l;
}

/** log|A| of a symmetric positive-definite matrix. */
export function logDet(a: Float64Array, d: number): number {
  const l = cholesky(a, d);
  if (!l) return -Infinity;
  let s = 0;
  for (let i = 0; i < d; i++) s += 2 * Math.log(l[i * d + i]!);
  return s;
}

/** ΔBIC of keeping a and b apart; > 0 means different speakers. `lambda` scales the model-size penalty. */
export function deltaBic(a: GaussianStats, b: GaussianStats, lambda: number): number {
  const d = a.dim;
  const n = a.n + b.n;
  const merged = GaussianStats.sum(a, b);
  const penalty = 0.5 * (d + (d * (d + 1)) / 2) * Math.log(n);
  return 0.5 * (n * merged.logDetCovariance() - a.n * a.logDetCovariance() - b.n * b.logDetCovariance()) - lambda * penalty;
}

/** A Gaussian ready to score frames: mean and the Cholesky factor of its covariance. */
export class GaussianModel {
  private readonly mu: Float64Array;
  private readonly l: Float64Array;
  private readonly constant: number;

  constructor(stats: GaussianStats) {
    const d = stats.dim;
    this.mu = stats.mean();
    this.l = cholesky(stats.covariance(), d)!;
    let logDetL = 0;
    for (let i = 0; i < d; i++) logDetL += Math.log(this.l[i * d + i]!);
    this.constant = -0.5 * d * Math.log(2 * Math.PI) - logDetL;
  }

  /** Log-likelihood of one frame. */
  logLikelihood(x: ArrayLike<number>): number {
    const d = this.mu.length;
    // Solve L·z = x − μ; the Mahalanobis distance is |z|².
    const z = new Float64Array(d);
    let m = 0;
    for (let i = 0; i < d; i++) {
      let s = x[i]! - this.mu[i]!;
      for (let k = 0; k < i; k++) s -= this.l[i * d + k]! * z[k]!;
      z[i] = s / this.l[i * d + i]!;
      m += z[i]! * z[i]!;
    }
    return this.constant - 0.5 * m;
  }
}
