// Speaker embeddings with a model users bring (family `speaker-embedding`: 3D-Speaker, WeSpeaker or NeMo exports run
// by sherpa-onnx): a vector per stretch of speech, close for one voice and far apart for two. Each extractor runs on
// a worker thread of its own at batch priority, behind a gate that serves requests in arrival order, like the
// offline recognizers (stt/sherpa/engine.ts). Before the model is loaded into the server it is tried in a child
// process (check-model.ts): sherpa-onnx ends its process on a model it cannot use, and that must not be the server.
// A model that fails to load fails the requests that need it, and is tried again by the next one.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BATCH_NICE } from '../../lib/priority.js';
import { runChild } from '../../lib/spawner/spawn-child.js';
import { RetryingLoad } from '../../lib/retrying-load.js';
import { WorkGate } from '../../lib/work-gate.js';
import { WorkerLane } from '../../lib/worker-lane.js';
import type { InstalledModel } from '../model-dir/manifest.js';
import { EngineUnavailableError } from '../stt/interface.js';
import { sherpa } from '../stt/sherpa/load-sherpa.js';
import { type ClusterOptions, clusterEmbeddings } from './cluster.js';
import { embedSamples, type SpeakerEmbeddingConfig, speakerEmbeddingConfig } from './embed.js';
import type { SpeakerReply, SpeakerRequest } from './worker-messages.js';

const WORKER_FILE = fileURLToPath(new URL('./worker.js', import.meta.url));
const CHECK_FILE = fileURLToPath(new URL('./check-model.js', import.meta.url));
const CHECK_TIMEOUT_MS = 120_000;

type Request = SpeakerRequest extends infer R ? (R extends SpeakerRequest ? Omit<R, 'id'> : never) : never;

/** What diarization and voice matching need from a speaker-embedding model. */
export interface SpeakerEmbedder {
  /** The installed model's id. */
  readonly modelId: string;
  /** Resolves once the model is loaded (tried first in a child process); rejects when it cannot be used. */
  ready(): Promise<void>;
  /** The embedding of s16le 16 kHz mono samples (not normalised; compare with cosine similarity). */
  embed(samples: Int16Array, signal?: AbortSignal): Promise<Float32Array>;
  /** clusterEmbeddings() off the event loop. */
  cluster(embeddings: Float32Array[], weights: number[], options: ClusterOptions, signal?: AbortSignal): Promise<number[]>;
}

export interface SpeakerEngineOptions {
  /** Extractors (worker threads, each holding the model); default 1: an embedding takes milliseconds. */
  concurrency?: number;
}

interface Lane {
  call(req: Request): Promise<SpeakerReply>;
  stop(): Promise<void>;
}

export class SpeakerEmbeddingEngine implements SpeakerEmbedder {
  private readonly resource = new RetryingLoad(() => this.open());
  private readonly config: SpeakerEmbeddingConfig;

  constructor(
    readonly model: InstalledModel,
    private readonly options: SpeakerEngineOptions = {},
  ) {
    this.config = speakerEmbeddingConfig(model);
  }

  get modelId(): string {
    return this.model.id;
  }

  /** Whether the model is in memory now (loaded on first use; close() frees it, and the next call loads it again). */
  get loaded(): boolean {
    return this.resource.loaded;
  }

  async ready(): Promise<void> {
    await this.load();
  }

  async embed(samples: Int16Array, signal?: AbortSignal): Promise<Float32Array> {
    const r = await this.run({ op: 'embed', samples, config: this.config }, signal);
    return (r as Extract<SpeakerReply, { embedding: unknown }>).embedding;
  }

  async cluster(embeddings: Float32Array[], weights: number[], options: ClusterOptions, signal?: AbortSignal): Promise<number[]> {
    const r = await this.run({ op: 'cluster', embeddings, weights, options }, signal);
    return (r as Extract<SpeakerReply, { labels: unknown }>).labels;
  }

  private async run(req: Request, signal?: AbortSignal): Promise<SpeakerReply> {
    const { free, gate } = await this.load();
    return gate.run(async () => {
      const lane = free.pop()!;
      try {
        return await lane.call(req);
      } finally {
        free.push(lane);
      }
    }, signal);
  }

  private load(): Promise<{ lanes: Lane[]; free: Lane[]; gate: WorkGate }> {
    return this.resource.get();
  }

  private async open(): Promise<{ lanes: Lane[]; free: Lane[]; gate: WorkGate }> {
    const config = this.config;
    await checkSpeakerModel(this.model, config);
    let lanes: Lane[];
    if (!existsSync(WORKER_FILE)) {
      // Running from sources (tests importing modules): one extractor on this thread.
      const extractor = new (sherpa().SpeakerEmbeddingExtractor)(config);
      const inline = async (req: Request): Promise<SpeakerReply> => {
        if (req.op === 'embed') return { embedding: embedSamples(extractor, req.samples) };
        if (req.op === 'cluster') return { labels: clusterEmbeddings(req.embeddings, req.options, req.weights) };
        return { dim: extractor.dim };
      };
      lanes = [{ call: inline, stop: async () => {} }];
    } else {
      lanes = Array.from({ length: Math.max(1, this.options.concurrency ?? 1) }, () => {
        const lane = new WorkerLane<Request, SpeakerReply>(WORKER_FILE, { nice: BATCH_NICE });
        return { call: (req: Request) => lane.call(req), stop: () => lane.stop() };
      });
      try {
        await Promise.all(lanes.map((l) => l.call({ op: 'load', config })));
      } catch (err) {
        await Promise.all(lanes.map((l) => l.stop()));
        throw err;
      }
    }
    return { lanes, free: [...lanes], gate: new WorkGate(lanes.length) };
  }

  async close(): Promise<void> {
    const loaded = await this.resource.take();
    await Promise.all(loaded?.lanes.map((l) => l.stop()) ?? []);
  }
}

/** Load and try the model in a child process; a model sherpa-onnx cannot use fails here with the reason in words. */
async function checkSpeakerModel(model: InstalledModel, config: object): Promise<void> {
  if (!existsSync(CHECK_FILE)) return; // sources only (tests): no compiled checker
  const r = await runChild(process.execPath, [CHECK_FILE, JSON.stringify(config)], { timeoutMs: CHECK_TIMEOUT_MS, nice: BATCH_NICE });
  if (r.code === 0 && r.stdout.startsWith('ok')) return;
  // sherpa-onnx prints its reasons on stderr as "<source>.cc:<function>:<line> <message>": keep the messages (no
  // source paths, no addresses); otherwise the last line that is not Node's version banner.
  const lines = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^at |^Node\.js v/.test(l));
  const native = lines.filter((l) => /^\S+\.(cc|h):\w+:\d+ /.test(l)).map((l) => l.replace(/^\S+ /, ''));
  const reason = (native.length ? native.join('; ') : (lines.at(-1) ?? '')).replace(/0x[0-9a-f]+/gi, '');
  throw new EngineUnavailableError(
    `speaker embedding model ${model.id} (${model.dir}) could not be loaded by sherpa-onnx${r.signal ? ` (${r.signal})` : ` (exit ${r.code})`}${reason ? `: ${reason.slice(0, 300)}` : ''}`,
    'check that its model file is a 3D-Speaker, WeSpeaker or NeMo speaker-embedding export with sherpa-onnx metadata',
  );
}

/** The engine of the first installed speaker-embedding model (folder-name order), or undefined when none is. */
export function speakerEngineFor(installed: readonly InstalledModel[], options: SpeakerEngineOptions = {}): SpeakerEmbeddingEngine | undefined {
  const model = installed.find((m) => m.family === 'speaker-embedding');
  return model ? new SpeakerEmbeddingEngine(model, options) : undefined;
}
