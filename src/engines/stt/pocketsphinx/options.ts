// Options of the pocketsphinx engine, with defaults pointing at Debian's packages:
//   pocketsphinx-en-us       → /usr/share/pocketsphinx/model/en-us/{en-us/, en-us.lm.bin, cmudict-en-us.dict}
//   libpocketsphinx-dev etc. → the addon built by `npm run build:native` (native/pocketsphinx/build/Release)
// Paths are checked when a model is loaded, and a missing file is reported with the package that provides it.
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { VadBackend, VadLog } from '../../../audio/vad.js';
import { EngineUnavailableError } from '../interface.js';
import type { SegmenterOptions } from '../segmenter.js';
import type { RecognitionContext } from '../interface.js';
import type { SecondPassOptions, SecondPassPool } from '../second-pass.js';
import { DEFAULT_BIAS_WEIGHT } from './bias.js';
import type { PocketsphinxModelPaths } from './model-paths.js';
import { builtNarrowbandTransform, identityTransformFor, type NarrowbandAdaptation } from './narrowband.js';

export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export interface PocketsphinxModelConfig extends Partial<PocketsphinxModelPaths> {
  /** Most segments of this model decoded at once, i.e. its batch decoders (default: poolSize). */
  concurrency?: number;
}

export interface PocketsphinxOptions {
  /** Model files per engine model key; default: { 'en-us': Debian's pocketsphinx-en-us }. */
  models?: Record<string, PocketsphinxModelConfig>;
  /** Batch decoders (one per worker thread) per loaded model, unless the model sets `concurrency`; default: cores. */
  poolSize?: number;
  /**
   * Most segments of one transcription decoded at once (default: all the model's batch decoders, so a lone file uses
   * every core; 1 keeps each file on one decoder at a time).
   */
  maxSegmentsPerRequest?: number;
  /** Most live (streaming) sessions per model; each holds its own decoder (default: 8 × cores). */
  maxStreams?: number;
  /** A streaming decoder left idle this long is stopped, ms (default 300 000), except the warm spares. */
  streamIdleMs?: number;
  /**
   * Loaded streaming decoders kept idle for the next sessions once real-time use began (default 2 × cores, at most
   * maxStreams): a decoder takes about a second of CPU to load, which would otherwise land on a new session's
   * first tokens, and several at once when sessions arrive together.
   */
  warmStreams?: number;
  /** Extra pocketsphinx arguments, e.g. { '-beam': '1e-40' }. */
  decoderArgs?: Record<string, string>;
  /** Arguments of streaming decoders over decoderArgs (default STREAM_DECODER_ARGS; {} decodes streams like files). */
  streamDecoderArgs?: Record<string, string>;
  /** Arguments of live second passes' decoders over decoderArgs (default SECOND_PASS_DECODER_ARGS; {}: as files). */
  secondPassDecoderArgs?: Record<string, string>;
  /** Path of the compiled addon; default: found by walking up to native/pocketsphinx/build/Release. */
  addonPath?: string;
  /** Batch decoding: longest segment handed to the decoder at once, ms (default 20 000). */
  maxUtteranceMs?: number;
  /** Batch segmentation at pauses (see segmenter.ts); maxSegmentMs defaults to maxUtteranceMs. */
  segmentation?: SegmenterOptions;
  /** Voice activity detector for batch segmentation: Silero (default, falls back to energy) or energy. */
  vad?: { backend?: VadBackend; modelPath?: string };
  /** Operational messages (the VAD fallback); default: JSON lines on stderr. */
  log?: VadLog;
  /** Streaming defaults (a session can override them). */
  endpointSilenceMs?: number;
  partialIntervalMs?: number;
  /**
   * A live utterance older than `afterFraction` of the session's bound on non-final tokens ends at its first pause of
   * `pauseMs`: its words turn final at that pause rather than at the endpoint, and the bound's cut falls between words
   * (default CUT_AT_PAUSE: every 100 ms pause; false: only endpoints and the bound end utterances).
   */
  cutAtPause?: CutAtPause | false;
  /**
   * Live final tokens from a second, file-style decoding of each utterance (second-pass.ts); false: the streaming
   * decoder's own words. Defaults: budgetMs 15 000 per batch decoder, waitMs 1 500, coveredMs
   * BUILTIN_SECOND_PASS_COVERED_MS.
   */
  secondPass?: Partial<SecondPassOptions> | false;
  /**
   * In live utterances no second pass decodes, words ending this far behind the decoded audio turn final before the
   * utterance ends, ms (default 0: words turn final when their utterance ends; LIVE_SETTLE_MS says why).
   */
  settleMs?: number;
  /**
   * Second passes on another engine's file decoder (an offline sherpa-onnx model) instead of the batch pool; its
   * pool has its own budget and wait. Loaded with the model; if it cannot load, the batch pool serves (logged).
   */
  externalSecondPass?: () => Promise<SecondPassPool<RecognitionContext>>;
  /** Share of a request's context language model in the interpolation with the model's own (bias.ts; default 0.1). */
  contextWeight?: number;
  /**
   * MLLR transform for narrowband (8 kHz) audio in batch, streaming and second-pass decoding (narrowband.ts). Default: the
   * one `make setup` built for Debian's en-us model, used with that model only; a path: used with every model;
   * false: none.
   */
  narrowbandTransform?: string | false;
}

export interface ResolvedPocketsphinxOptions {
  models: Record<string, PocketsphinxModelPaths>;
  /** Batch decoders per model key. */
  concurrency: Record<string, number>;
  poolSize: number;
  maxSegmentsPerRequest: number | undefined;
  maxStreams: number;
  /** decoderArgs with the streaming profile applied. */
  streamDecoderArgs: Record<string, string>;
  /** decoderArgs with the second-pass profile applied. */
  secondPassDecoderArgs: Record<string, string>;
  streamIdleMs: number;
  warmStreams: number;
  decoderArgs: Record<string, string>;
  addonPath: string | undefined;
  maxUtteranceMs: number;
  segmentation: SegmenterOptions;
  vad: { backend?: VadBackend; modelPath?: string };
  log: VadLog | undefined;
  endpointSilenceMs: number;
  partialIntervalMs: number;
  cutAtPause: CutAtPause | undefined;
  secondPass: SecondPassOptions | undefined;
  /** 0: off. */
  settleMs: number;
  externalSecondPass: (() => Promise<SecondPassPool<RecognitionContext>>) | undefined;
  contextWeight: number;
  /** Narrowband adaptation per model key (none: not adapted). */
  narrowband: Record<string, NarrowbandAdaptation | undefined>;
}

export function defaultModelPaths(dir = DEBIAN_MODEL_DIR): PocketsphinxModelPaths {
  return { hmm: join(dir, 'en-us'), lm: join(dir, 'en-us.lm.bin'), dict: join(dir, 'cmudict-en-us.dict') };
}

/**
 * Arguments every decoder gets. -remove_silence no keeps one decoder frame per 10 ms of input, which the word timings
 * rely on (with silence removal the frame numbers skip the removed audio).
 */
export const BASE_DECODER_ARGS: Readonly<Record<string, string>> = { '-remove_silence': 'no' };

/**
 * Streaming decoders prune as live second passes do (SECOND_PASS_DECODER_ARGS): since a session's utterances after its
 * first 10 s keep the streaming decoder's words (BUILTIN_SECOND_PASS_COVERED_MS), those words are worth the search.
 * On the tuning half's conversation (432 words, one session; `npm run bench -- live-decoder`, engine-only) one pass
 * made 202 word errors at these settings against 210 at the earlier 1,500 HMMs / 5 word exits / 5-frame phone-loop
 * lookahead, for about a third more CPU (52.8 s against 39.3 s for 223 s of audio).
 */
export const STREAM_DECODER_ARGS: Readonly<Record<string, string>> = { '-maxhmmpf': '4000', '-maxwpf': '10' };

/**
 * Live second passes prune at 4,000 active HMMs and 10 word exits per frame: on the tuning half of the real recordings
 * (1,855 words, decoded as files in process; `npm run bench -- wer --second-pass`) that made 818 word errors against
 * file settings' 824 with 32 % less CPU (3,000 / 10: 828; the streaming profile above: 877). A second pass is most of
 * a live stream's CPU.
 */
export const SECOND_PASS_DECODER_ARGS: Readonly<Record<string, string>> = { '-maxhmmpf': '4000', '-maxwpf': '10' };

/**
 * The built-in second pass decodes again the utterances that open within a session's first 10 s of decoded audio,
 * while the streaming decoder's running cepstral mean is still settling; later utterances are final as streamed, at
 * once. On the tuning half's conversation (engine-only, `npm run bench -- live-decoder`), word errors of 432 and CPU
 * for 223 s of audio: none covered 202 (52.8 s), 5 s 199, 10 s 196 (54.1 s), 20 s 195, 40 s 189 (76.9 s), every
 * utterance 196 (129.9 s; the earlier default, every utterance after a cheaper streaming search: 196, 101.1 s). The
 * cold start is over by 10–20 s; every utterance twice costs over twice the CPU per stream, which four streams on two
 * cores do not have (their second passes were late or skipped in 174 of 247 utterances).
 */
export const BUILTIN_SECOND_PASS_COVERED_MS = 10_000;

/**
 * Settling (settleMs) is off: a word settled from the streaming decoder's running hypothesis is not the word the
 * decoder's closing passes over the whole utterance find. On the tuning half's conversation (432 words, engine-only,
 * without cuts at pauses: `npm run bench -- live-decoder --only=settling`), word errors with words settled 300 / 400
 * / 600 / 1,000 / 1,500 / 2,500 ms behind the audio: 263 / 249 / 221 / 218 / 208 / 208, against 196 at the
 * utterance's end. Cutting the utterance at its pauses (CUT_AT_PAUSE) makes words final early at no such cost.
 */
export const LIVE_SETTLE_MS = 0;

export interface CutAtPause {
  /** From this fraction of max_non_final_tokens_duration_ms into an utterance… */
  afterFraction: number;
  /** …a pause this long ends it, ms. */
  pauseMs: number;
  /** Also in utterances a second pass decodes (default: only in those it does not, BUILTIN_SECOND_PASS_COVERED_MS). */
  inSecondPass?: boolean;
}

/**
 * A live utterance ends at every pause of 100 ms: the decoder's closing passes make its words final there, so they
 * need not wait for the endpoint or the bound on non-final tokens (whose cut would fall inside a word). On the tuning
 * half's conversation (432 words, engine-only, `npm run bench -- live-decoder --only=pause`), word errors and words
 * final before their clip's finalize: no cut 196 and 0; every 100 / 200 / 300 ms pause 195 and 266 / 192 and 243 /
 * 206 and 164; the first 100 ms pause after half the 4 s bound (the earlier profile) 193 and 258. Earlier, through
 * the server, the cut after half the bound made 205 errors against 227 with the bound's cut alone. Utterances a
 * second pass decodes stay whole (196 errors and 265 early words against 195 and 271 when they are cut too; one
 * browser-test clip cut into pieces of a second or two lost 4 more of its 14 words in their second passes).
 */
export const CUT_AT_PAUSE: Readonly<CutAtPause> = { afterFraction: 0, pauseMs: 100 };

export function resolvePocketsphinxOptions(options: PocketsphinxOptions = {}): ResolvedPocketsphinxOptions {
  const models: Record<string, PocketsphinxModelPaths> = {};
  const concurrency: Record<string, number> = {};
  const given = options.models ?? { 'en-us': {} };
  const poolSize = options.poolSize ?? availableParallelism();
  positiveInteger('poolSize', poolSize);
  for (const [key, config] of Object.entries(given)) {
    const defaults = defaultModelPaths();
    models[key] = { hmm: config.hmm ?? defaults.hmm, lm: config.lm ?? defaults.lm, dict: config.dict ?? defaults.dict };
    concurrency[key] = config.concurrency ?? poolSize;
    positiveInteger(`concurrency of model '${key}'`, concurrency[key]);
  }
  if (options.maxSegmentsPerRequest !== undefined) positiveInteger('maxSegmentsPerRequest', options.maxSegmentsPerRequest);
  const maxStreams = options.maxStreams ?? 8 * availableParallelism();
  positiveInteger('maxStreams', maxStreams);
  const decoderArgs = { ...BASE_DECODER_ARGS, ...options.decoderArgs };
  if ((decoderArgs['-frate'] ?? '100') !== '100' || (decoderArgs['-samprate'] ?? '16000') !== '16000') {
    throw new RangeError('pocketsphinx -frate and -samprate are fixed at 100 and 16000');
  }
  const maxUtteranceMs = options.maxUtteranceMs ?? 20_000;
  const weight = options.contextWeight ?? DEFAULT_BIAS_WEIGHT;
  if (!(weight > 0 && weight < 1)) throw new RangeError(`pocketsphinx contextWeight must be between 0 and 1, got ${weight}`);
  return {
    models,
    concurrency,
    poolSize,
    maxSegmentsPerRequest: options.maxSegmentsPerRequest,
    maxStreams,
    streamDecoderArgs: { ...decoderArgs, ...(options.streamDecoderArgs ?? STREAM_DECODER_ARGS) },
    secondPassDecoderArgs: { ...decoderArgs, ...(options.secondPassDecoderArgs ?? SECOND_PASS_DECODER_ARGS) },
    streamIdleMs: options.streamIdleMs ?? 300_000,
    warmStreams: Math.min(maxStreams, options.warmStreams ?? 2 * availableParallelism()),
    decoderArgs,
    addonPath: options.addonPath,
    maxUtteranceMs,
    segmentation: { maxSegmentMs: maxUtteranceMs, ...options.segmentation },
    vad: { ...options.vad },
    log: options.log,
    endpointSilenceMs: options.endpointSilenceMs ?? 600,
    partialIntervalMs: options.partialIntervalMs ?? 200,
    cutAtPause: options.cutAtPause === false ? undefined : { ...CUT_AT_PAUSE, ...options.cutAtPause },
    secondPass:
      options.secondPass === false
        ? undefined
        : {
            budgetMs: options.secondPass?.budgetMs ?? 15_000 * poolSize,
            waitMs: options.secondPass?.waitMs ?? 1500,
            coveredMs: options.secondPass?.coveredMs ?? BUILTIN_SECOND_PASS_COVERED_MS,
          },
    settleMs: nonNegative('settleMs', options.settleMs ?? LIVE_SETTLE_MS),
    externalSecondPass: options.secondPass === false ? undefined : options.externalSecondPass,
    contextWeight: options.contextWeight ?? DEFAULT_BIAS_WEIGHT,
    narrowband: narrowbandPerModel(models, options.narrowbandTransform),
  };
}

function narrowbandPerModel(
  models: Record<string, PocketsphinxModelPaths>,
  option: string | false | undefined,
): Record<string, NarrowbandAdaptation | undefined> {
  const out: Record<string, NarrowbandAdaptation | undefined> = {};
  if (option === false) return out;
  const transform = option ?? builtNarrowbandTransform();
  if (!transform) return out;
  if (!existsSync(transform)) throw new RangeError(`pocketsphinx narrowband transform ${transform} does not exist`);
  const adaptation = { transform, identity: identityTransformFor(transform) };
  const debianHmm = defaultModelPaths().hmm;
  // The built transform belongs to Debian's en-us acoustic model; one given explicitly is the operator's call.
  for (const [key, paths] of Object.entries(models)) if (option !== undefined || paths.hmm === debianHmm) out[key] = adaptation;
  return out;
}

function nonNegative(name: string, value: number): number {
  if (!(value >= 0 && Number.isFinite(value))) throw new RangeError(`pocketsphinx ${name} must be a finite number ≥ 0, got ${value}`);
  return value;
}

function positiveInteger(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`pocketsphinx ${name} must be a positive integer, got ${value}`);
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
