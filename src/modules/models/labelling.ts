// The labelling models of a node, served without a restart: the language-identification model (the first installed,
// by folder name) and the speaker-embedding model (likewise), and the diarizer of files, which uses the embeddings
// when there is such a model and the BIC clusterer otherwise. LiveModels (live.ts) hands each look at the models
// directory here (update()); a model added is used by the next request that needs it, one removed or replaced is not.
// Work that already holds one (a transcription under way, a live session's identifier) finishes on it: a model taken
// out of use is closed once no call has used it for RETIRED_IDLE_MS. With PARLANCE_MODEL_IDLE_UNLOAD_SECONDS the
// models in use are unloaded once idle that long too; the objects handed out stay valid and the next call loads again.
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import { BicDiarizer } from '../../engines/diarization/index.js';
import { EmbeddingDiarizer } from '../../engines/diarization/embedding-diarizer.js';
import type { DiarizationEngine, DiarizationStream, DiarizeOptions, MeasureOptions, StreamOptions } from '../../engines/diarization/interface.js';
import { type LanguageIdentifier, WhisperLanguageIdentifier } from '../../engines/language-id/engine.js';
import type { InstalledModel } from '../../engines/model-dir/manifest.js';
import type { ClusterOptions } from '../../engines/speaker/cluster.js';
import { type SpeakerEmbedder, SpeakerEmbeddingEngine } from '../../engines/speaker/engine.js';
import type { JobLog } from '../../jobs/queue.js';

/** A model taken out of use is closed once idle this long (longer than a live session's pause between utterances). */
export const RETIRED_IDLE_MS = 30_000;

/** Counts the calls under way on a model, and when the last one started or ended. */
class Usage {
  busy = 0;
  lastUsed = Date.now();

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    this.lastUsed = Date.now();
    try {
      return await work();
    } finally {
      this.busy--;
      this.lastUsed = Date.now();
    }
  }
}

class TrackedLanguageId implements LanguageIdentifier {
  readonly usage = new Usage();
  constructor(readonly engine: WhisperLanguageIdentifier) {}
  get modelId(): string {
    return this.engine.modelId;
  }
  ready(): Promise<void> {
    return this.usage.track(() => this.engine.ready());
  }
  identify(samples: Int16Array, options?: { signal?: AbortSignal; live?: boolean }): Promise<string | undefined> {
    return this.usage.track(() => this.engine.identify(samples, options));
  }
}

class TrackedEmbedder implements SpeakerEmbedder {
  readonly usage = new Usage();
  constructor(readonly engine: SpeakerEmbeddingEngine) {}
  get modelId(): string {
    return this.engine.modelId;
  }
  ready(): Promise<void> {
    return this.usage.track(() => this.engine.ready());
  }
  embed(samples: Int16Array, signal?: AbortSignal): Promise<Float32Array> {
    return this.usage.track(() => this.engine.embed(samples, signal));
  }
  cluster(embeddings: Float32Array[], weights: number[], options: ClusterOptions, signal?: AbortSignal): Promise<number[]> {
    return this.usage.track(() => this.engine.cluster(embeddings, weights, options, signal));
  }
}

interface Held<T> {
  tracked: T;
  identity: string;
}

/** What makes a folder the same model: its folder (a model brought again gets a new one) and its manifest. */
function identity(m: InstalledModel): string {
  let ino = 0;
  try {
    ino = statSync(m.dir).ino;
  } catch {
    // Gone: compared as changed.
  }
  return `${ino}:${JSON.stringify(m)}`;
}

export interface LabellingOptions {
  log: Logger;
  jobLog: JobLog;
  /** Unload a model in use that no call used this long, ms (0 or absent: never). */
  idleUnloadMs?: number;
}

export class LabellingModels {
  private lid: Held<TrackedLanguageId> | undefined;
  private speaker: (Held<TrackedEmbedder> & { diarizer: EmbeddingDiarizer }) | undefined;
  /** Live streams (and files without an embedding model) are diarized by the BIC clusterer. */
  private readonly bic: BicDiarizer;
  /** Models taken out of use, closed once idle. */
  private readonly retired: { usage: Usage; close(): Promise<void> }[] = [];
  /** The diarizer of the moment, for every caller: each call goes to the one in use when it is made. */
  readonly diarizer: DiarizationEngine;

  constructor(
    installed: readonly InstalledModel[],
    private readonly o: LabellingOptions,
  ) {
    this.bic = new BicDiarizer({ log: o.jobLog });
    this.diarizer = switchingDiarizer(() => this.speaker?.diarizer ?? this.bic);
    this.update(installed, true);
  }

  /** The language-identification model in use now, if any. */
  languageId(): LanguageIdentifier | undefined {
    return this.lid?.tracked;
  }

  /** The speaker-embedding model in use now, if any. */
  speakerEmbeddings(): SpeakerEmbedder | undefined {
    return this.speaker?.tracked;
  }

  /** Whether `id` is a labelling model in use whose weights are in memory now. */
  loaded(id: string): boolean {
    return this.inUse().some((t) => t.modelId === id && t.engine.loaded);
  }

  /** The labelling models in use that are in memory now (metrics). */
  loadedCount(): number {
    return this.inUse().filter((t) => t.engine.loaded).length;
  }

  /** Use the labelling models `installed` holds now (the models directory as scanned). */
  update(installed: readonly InstalledModel[], atStart = false): void {
    const lidModel = installed.find((m) => m.family === 'language-id');
    if ((lidModel && identity(lidModel)) !== this.lid?.identity) {
      if (this.lid) {
        const old = this.lid.tracked;
        this.retire(old.usage, () => old.engine.close(), old.modelId);
      }
      this.lid = lidModel ? { tracked: new TrackedLanguageId(new WhisperLanguageIdentifier(lidModel)), identity: identity(lidModel) } : undefined;
      if (lidModel) this.o.log.info({ model: lidModel.id }, 'spoken language identification of transcripts');
      else if (!atStart) this.o.log.info('no spoken language identification model: transcripts keep the speech model language');
    }
    const speakerModel = installed.find((m) => m.family === 'speaker-embedding');
    if ((speakerModel && identity(speakerModel)) !== this.speaker?.identity) {
      if (this.speaker) {
        const old = this.speaker.tracked;
        this.retire(old.usage, () => old.engine.close(), old.modelId);
      }
      if (speakerModel) {
        const tracked = new TrackedEmbedder(new SpeakerEmbeddingEngine(speakerModel));
        this.speaker = { tracked, identity: identity(speakerModel), diarizer: new EmbeddingDiarizer(tracked, { log: this.o.jobLog, live: this.bic }) };
        this.o.log.info({ model: speakerModel.id }, 'speaker diarization of files with speaker embeddings');
      } else {
        this.speaker = undefined;
        if (!atStart) this.o.log.info('no speaker embedding model: files are diarized by the BIC clusterer');
      }
    }
  }

  /** Close the models taken out of use that nothing has used for RETIRED_IDLE_MS, and unload the idle ones in use. */
  async sweep(now = Date.now()): Promise<void> {
    for (const r of this.retired.slice()) {
      if (r.usage.busy > 0 || now - r.usage.lastUsed < RETIRED_IDLE_MS) continue;
      this.retired.splice(this.retired.indexOf(r), 1);
      await r.close().catch((err: unknown) => this.o.log.warn({ err }, 'a labelling model could not be closed'));
    }
    const idle = this.o.idleUnloadMs ?? 0;
    if (idle <= 0) return;
    for (const t of this.inUse()) {
      const { usage, engine } = t;
      if (!engine.loaded || usage.busy > 0 || now - usage.lastUsed < idle) continue;
      const idleS = Math.round((now - usage.lastUsed) / 1000);
      // No await between the check and close(): close() forgets the load at once, so a call that starts from here on
      // loads the model again instead of meeting worker threads being stopped.
      await engine
        .close()
        .then(() => this.o.log.info({ model: t.modelId, idle_s: idleS }, 'idle model unloaded'))
        .catch((err: unknown) => this.o.log.warn({ err, model: t.modelId }, 'a labelling model could not be unloaded'));
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.retired.splice(0).map((r) => r.close().catch(() => undefined)));
    await this.lid?.tracked.engine.close();
    await this.speaker?.tracked.engine.close();
  }

  private inUse(): (TrackedLanguageId | TrackedEmbedder)[] {
    return [this.lid?.tracked, this.speaker?.tracked].filter((t) => t !== undefined);
  }

  private retire(usage: Usage, close: () => Promise<void>, model: string): void {
    this.retired.push({
      usage,
      close: async () => {
        await close();
        this.o.log.info({ model }, 'labelling model no longer in use unloaded');
      },
    });
  }
}

/** A diarizer that hands each call to `current()` as it is when the call is made. */
function switchingDiarizer(current: () => DiarizationEngine): DiarizationEngine {
  return {
    get name() {
      return current().name;
    },
    diarize: (pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: DiarizeOptions) => current().diarize(pcm, options),
    measure: (pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options?: MeasureOptions) => current().measure(pcm, options),
    createStream: (options?: StreamOptions): DiarizationStream => current().createStream(options),
  };
}
