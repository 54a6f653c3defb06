// The pocketsphinx STT engine: English (Debian's pocketsphinx-en-us model), word timings from the segment iterator,
// word posteriors as confidences, partial results while streaming. Each loaded model has a batch pool of worker
// threads (one native decoder each) shared fairly by file transcriptions, segment by segment, and a pool of dedicated
// decoders for live sessions (batch-pool.ts, stream-pool.ts). Files are cut into speech segments at pauses found by Silero VAD
// (segmenter.ts), and live audio goes through a speech gate on the same VAD (speech-gate.ts): audio without speech is
// never decoded.
import { loadVadOffThread } from '../../../audio/audio-thread.js';
import { defaultLog, type Vad } from '../../../audio/vad.js';
import type {
  LoadOptions,
  PoolSlots,
  RecognitionContext,
  Recognizer,
  SecondPassReport,
  StreamOptions,
  SttEngine,
  SttFeatures,
  Token,
  TranscribeOptions,
} from '../interface.js';
import { EngineUnavailableError } from '../interface.js';
import { findAddon } from './addon.js';
import { checkModelFiles, resolvePocketsphinxOptions, type PocketsphinxOptions, type ResolvedPocketsphinxOptions } from './options.js';
import { VadSegmenter } from '../segmenter.js';
import { SpeechGate } from '../speech-gate.js';
import { BatchPool, type BatchPoolStats } from './batch-pool.js';
import { StreamPool, type StreamPoolStats } from './stream-pool.js';
import { SecondPass, SecondPassPool } from '../second-pass.js';
import { batchSecondPass } from './second-pass.js';
import { BiasBuilder } from './bias.js';
import type { DecoderBias, StreamSettings } from './messages.js';
import { BATCH_NICE, INTERACTIVE_NICE } from '../../../lib/priority.js';
import { PocketsphinxStream } from './stream.js';

export { PocketsphinxStream } from './stream.js';

/** Incoming PCM is fed to the segmenter in pieces of at most this many bytes (0.5 s), which bounds its buffer. */
const PIECE_BYTES = 16_000;

export interface PocketsphinxStats extends BatchPoolStats {
  streams: StreamPoolStats;
  /** Voice activity detector in use for batch segmentation. */
  vad: 'silero' | 'energy';
  /** Live second passes since start (undefined when turned off), and the live audio in one now. */
  secondPass: (SecondPassReport & { pendingAudioMs: number }) | undefined;
}

/** What one transcription did, for logs and tests. */
export interface TranscriptionReport {
  audioMs: number;
  /** Speech segments decoded. */
  segments: number;
  /** Audio handed to the decoders, ms. */
  decodedMs: number;
  /** Audio skipped as non-speech, ms. */
  skippedMs: number;
  /** Most PCM held by the segmenter at once, bytes. */
  maxBufferedBytes: number;
  /** Most PCM submitted and not yet decoded at once (queued or on a decoder), bytes. */
  maxPendingBytes: number;
}

export interface PocketsphinxTranscribeOptions extends TranscribeOptions {
  /** Called once the transcription has finished, with what it did. */
  onReport?: (report: TranscriptionReport) => void;
}

export const POCKETSPHINX_FEATURES: SttFeatures = {
  timestamps: true,
  confidence: true,
  streaming: true,
  diarization: false,
  translation: false,
};

export class PocketsphinxEngine implements SttEngine {
  readonly id = 'pocketsphinx';
  readonly languages = ['en'] as const;
  readonly features = POCKETSPHINX_FEATURES;
  private readonly options: ResolvedPocketsphinxOptions;
  private readonly loaded = new Map<string, Promise<PocketsphinxRecognizer>>();
  /** The models whose load finished, so their pools can be read without loading anything. */
  private readonly ready = new Map<string, PocketsphinxRecognizer>();

  constructor(options: PocketsphinxOptions = {}) {
    this.options = resolvePocketsphinxOptions(options);
  }

  load(engineModel: string, options: LoadOptions = {}): Promise<PocketsphinxRecognizer> {
    let loading = this.loaded.get(engineModel);
    if (!loading) {
      loading = this.start(engineModel);
      this.loaded.set(engineModel, loading);
      // A failed load is not cached: installing the missing package and retrying must work without a restart.
      loading.then(
        (r) => this.ready.set(engineModel, r),
        () => this.loaded.delete(engineModel),
      );
    }
    const signal = options.signal;
    if (!signal) return loading;
    signal.throwIfAborted();
    return Promise.race([loading, new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }))]);
  }

  /** File and live decoders of a model loaded so far (metrics); asking loads nothing. */
  slots(engineModel: string): PoolSlots[] {
    const s = this.ready.get(engineModel)?.stats();
    if (!s) return [];
    return [
      { pool: 'stt_batch', busy: s.busy, total: s.size },
      { pool: 'stt_streaming', busy: s.streams.active, total: s.streams.max },
    ];
  }

  async close(): Promise<void> {
    const all = [...this.loaded.values()];
    this.loaded.clear();
    this.ready.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (r) => r.close(),
          () => {},
        ),
      ),
    );
  }

  private async start(engineModel: string): Promise<PocketsphinxRecognizer> {
    const paths = this.options.models[engineModel];
    if (!paths) {
      throw new EngineUnavailableError(
        `pocketsphinx has no model '${engineModel}'`,
        `configured models: ${Object.keys(this.options.models).join(', ') || 'none'}`,
      );
    }
    checkModelFiles(paths);
    const addonPath = findAddon(this.options.addonPath);
    const init = { addonPath, model: paths, decoderArgs: this.options.decoderArgs };
    // File decoders yield the cores to live decoders and the event loop when the machine is saturated: a live stream
    // keeps real time.
    const narrowband = this.options.narrowband[engineModel];
    const batch = new BatchPool(
      { ...init, nice: BATCH_NICE, ...(narrowband ? { narrowband } : {}) },
      {
        size: this.options.concurrency[engineModel]!,
        perRequestLimit: this.options.maxSegmentsPerRequest,
      },
    );
    // Voice activity detection of files and of live sessions on worker threads of their own.
    const vadLoading = Promise.all([
      loadVadOffThread({ ...this.options.vad, log: this.options.log, lane: 'batch' }),
      loadVadOffThread({ ...this.options.vad, log: this.options.log, lane: 'live' }),
    ]);
    try {
      await batch.start();
    } catch (err) {
      throw new EngineUnavailableError(`pocketsphinx could not load model '${engineModel}': ${(err as Error).message}`);
    }
    // Streaming decoders adapt telephone utterances too (stream-session.ts): without it, live words on 8 kHz audio
    // were a third worse than a file's whenever a second pass did not replace them.
    const streams = new StreamPool(
      { ...init, decoderArgs: this.options.streamDecoderArgs, ...(narrowband ? { narrowband } : {}) },
      this.options.maxStreams,
      this.options.streamIdleMs,
      this.options.warmStreams,
    );
    // Live second passes get decoders of their own, pruned harder than files' (SECOND_PASS_DECODER_ARGS), between the
    // two: behind niced file work they were late whenever the machine was busy; at the streaming decoders' priority,
    // the second passes of four sessions starting together held those decoders seconds behind the audio
    // (docs/benchmarks-history.md, issue 33). Loaded with the first session.
    const live = new BatchPool(
      { ...init, decoderArgs: this.options.secondPassDecoderArgs, nice: INTERACTIVE_NICE, ...(narrowband ? { narrowband } : {}) },
      { size: batch.size },
    );
    const bias = new BiasBuilder(paths.dict, this.options.log ?? defaultLog, this.options.contextWeight);
    const [fileVad, liveVad] = await vadLoading;
    const external = await this.externalSecondPass();
    return new PocketsphinxRecognizer(this.id, engineModel, { file: batch, live }, streams, { file: fileVad, live: liveVad }, this.options, bias, external);
  }

  /** The other engine's second passes, if configured and loadable (else the batch pool's, logged). */
  private async externalSecondPass(): Promise<SecondPassPool<RecognitionContext> | undefined> {
    if (!this.options.externalSecondPass) return undefined;
    try {
      return await this.options.externalSecondPass();
    } catch (err) {
      (this.options.log ?? defaultLog)('error', 'the second-pass model could not be loaded: live finals come from pocketsphinx', {
        cause: (err as Error).message,
      });
      return undefined;
    }
  }
}

export class PocketsphinxRecognizer implements Recognizer {
  /** Second passes of live utterances: on their own batch pool, or on another engine's file decoder (undefined when off). */
  private readonly secondPass: { pool: SecondPassPool<DecoderBias>; own: true } | { pool: SecondPassPool<RecognitionContext>; own: false } | undefined;

  private readonly batch: BatchPool;
  /** Decoders of live second passes (the batch pool's kind, SECOND_PASS_DECODER_ARGS); started by the first session. */
  private readonly liveBatch: BatchPool;
  private liveBatchStarted: Promise<void> | undefined;

  constructor(
    readonly engineId: string,
    readonly engineModel: string,
    pools: { file: BatchPool; live: BatchPool },
    private readonly streams: StreamPool,
    private readonly vad: { file: Vad; live: Vad },
    private readonly options: ResolvedPocketsphinxOptions,
    private readonly biasBuilder: BiasBuilder,
    external?: SecondPassPool<RecognitionContext>,
  ) {
    this.batch = pools.file;
    this.liveBatch = pools.live;
    if (external) this.secondPass = { pool: external, own: false };
    else if (options.secondPass) this.secondPass = { pool: new SecondPassPool(batchSecondPass(pools.live), options.secondPass), own: true };
  }

  /** The second-pass decoders, loaded once (a failed load is tried again by the next session). */
  private startLiveBatch(): Promise<void> {
    if (this.secondPass?.own !== true) return Promise.resolve();
    this.liveBatchStarted ??= this.liveBatch.start().catch((err: unknown) => {
      this.liveBatchStarted = undefined;
      throw err;
    });
    return this.liveBatchStarted;
  }

  /** Pool state: batch workers and the transcriptions sharing them, live sessions, the VAD in use. */
  stats(): PocketsphinxStats {
    return {
      ...this.batch.stats(),
      streams: this.streams.stats(),
      vad: this.vad.file.backend,
      secondPass: this.secondPass ? { ...this.secondPass.pool.totals, pendingAudioMs: this.secondPass.pool.pendingAudioMs } : undefined,
    };
  }

  /**
   * Transcribe a file: the PCM is cut into speech segments as it arrives (never more than one segment window plus the
   * segments submitted and not yet decoded is held), and each segment is queued in the batch pool, where segments of
   * all transcriptions share the decoders fairly. Tokens carry times from the first sample of `pcm`.
   */
  async transcribe(pcm: AsyncIterable<Uint8Array>, options: PocketsphinxTranscribeOptions = {}): Promise<Token[]> {
    const { signal } = options;
    signal?.throwIfAborted();
    const bias = options.context && (await this.biasBuilder.build(options.context));
    signal?.throwIfAborted();
    const cased = (tokens: Token[]) => (bias ? bias.casing.apply(tokens) : tokens);
    const onTokens = options.onTokens && ((tokens: Token[]) => options.onTokens!(cased(tokens)));
    const request = this.batch.open({ onTokens, onQueuePosition: options.onQueuePosition, bias: bias?.decoder });
    const segmenter = new VadSegmenter(this.vad.file.createStream(), this.options.segmentation);
    let maxPendingBytes = 0;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (!signal) return;
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {});
    const submit = async (segments: Awaited<ReturnType<VadSegmenter['push']>>): Promise<void> => {
      for (const segment of segments) {
        maxPendingBytes = Math.max(maxPendingBytes, request.pendingAudioMs * 32 + segment.samples.byteLength);
        await request.submit(segment);
      }
    };
    const work = (async () => {
      for await (const chunk of pcm) {
        signal?.throwIfAborted();
        for (let off = 0; off < chunk.length; off += PIECE_BYTES) await submit(await segmenter.push(chunk.subarray(off, off + PIECE_BYTES)));
      }
      await submit(await segmenter.flush());
      return request.finish();
    })();
    work.catch(() => {}); // settled through the race below; after an abort nobody else observes it
    try {
      const tokens = cased(await Promise.race([work, aborted]));
      const stats = segmenter.stats;
      options.onReport?.({
        audioMs: segmenter.samples / 16,
        segments: stats.segments,
        decodedMs: stats.segmentMs,
        skippedMs: stats.skippedMs,
        maxBufferedBytes: stats.maxBufferedSamples * 2,
        maxPendingBytes,
      });
      return tokens;
    } catch (err) {
      request.cancel(err instanceof Error ? err : new Error(String(err)));
      throw err;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A live session: a speech gate (Silero VAD, speech-gate.ts) on this thread hands the speech in the audio to a
   * dedicated streaming decoder, which never hears the silence between utterances; the gate also decides the
   * endpoints.
   */
  async stream(options: StreamOptions & { signal?: AbortSignal; busyWaitMs?: number } = {}): Promise<PocketsphinxStream> {
    const bias = options.context && (await this.biasBuilder.build(options.context));
    await this.startLiveBatch();
    const cut = this.options.cutAtPause;
    const sp = this.secondPass;
    // Utterances a second pass decodes stay whole: its cepstral mean over a short piece misses words.
    const fromDecodedMs = sp && !cut?.inSecondPass ? (sp.pool.options.coveredMs ?? Number.POSITIVE_INFINITY) : 0;
    const gate = new SpeechGate(this.vad.live.createStream(), {
      endpointMs: options.endpointSilenceMs ?? this.options.endpointSilenceMs,
      ...(cut && options.maxNonFinalMs !== undefined
        ? { cutAtPause: { afterMs: cut.afterFraction * options.maxNonFinalMs, pauseMs: cut.pauseMs, fromDecodedMs } }
        : {}),
    });
    const second = !sp ? undefined : sp.own ? new SecondPass(sp.pool, bias?.decoder) : new SecondPass(sp.pool, options.context);
    const session = new PocketsphinxStream(gate, second, bias);
    const channel = await this.streams.open(
      { partialIntervalMs: options.partialIntervalMs ?? this.options.partialIntervalMs, bias: bias?.decoder, settle: this.settle() },
      {
        partial: (t) => session.decoderPartial(t),
        settled: (t) => session.decoderSettled(t),
        final: (t, info) => session.decoderFinal(t, info),
        error: (e) => session.emit('error', e),
      },
      options.signal,
      options.busyWaitMs,
    );
    session.attach(channel);
    return session;
  }

  /** Where live words settle early: in the utterances the second pass does not decode (an installed model's: none). */
  private settle(): StreamSettings['settle'] {
    const behindMs = this.options.settleMs;
    const sp = this.secondPass;
    if (behindMs <= 0 || sp?.own === false) return undefined;
    const afterMs = sp ? (sp.pool.options.coveredMs ?? Number.POSITIVE_INFINITY) : 0;
    return Number.isFinite(afterMs) ? { afterMs, behindMs } : undefined;
  }

  async prewarm(): Promise<void> {
    await Promise.all([this.streams.warmUp(), this.startLiveBatch()]);
  }

  async close(): Promise<void> {
    await Promise.all([this.batch.close(), this.liveBatch.close(), this.streams.close()]);
  }
}
