// A speaker (or a stretch of speech) as two independent Gaussians: 12 MFCCs over all its speech frames, and the
// pitch over its voiced frames. Their ΔBICs add up (independent streams), so pitch separates a low from a high voice
// even where the spectral envelopes are alike.
import { deltaBic, GaussianModel, GaussianStats } from './gaussian.js';
import { SPEAKER_FEATURE_DIM, type SpeakerFrame } from './speech-frames.js';

/** Voiced frames each side needs before its pitch enters the decision. */
const MIN_PITCH_FRAMES = 20;

export class SpeakerStats {
  constructor(
    readonly spectral = new GaussianStats(SPEAKER_FEATURE_DIM),
    readonly pitch = new GaussianStats(1),
  ) {}

  get n(): number {
    return this.spectral.n;
  }

  add(frame: SpeakerFrame): void {
    this.spectral.add(frame.features);
    if (frame.pitch !== undefined) this.pitch.add([frame.pitch]);
  }

  merge(other: SpeakerStats): this {
    this.spectral.merge(other.spectral);
    this.pitch.merge(other.pitch);
    return this;
  }
}

/** ΔBIC of keeping a and b apart (> 0: different speakers). */
export function speakerBic(a: SpeakerStats, b: SpeakerStats, lambda: number): number {
  const pitch = a.pitch.n >= MIN_PITCH_FRAMES && b.pitch.n >= MIN_PITCH_FRAMES ? deltaBic(a.pitch, b.pitch, lambda) : 0;
  return deltaBic(a.spectral, b.spectral, lambda) + pitch;
}

/** Frame scorer for resegmentation. */
export class SpeakerModel {
  private readonly spectral: GaussianModel;
  private readonly pitch: GaussianModel | undefined;

  constructor(stats: SpeakerStats) {
    this.spectral = new GaussianModel(stats.spectral);
    this.pitch = stats.pitch.n >= MIN_PITCH_FRAMES ? new GaussianModel(stats.pitch) : undefined;
  }

  logLikelihood(frame: SpeakerFrame): number {
    const p = frame.pitch !== undefined && this.pitch ? this.pitch.logLikelihood([frame.pitch]) : 0;
    return this.spectral.logLikelihood(frame.features) + p;
  }
}
