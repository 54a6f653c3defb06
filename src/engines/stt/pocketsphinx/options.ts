// Options of the pocketsphinx engine, with defaults pointing at Debian's packages:
//   pocketsphinx-en-us       → /usr/share/pocketsphinx/model/en-us/{en-us/, en-us.lm.bin, cmudict-en-us.dict}
//   libpocketsphinx-dev etc. → the addon built by `npm run build:native` (native/pocketsphinx/build/Release)
// Paths are checked when a model is loaded, and a missing file is reported with the package that provides it.
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EngineUnavailableError } from '../interface.js';

export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export interface PocketsphinxModelPaths {
  /** Acoustic model directory (-hmm). */
  hmm: string;
  /** Language model (-lm), ARPA or binary. */
  lm: string;
  /** Pronunciation dictionary (-dict). */
  dict: string;
}

export interface PocketsphinxOptions {
  /** Model files per engine model key; default: { 'en-us': Debian's pocketsphinx-en-us }. */
  models?: Record<string, Partial<PocketsphinxModelPaths>>;
  /** Decoders (one per worker thread) per loaded model; default: the number of cores. */
  poolSize?: number;
  /** Extra pocketsphinx arguments, e.g. { '-beam': '1e-40' }. */
  decoderArgs?: Record<string, string>;
  /** Path of the compiled addon; default: found by walking up to native/pocketsphinx/build/Release. */
  addonPath?: string;
  /** Batch decoding: longest utterance handed to the decoder at once, ms (default 20 000). */
  maxUtteranceMs?: number;
  /** Streaming defaults (a session can override them). */
  endpointSilenceMs?: number;
  partialIntervalMs?: number;
}

export interface ResolvedPocketsphinxOptions {
  models: Record<string, PocketsphinxModelPaths>;
  poolSize: number;
  decoderArgs: Record<string, string>;
  addonPath: string | undefined;
  maxUtteranceMs: number;
  endpointSilenceMs: number;
  partialIntervalMs: number;
}

export function defaultModelPaths(dir = DEBIAN_MODEL_DIR): PocketsphinxModelPaths {
  return { hmm: join(dir, 'en-us'), lm: join(dir, 'en-us.lm.bin'), dict: join(dir, 'cmudict-en-us.dict') };
}

/**
 * Arguments every decoder gets. -remove_silence no keeps one decoder frame per 10 ms of input, which the word timings
 * rely on (with silence removal the frame numbers skip the removed audio).
 */
export const BASE_DECODER_ARGS: Readonly<Record<string, string>> = { '-remove_silence': 'no' };

export function resolvePocketsphinxOptions(options: PocketsphinxOptions = {}): ResolvedPocketsphinxOptions {
  const models: Record<string, PocketsphinxModelPaths> = {};
  const given = options.models ?? { 'en-us': {} };
  for (const [key, paths] of Object.entries(given)) models[key] = { ...defaultModelPaths(), ...paths };
  const poolSize = options.poolSize ?? availableParallelism();
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new RangeError(`pocketsphinx poolSize must be a positive integer, got ${poolSize}`);
  const decoderArgs = { ...BASE_DECODER_ARGS, ...options.decoderArgs };
  if ((decoderArgs['-frate'] ?? '100') !== '100' || (decoderArgs['-samprate'] ?? '16000') !== '16000') {
    throw new RangeError('pocketsphinx -frate and -samprate are fixed at 100 and 16000');
  }
  return {
    models,
    poolSize,
    decoderArgs,
    addonPath: options.addonPath,
    maxUtteranceMs: options.maxUtteranceMs ?? 20_000,
    endpointSilenceMs: options.endpointSilenceMs ?? 600,
    partialIntervalMs: options.partialIntervalMs ?? 200,
  };
}

const HMM_FILES = ['mdef', 'means', 'variances', 'transition_matrices', 'noisedict'];

/**
 * Throws EngineUnavailableError naming every missing model file. pocketsphinx itself would report some of these by
 * exiting the whole process (E_FATAL), so they are checked before a decoder is created.
 */
export function checkModelFiles(paths: PocketsphinxModelPaths): void {
  const missing: string[] = [];
  if (!isDir(paths.hmm)) missing.push(`acoustic model directory ${paths.hmm}`);
  else {
    for (const f of HMM_FILES) if (!isFile(join(paths.hmm, f))) missing.push(join(paths.hmm, f));
    if (!isFile(join(paths.hmm, 'sendump')) && !isFile(join(paths.hmm, 'mixture_weights'))) {
      missing.push(`${join(paths.hmm, 'sendump')} (or mixture_weights)`);
    }
  }
  if (!isFile(paths.lm)) missing.push(`language model ${paths.lm}`);
  if (!isFile(paths.dict)) missing.push(`dictionary ${paths.dict}`);
  if (missing.length > 0) {
    throw new EngineUnavailableError(
      `pocketsphinx model files not found: ${missing.join(', ')}`,
      'install the Debian package pocketsphinx-en-us, or point the engine options at a model',
    );
  }
}

function isFile(p: string): boolean {
  return existsSync(p) && statSync(p).isFile();
}

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}
