// Types of the native addon (native/pocketsphinx/src/addon.cc) and how to find it.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineUnavailableError } from '../interface.js';

export interface NativeSegment {
  /** Dictionary word, including fillers (<s>, </s>, <sil>, [NOISE]) and alternate-pronunciation marks ("the(2)"). */
  word: string;
  /** First and last 10 ms frame of the word, relative to the utterance start (inclusive). */
  startFrame: number;
  endFrame: number;
  /** Posterior probability in [0, 1]; 1 for partial results. */
  prob: number;
}

export interface NativeDecoderOptions {
  hmm: string;
  lm: string;
  dict: string;
  /** Extra command-line style arguments: { '-beam': '1e-40' }. */
  args?: Record<string, string>;
}

export interface NativeDecoder {
  /**
   * Start an unrelated stream: resets the front end's noise-removal statistics (otherwise carried from one utterance
   * to the next, so results would depend on what the decoder heard before) and its frame counter.
   */
  startStream(): void;
  startUtt(): void;
  /** Feed s16le 16 kHz mono samples; returns the number of frames searched. */
  processRaw(samples: Int16Array | Uint8Array, options?: { noSearch?: boolean; fullUtt?: boolean }): number;
  endUtt(): void;
  hypothesis(): { text: string; score: number } | null;
  segments(): NativeSegment[];
  /** pocketsphinx's own VAD state (only meaningful with -remove_silence yes). */
  inSpeech(): boolean;
  frames(): number;
  /** Reset the live cepstral mean to its initial value (start of a new, unrelated session). */
  resetCmn(): void;
  /**
   * Decode with the model's language model interpolated with the ARPA model at `lm` (its share `weight`), after adding
   * `words` the dictionary lacks; null: the model's own language model. The biased searches of the last `keep` keys
   * (default 1; about 40 MB each) are kept, so a key seen again costs nothing.
   */
  setBias(bias: { key: string; words: [string, string][]; lm: string; weight: number; keep?: number } | null): void;
  /** The model's own language model again, and the kept biased searches freed. */
  dropBias(): void;
  /**
   * Adapt the acoustic model with the MLLR transform in `path` (sphinxtrain's format; an identity transform restores
   * the model). Applied to the model's original means each time, so transforms never compound; same path: no-op.
   */
  setMllr(path: string): void;
  /** Key of the bias in use, or null. */
  biasKey(): string | null;
  free(): void;
}

export interface NativeAddon {
  Decoder: new (options: NativeDecoderOptions) => NativeDecoder;
  libraryVersion: string;
}

const ADDON_RELATIVE = join('native', 'pocketsphinx', 'build', 'Release', 'pocketsphinx.node');

/** The checkout or package this module runs from (src/… or dist/…): the directory holding native/pocketsphinx. */
export function projectRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'native', 'pocketsphinx', 'binding.gyp'))) return dir;
    if (dirname(dir) === dir) return undefined;
    dir = dirname(dir);
  }
}

/**
 * Locate the compiled addon: the given path, else the one under the project root (projectRoot). Throws
 * EngineUnavailableError with the build command when it is not built.
 */
export function findAddon(explicit?: string): string {
  if (explicit !== undefined) {
    const p = resolve(explicit);
    if (!existsSync(p)) throw new EngineUnavailableError(`pocketsphinx addon not found at ${p}`, 'run `npm run build:native`');
    return p;
  }
  const root = projectRoot();
  if (root && existsSync(join(root, ADDON_RELATIVE))) return join(root, ADDON_RELATIVE);
  throw new EngineUnavailableError(
    'pocketsphinx addon is not built',
    'run `npm run build:native`; it needs the Debian packages libpocketsphinx-dev, libsphinxbase-dev, pkg-config and a C++ compiler',
  );
}

export function loadAddon(path: string): NativeAddon {
  return createRequire(import.meta.url)(path) as NativeAddon;
}
