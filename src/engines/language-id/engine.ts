// Spoken language identification with a model users bring (family `language-id`: a multilingual Whisper encoder and
// decoder run by sherpa-onnx): the language of a stretch of speech, for enable_language_identification. Like the
// offline recognizers (stt/sherpa/engine.ts) each identifier runs on a worker thread of its own at batch priority,
// behind a gate that serves requests in arrival order, live work first. The model is first tried in a child process
// (stt/sherpa/check-model.ts): sherpa-onnx ends its process on a model it cannot use, and that must not be the
// server. A model that fails to load fails the requests that need it, and is tried again by the next one.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BATCH_NICE } from '../../lib/priority.js';
import { RetryingLoad } from '../../lib/retrying-load.js';
import { WorkGate } from '../../lib/work-gate.js';
import { WorkerLane } from '../../lib/worker-lane.js';
import type { InstalledModel } from '../model-dir/manifest.js';
import { checkModel } from '../stt/sherpa/engine.js';
import { sherpa } from '../stt/sherpa/load-sherpa.js';
import { identifySamples, languageIdConfig } from './identify.js';
import type { LanguageIdReply, LanguageIdRequest } from './worker-messages.js';

const WORKER_FILE = fileURLToPath(new URL('./worker.js', import.meta.url));
/** Gate priority of live utterances (files: 0), as the offline recognizers' second passes. */
const LIVE_PRIORITY = 1;

/** What transcripts need from a language-identification model. */
export interface LanguageIdentifier {
  /** The installed model's id. */
  readonly modelId: string;
  /** Resolves once the model is loaded (tried first in a child process); rejects when it cannot be used. */
  ready(): Promise<void>;
  /** The language of s16le 16 kHz mono speech (its first 30 s); undefined when the model cannot tell. */
  identify(samples: Int16Array, options?: { signal?: AbortSignal; live?: boolean }): Promise<string | undefined>;
}

export interface LanguageIdOptions {
  /** Identifiers (worker threads, each holding the model); default 1: one encoder pass per segment. */
  concurrency?: number;
}

type Request = LanguageIdRequest extends infer R ? (R extends LanguageIdRequest ? Omit<R, 'id'> : never) : never;
type Identify = (samples: Int16Array) => Promise<string>;

interface Loaded {
  free: Identify[];
  gate: WorkGate;
  stop(): Promise<void>;
}

export class WhisperLanguageIdentifier implements LanguageIdentifier {
  private readonly resource = new RetryingLoad(() => this.open());

  constructor(
    readonly model: InstalledModel,
    private readonly options: LanguageIdOptions = {},
  ) {}

  get modelId(): string {
    return this.model.id;
  }

  /** Whether the model is in memory now (loaded on first use; close() frees it, and the next call loads it again). */
  get loaded(): boolean {
    return this.resource.loaded;
  }

  async ready(): Promise<void> {
    await this.resource.get();
  }

  async identify(samples: Int16Array, options: { signal?: AbortSignal; live?: boolean } = {}): Promise<string | undefined> {
    const { free, gate } = await this.resource.get();
    const language = await gate.run(
      async () => {
        const lane = free.pop()!;
        try {
          return await lane(samples);
        } finally {
          free.push(lane);
        }
      },
      options.signal,
      options.live ? LIVE_PRIORITY : 0,
    );
    return language || undefined;
  }

  private async open(): Promise<Loaded> {
    const config = languageIdConfig(this.model);
    await checkModel(this.model, 'language-id', config);
    if (!existsSync(WORKER_FILE)) {
      // Running from sources (tests importing modules): one identifier on this thread.
      const lid = new (sherpa().SpokenLanguageIdentification)(config);
      return { free: [async (samples) => identifySamples(lid, samples)], gate: new WorkGate(1), stop: async () => {} };
    }
    const lanes = Array.from(
      { length: Math.max(1, this.options.concurrency ?? 1) },
      () => new WorkerLane<Request, LanguageIdReply>(WORKER_FILE, { nice: BATCH_NICE }),
    );
    const stop = async () => void (await Promise.all(lanes.map((l) => l.stop())));
    try {
      await Promise.all(lanes.map((l) => l.call({ op: 'load', config })));
    } catch (err) {
      await stop();
      throw err;
    }
    const free = lanes.map((lane) => async (samples: Int16Array) => ((await lane.call({ op: 'identify', samples, config })) as { language: string }).language);
    return { free, gate: new WorkGate(lanes.length), stop };
  }

  async close(): Promise<void> {
    await (await this.resource.take())?.stop();
  }
}

/** The identifier of the first installed language-id model (folder-name order), or undefined when none is. */
export function languageIdentifierFor(installed: readonly InstalledModel[], options: LanguageIdOptions = {}): WhisperLanguageIdentifier | undefined {
  const model = installed.find((m) => m.family === 'language-id');
  return model ? new WhisperLanguageIdentifier(model, options) : undefined;
}
