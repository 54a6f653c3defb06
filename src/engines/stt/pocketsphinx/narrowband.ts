// Narrowband adaptation: telephone audio (sampled at 8 kHz) decoded with an MLLR transform of the acoustic model's
// means. Debian's en-us model is trained on 16 kHz speech; 8 kHz audio resampled for it lacks everything above 4 kHz,
// and that mismatch alone costs about a third of the words (docs/benchmarks.md). `make setup` estimates a transform
// for that channel from the tuning half of Debian's real 8 kHz recordings (scripts/adapt-narrowband.mts); the batch
// decoders apply it to each segment whose spectrum is narrowband and an identity transform to every other one, so a
// decoder serves both kinds of audio without reloading.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { highBandShare } from '../../../audio/bandwidth.js';
import { projectRoot } from './addon.js';

/** Where `make setup` writes the transform for Debian's en-us model. */
export const NARROWBAND_TRANSFORM_RELATIVE = join('build', 'adaptation', 'en-us-narrowband.mllr');

/**
 * A segment whose loudest frames hold less than this share of their power above 4.3 kHz is narrowband: resampled
 * 8 kHz recordings measure 1e-9 to 2e-5, wideband speech 7.5e-5 and up (Debian's recordings; bandwidth.test.ts).
 */
export const NARROWBAND_MAX_HIGH_BAND_SHARE = 4e-5;

export interface NarrowbandAdaptation {
  /** MLLR transform applied to narrowband segments. */
  transform: string;
  /** Identity transform of the same shape: the model as it is, for every other segment. */
  identity: string;
}

/** The transform `make setup` built, if it did. */
export function builtNarrowbandTransform(): string | undefined {
  const root = projectRoot();
  const file = root && join(root, NARROWBAND_TRANSFORM_RELATIVE);
  return file && existsSync(file) ? file : undefined;
}

/**
 * An identity transform shaped like `transform` (same classes, streams and vector lengths), written once to the
 * temporary directory. Throws with the file named when `transform` is not an MLLR file.
 */
export function identityTransformFor(transform: string): string {
  const text = readFileSync(transform, 'utf8');
  const numbers = text.split(/\s+/).filter(Boolean).map(Number);
  const classes = numbers[0];
  const streams = numbers[1];
  if (!classes || !streams || numbers.some((n) => !Number.isFinite(n))) throw new Error(`${transform} is not an MLLR transform (mllr_solve's output)`);
  const lines: string[] = [String(classes), String(streams)];
  let at = 2;
  for (let c = 0; c < classes; c++) {
    for (let s = 0; s < streams; s++) {
      const n = numbers[at];
      if (!n || at + 1 + n * (n + 2) > numbers.length) throw new Error(`${transform} is not an MLLR transform (mllr_solve's output)`);
      lines.push(String(n));
      for (let r = 0; r < n; r++) lines.push(Array.from({ length: n }, (_, k) => (k === r ? '1.0' : '0.0')).join(' '));
      lines.push(new Array<string>(n).fill('0.0').join(' '));
      lines.push(new Array<string>(n).fill('1.0').join(' '));
      at += 1 + n * (n + 2);
    }
  }
  const body = lines.join('\n') + '\n';
  const file = join(tmpdir(), `parlance-identity-${createHash('sha256').update(body).digest('hex').slice(0, 16)}.mllr`);
  if (!existsSync(file)) writeFileSync(file, body);
  return file;
}

/** The transform for one segment of 16 kHz samples. */
export function transformFor(samples: Int16Array, adaptation: NarrowbandAdaptation): string {
  const share = highBandShare(samples);
  return share < NARROWBAND_MAX_HIGH_BAND_SHARE ? adaptation.transform : adaptation.identity;
}

/** PARLANCE_STT_NARROWBAND_ADAPTATION (`auto`, `off` or a path) as the engine's `narrowbandTransform` option. */
export function narrowbandOption(setting: string): { narrowbandTransform?: string | false } {
  if (setting === 'auto' || setting === '') return {};
  return { narrowbandTransform: setting === 'off' ? false : setting };
}
