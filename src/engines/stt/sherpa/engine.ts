// Speech recognition with models users bring (sherpa-onnx). Offline models (Whisper, Moonshine, NeMo CTC/transducer
// such as Parakeet, SenseVoice, Paraformer, Zipformer CTC) transcribe files: the audio is cut into speech segments at
// pauses by the same Silero VAD segmenter as pocketsphinx (segmenter.ts), and each segment is decoded by one of the
// model's recognizers, each on a worker thread of its own at batch priority. Streaming models serve real-time
// sessions (streaming.ts). Before a model is loaded into the server it is tried in a child process (check-model.ts):
// sherpa-onnx ends its process on a model it cannot use, and that must not be the server.
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadVadOffThread } from '../../../audio/audio-thread.js';
import type { Vad, VadBackend, VadLog } from '../../../audio/vad.js';
import { BATCH_NICE } from '../../../lib/priority.js';
import { runChild } from '../../../lib/spawner/spawn-child.js';
import { WorkGate } from '../../../lib/work-gate.js';
import { WorkerLane } from '../../../lib/worker-lane.js';
import type { InstalledModel } from '../../model-dir/manifest.js';
import {
  EngineUnavailableError,
  type RecognitionContext,
  type Recognizer,
  type SttEngine,
  type SttFeatures,
  type Token,
  type TranscribeOptions,
} from '../interface.js';
import { type SegmenterOptions, VadSegmenter } from '../segmenter.js';
import { type OfflineRecognizer, pcmToFloat32, sherpa } from './load-sherpa.js';
import { offlineRecognizerConfig } from './offline-config.js';
import type { OfflineReply, OfflineRequest } from './offline-worker-messages.js';
import { onlineRecognizerConfig } from './online-config.js';
import { type OnlineCall, onlineHandler } from './online-sessions.js';
import type { OnlineReply } from './online-worker-messages.js';
import { type OnlineLane, SherpaStreamingRecognizer } from './streaming.js';
import { type SecondPassOptions, SecondPassPool } from '../second-pass.js';
import { offlineSecondPass } from './second-pass.js';
import { hotwordsOf, takesHotwords, tokenCase } from './hotwords.js';
import { type OfflineResult, resultWords } from './words.js';

export const SHERPA_ENGINE_ID = 'sherpa-onnx';
const WORKER_FILE = fileURLToPath(new URL('./offline-worker.js', import.meta.url));
const ONLINE_WORKER_FILE = fileURLToPath(new URL('./online-worker.js', import.meta.url));
/** Pause that ends an utterance of a live session that does not ask for another, ms. */
const DEFAULT_ENDPOINT_MS = 600;
/**
 * Words of a live utterance this far behind the audio turn final before it ends: final tokens well under a second
 * after their word instead of at the pause. Chosen on the tuning half with the GigaSpeech 3.3M zipformer (its
 * conversation in process, engine-only, 2026-11-29): 56 word errors of 432 with 2000, 1000, 800, 600 and 400 ms alike,
 * the settled words being those modified beam search no longer changes; 600 keeps a margin for models with longer
 * chunks than its 320 ms.
 */
const LIVE_SETTLE_MS = 600;
/**
 * Live sessions of a streaming model per core: measured through the server with the GigaSpeech 3.3M zipformer, 16
 * conversations kept up on 2 cores (docs/benchmarks.md, issue 32). A larger model keeps up fewer: its sessions past
 * that fall behind (no per-model setting yet), where the sessions beyond this cap are refused with limit_exceeded.
 */
const LIVE_SESSIONS_PER_CORE = 8;
const CHECK_FILE = fileURLToPath(new URL('./check-model.js', import.meta.url));
const CHECK_TIMEOUT_MS = 120_000;

export const SHERPA_OFFLINE_FEATURES: SttFeatures = { timestamps: true, confidence: false, streaming: false, diarization: true, translation: true };
export const SHERPA_STREAMING_FEATURES: SttFeatures = { ...SHERPA_OFFLINE_FEATURES, streaming: true };

type Request = OfflineRequest extends infer R ? (R extends OfflineRequest ? Omit<R, 'id'> : never) : never;

export interface SherpaOptions {
  /** Recognizers per offline model (each a worker thread holding the model); default: half the cores, at least 1. */
  concurrency?: number;
  /** Recognizers per streaming model, each serving several live sessions; default: one per core. */
  streamingRecognizers?: number;
  /** Live sessions of one streaming model at once; default: LIVE_SESSIONS_PER_CORE per core. */
  streamingSessions?: number;
  segmentation?: SegmenterOptions;
  /** Voice activity detector of the segmenter: Silero (default, falls back to energy) or energy. */
  vad?: { backend?: VadBackend; modelPath?: string };
  log?: VadLog;
  /**
   * An installed offline model that decodes each utterance of live sessions again for their final tokens (of this
   * engine's streaming models, and of other engines through secondPassPool()).
   */
  secondPass?: { model: string } & Partial<SecondPassOptions>;
}

/** Live audio in second passes at once per recognizer of the second-pass model, ms (as pocketsphinx's). */
const SECOND_PASS_BUDGET_MS = 15_000;

export class SherpaEngine implements SttEngine {
  readonly id = SHERPA_ENGINE_ID;
  readonly features = SHERPA_OFFLINE_FEATURES;
  private readonly models = new Map<string, InstalledModel>();
  private readonly loaded = new Map<string, Promise<SherpaOfflineRecognizer | SherpaStreamingRecognizer>>();
  /** When each model's load finished (a model still loading is not in it). */
  private readonly loadedAt = new Map<string, number>();
  private secondPasses: Promise<SecondPassPool<RecognitionContext>> | undefined;

  constructor(
    models: readonly InstalledModel[],
    private readonly options: SherpaOptions = {},
  ) {
    for (const m of models) if (m.family === 'stt-offline' || m.family === 'stt-streaming') this.models.set(m.id, m);
  }

  get languages(): readonly string[] {
    return [...new Set([...this.models.values()].flatMap((m) => m.languages))];
  }

  load(engineModel: string): Promise<Recognizer> {
    let p = this.loaded.get(engineModel);
    if (!p) {
      const attempt = this.open(engineModel);
      p = attempt;
      this.loaded.set(engineModel, attempt);
      attempt.then(
        () => this.loaded.get(engineModel) === attempt && this.loadedAt.set(engineModel, Date.now()),
        // A model that could not load is tried again by the next request (files may have been fixed meanwhile).
        () => this.loaded.get(engineModel) === attempt && this.loaded.delete(engineModel),
      );
    }
    return p;
  }

  /** Serve another installed model (brought while the server runs); its recognizer loads on first use. */
  addModel(model: InstalledModel): void {
    if (model.family === 'stt-offline' || model.family === 'stt-streaming') this.models.set(model.id, model);
  }

  /**
   * Serve the model no more. Its recognizer, if loaded, is handed back for the caller to close once nobody uses it
   * (a model of the same id brought again later loads anew).
   */
  removeModel(id: string): Promise<Recognizer & { close(): Promise<void> }> | undefined {
    this.models.delete(id);
    const loaded = this.loaded.get(id);
    this.loaded.delete(id);
    this.loadedAt.delete(id);
    return loaded;
  }

  /** Whether the model's recognizer has finished loading (and is not unloaded since). */
  isLoaded(engineModel: string): boolean {
    return this.loadedAt.has(engineModel);
  }

  /** When the model's recognizer finished loading (ms since the epoch), if it is loaded. */
  loadedSince(engineModel: string): number | undefined {
    return this.loadedAt.get(engineModel);
  }

  /**
   * Release the model's recognizer (its threads and memory) if it is loaded; the next load() loads it again while the
   * model is served. The caller makes sure no request uses it. The second-pass model stays: live sessions share it.
   */
  async unload(engineModel: string): Promise<boolean> {
    const loaded = this.loaded.get(engineModel);
    if (!loaded || !this.loadedAt.has(engineModel) || engineModel === this.options.secondPass?.model) return false;
    this.loaded.delete(engineModel);
    this.loadedAt.delete(engineModel);
    await (await loaded.catch(() => undefined))?.close();
    return true;
  }

  /**
   * The second passes of every live session on the second-pass model (options.secondPass), loading it on first use;
   * rejects when there is none or it cannot load (tried again on the next call).
   */
  secondPassPool(): Promise<SecondPassPool<RecognitionContext>> {
    const options = this.options.secondPass;
    if (!options) return Promise.reject(new Error('no second-pass model'));
    this.secondPasses ??= (async () => {
      const recognizer = await this.load(options.model);
      if (!(recognizer instanceof SherpaOfflineRecognizer))
        throw new EngineUnavailableError(`model ${options.model} is not an offline model: it cannot be the second pass`);
      return new SecondPassPool(offlineSecondPass(recognizer), {
        budgetMs: options.budgetMs ?? SECOND_PASS_BUDGET_MS * recognizer.size,
        waitMs: options.waitMs ?? 1500,
      });
    })();
    this.secondPasses.catch(() => (this.secondPasses = undefined));
    return this.secondPasses;
  }

  private async open(engineModel: string): Promise<SherpaOfflineRecognizer | SherpaStreamingRecognizer> {
    const model = this.models.get(engineModel);
    if (!model) throw new EngineUnavailableError(`no installed model ${engineModel}`);
    if (model.family === 'stt-streaming') return this.openStreaming(model);
    const config = offlineRecognizerConfig(model);
    await checkModel(model, 'offline', config);
    if (!existsSync(WORKER_FILE)) {
      // Running from sources (tests importing modules): one recognizer on this thread's async decoder.
      const recognizer = await sherpa().OfflineRecognizer.createAsync(config);
      const decoder = { decode: (samples: Int16Array, hotwords?: string) => recognizer.decodeAsync(streamOf(recognizer, pcmToFloat32(samples), hotwords)) };
      return this.fileRecognizer(model, [decoder]);
    }
    return this.fileRecognizer(model, await this.batchDecoders<Request, OfflineReply>(WORKER_FILE, { op: 'load', config }));
  }

  private async openStreaming(model: InstalledModel): Promise<SherpaStreamingRecognizer> {
    const config = onlineRecognizerConfig(model);
    const { batches } = await checkModel(model, 'online', config);
    this.options.log?.('info', `live sessions of ${model.id} are decoded ${batches ? 'in batches' : 'one stream per call (its encoder takes a batch of 1)'}`, {
      model: model.id,
    });
    let lanes: OnlineLane[];
    let files: () => Promise<SherpaOfflineRecognizer>;
    if (!existsSync(ONLINE_WORKER_FILE)) {
      // Running from sources: one recognizer on this thread, for sessions and files.
      const handler = onlineHandler();
      lanes = [{ call: async (req) => handler(req), stop: async () => {}, sessions: 0 }];
      const decoder = { decode: async (samples: Int16Array, hotwords?: string) => resultOf(await handler({ op: 'decode', samples, hotwords })) };
      files = () => this.fileRecognizer(model, [decoder]);
    } else {
      lanes = Array.from({ length: this.options.streamingRecognizers ?? availableParallelism() }, () => {
        const lane = new WorkerLane<OnlineCall, OnlineReply>(ONLINE_WORKER_FILE);
        return { call: (req: OnlineCall) => lane.call(req), stop: () => lane.stop(), sessions: 0 };
      });
      files = async () => this.fileRecognizer(model, await this.batchDecoders<OnlineCall, OnlineReply>(ONLINE_WORKER_FILE, { op: 'load', config }));
    }
    await Promise.all(lanes.map((l) => l.call({ op: 'load', config, batches })));
    const hotwordsCase = takesHotwords(model) ? tokenCase(model.paths.tokens!) : undefined;
    return new SherpaStreamingRecognizer(SHERPA_ENGINE_ID, model, lanes, {
      endpointSilenceMs: DEFAULT_ENDPOINT_MS,
      settleMs: LIVE_SETTLE_MS,
      files,
      hotwords: hotwordsCase && ((context) => hotwordsOf(context, hotwordsCase)),
      secondPass: await this.streamingSecondPass(model),
      maxSessions: this.options.streamingSessions ?? LIVE_SESSIONS_PER_CORE * availableParallelism(),
      // The sessions' pauses: one VAD on the live audio thread for every streaming model, loaded on first use.
      vad: () => (this.liveVad ??= loadVadOffThread({ ...this.options.vad, lane: 'live', log: this.options.log })),
    });
  }

  private liveVad: Promise<Vad> | undefined;

  /** Files of `model`: cut into speech segments by the VAD, each decoded by one of `decoders`. */
  private async fileRecognizer(model: InstalledModel, decoders: SegmentDecoder[]): Promise<SherpaOfflineRecognizer> {
    const vad = await loadVadOffThread({ ...this.options.vad, lane: 'batch', log: this.options.log });
    return new SherpaOfflineRecognizer(model, vad, decoders, this.options.segmentation);
  }

  /** Worker threads at batch priority that each load the model and decode whole segments (options.concurrency). */
  private async batchDecoders<Req extends { op: string }, Res extends object>(file: string, load: Req): Promise<SegmentDecoder[]> {
    const concurrency = this.options.concurrency ?? Math.max(1, Math.floor(availableParallelism() / 2));
    const lanes = Array.from({ length: concurrency }, () => new WorkerLane<Req, Res>(file, { nice: BATCH_NICE }));
    await Promise.all(lanes.map((l) => l.call(load)));
    return lanes.map((lane) => ({
      decode: async (samples: Int16Array, hotwords?: string) => resultOf(await lane.call({ op: 'decode', samples, hotwords } as unknown as Req)),
      stop: () => lane.stop(),
    }));
  }

  /** The second passes of a streaming model's sessions; none (one-pass finals, logged) if that model cannot load. */
  private async streamingSecondPass(model: InstalledModel): Promise<SecondPassPool<RecognitionContext> | undefined> {
    if (!this.options.secondPass) return undefined;
    try {
      return await this.secondPassPool();
    } catch (err) {
      this.options.log?.('error', `the second-pass model could not be loaded: live finals of ${model.id} come from its streaming decoder`, {
        cause: (err as Error).message,
      });
      return undefined;
    }
  }

  async close(): Promise<void> {
    const all = [...this.loaded.values()];
    this.loaded.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
  }
}

/** The decoded segment of a worker's reply to a 'decode' request. */
function resultOf(reply: object): OfflineResult {
  if (!('result' in reply)) throw new Error('the recognizer answered a decode without a result');
  return reply.result as OfflineResult;
}

function streamOf(recognizer: OfflineRecognizer, samples: Float32Array, hotwords?: string) {
  const stream = hotwords ? recognizer.createStream(hotwords) : recognizer.createStream();
  stream.acceptWaveform({ samples, sampleRate: 16_000 });
  return stream;
}

/**
 * Load and try the model in a child process; a model sherpa-onnx cannot use fails here with the reason in words.
 * `batches`: a streaming model's encoder decodes several streams in one call.
 */
export async function checkModel(model: InstalledModel, kind: 'offline' | 'online' | 'language-id', config: object): Promise<{ batches: boolean }> {
  if (!existsSync(CHECK_FILE)) return { batches: false }; // sources only (tests): no compiled checker
  const r = await runChild(process.execPath, [CHECK_FILE, kind, JSON.stringify(config)], { timeoutMs: CHECK_TIMEOUT_MS, nice: BATCH_NICE });
  const said = r.stdout.split('\n');
  // A streaming model that cannot batch ends the child after its "ok".
  if (said.includes('ok') && (r.code === 0 || kind === 'online')) return { batches: said.includes('batch') };
  // sherpa-onnx prints its reason on stderr; keep the last meaningful line (no stack, no addresses).
  const reason =
    r.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^\s*at /.test(l))
      .at(-1)
      ?.replace(/0x[0-9a-f]+/gi, '') ?? '';
  throw new EngineUnavailableError(
    `model ${model.id} (${model.dir}) could not be loaded by sherpa-onnx${r.signal ? ` (${r.signal})` : ` (exit ${r.code})`}${reason ? `: ${reason.slice(0, 300)}` : ''}`,
    `check that its files are a ${model.type} model as the manifest says`,
  );
}

interface SegmentDecoder {
  decode(samples: Int16Array, hotwords?: string): Promise<OfflineResult>;
  stop?(): Promise<void>;
}

/** Scheduling priority of live second passes on an offline model's recognizers (file segments: 0). */
const LIVE_PRIORITY = 1;

export class SherpaOfflineRecognizer implements Recognizer {
  readonly engineId = SHERPA_ENGINE_ID;
  private readonly free: SegmentDecoder[];
  private readonly gate: WorkGate;
  /** Case of the model's letters, for context terms as hotwords (undefined: the model takes none). */
  private readonly hotwordsCase: ReturnType<typeof tokenCase> | undefined;
  /** The model writes in capitals only. */
  private readonly capitals: boolean;

  constructor(
    readonly model: InstalledModel,
    private readonly vad: Vad,
    private readonly decoders: SegmentDecoder[],
    private readonly segmentation?: SegmenterOptions,
  ) {
    this.free = [...decoders];
    this.gate = new WorkGate(decoders.length);
    const letters = model.paths.tokens ? tokenCase(model.paths.tokens) : 'mixed';
    this.hotwordsCase = takesHotwords(model) ? letters : undefined;
    this.capitals = letters === 'upper';
  }

  get engineModel(): string {
    return this.model.id;
  }

  /** Recognizers decoding at once. */
  get size(): number {
    return this.decoders.length;
  }

  /** Segments of all transcriptions take turns on the model's recognizers (arrival order). */
  async transcribe(pcm: AsyncIterable<Uint8Array>, options: TranscribeOptions = {}): Promise<Token[]> {
    const { signal } = options;
    signal?.throwIfAborted();
    const segmenter = new VadSegmenter(this.vad.createStream(), this.segmentation);
    const pending: Promise<Token[]>[] = [];
    let reported = Promise.resolve();
    const submit = (segments: Awaited<ReturnType<VadSegmenter['push']>>) => {
      for (const s of segments) {
        const decoded = this.decodeAt(s.startSample, s.samples, { signal, context: options.context });
        decoded.catch(() => undefined);
        pending.push(decoded);
        // Progress in time order: each segment's words once it and those before it are known.
        reported = reported.then(async () => options.onTokens?.(await decoded)).catch(() => undefined);
      }
    };
    for await (const chunk of pcm) {
      signal?.throwIfAborted();
      submit(await segmenter.push(chunk));
    }
    submit(await segmenter.flush());
    const words = (await Promise.all(pending)).flat();
    await reported;
    return words;
  }

  /**
   * The words of `samples`, which start at sample `startSample` of the audio, once one of the model's recognizers
   * decoded them. `live`: a live session's second pass, served before file segments.
   */
  decodeAt(startSample: number, samples: Int16Array, options: { signal?: AbortSignal; context?: RecognitionContext; live?: boolean } = {}): Promise<Token[]> {
    const hotwords = this.hotwordsCase && hotwordsOf(options.context, this.hotwordsCase);
    return this.gate
      .run(() => this.decodeOn(samples, hotwords), options.signal, options.live ? LIVE_PRIORITY : 0)
      .then((r) => resultWords(r, Math.round(startSample / 16), Math.round(samples.length / 16), this.capitals));
  }

  private async decodeOn(samples: Int16Array, hotwords: string | undefined): Promise<OfflineResult> {
    const decoder = this.free.pop()!;
    try {
      return await decoder.decode(samples, hotwords);
    } finally {
      this.free.push(decoder);
    }
  }

  stream(): Promise<never> {
    return Promise.reject(new EngineUnavailableError(`model ${this.model.id} transcribes files only`, 'install a streaming (online) model for real time'));
  }

  async close(): Promise<void> {
    await Promise.all(this.decoders.map((d) => d.stop?.()));
  }
}
