// The models users brought, served without a restart: refresh() looks at the models directory again and makes the
// engines and the catalogs match it (a model added is registered and loads on first use; a model removed leaves the
// catalogs at once and is unloaded once the sessions that hold it end; new aliases move in one step). Each node calls
// it when the `models_version` stamp it polls changes, or the listing of its models directory does (a folder copied
// in or removed by hand: startSync()), and the node that made a change calls it at once.
// Speech-to-text and voice models here; the labelling models (language identification, speaker embeddings) are
// handed each look too (labelling.ts); the second-pass model is read at start. An idle sweep unloads a model nobody
// used for PARLANCE_MODEL_IDLE_UNLOAD_SECONDS (the labelling models' sweep too), and closes labelling models taken
// out of use.
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import type { EngineCatalog } from '../../engines/catalog.js';
import type { InstalledModel } from '../../engines/model-dir/manifest.js';
import { scanModelsDir } from '../../engines/model-dir/scan.js';
import { sherpaModelDescriptor } from '../../engines/stt/sherpa/descriptor.js';
import { SHERPA_ENGINE_ID, SherpaEngine } from '../../engines/stt/sherpa/engine.js';
import type { TtsEngineOptions } from '../../engines/tts/descriptor.js';
import { installedTtsModels } from '../../engines/tts/installed.js';
import type { TtsModel } from '../../engines/tts/model.js';
import { SherpaTtsEngine } from '../../engines/tts/sherpa/engine.js';
import type { CatalogAlias, ModelCatalog } from './catalog.js';
import { claimedAliases, ModelClaimError } from './installed.js';
import { modelsDirListing } from './dir-listing.js';
import type { LabellingModels } from './labelling.js';
import type { ModelUse } from './use.js';

/** A voice removed while streams may still use it is closed once it has been idle this long (longer than a stream's text pause). */
const RETIRED_TTS_IDLE_MS = 30_000;

export interface LiveModelsOptions {
  modelsDir: string;
  engines: EngineCatalog;
  catalog: ModelCatalog;
  use: ModelUse;
  /** The models served since start (the models directory as the engines were built from it). */
  installed: readonly InstalledModel[];
  /** The language-identification and speaker-embedding models in use, told of each look at the models directory. */
  labelling?: LabellingModels;
  /** The operator's STT alias pairs (PARLANCE_STT_MODEL_ALIASES). */
  sttAliasPairs: readonly string[];
  /** PARLANCE_TTS_MODELS: when not empty, only these voices are offered. */
  ttsEnabled: readonly string[];
  ttsOptions: TtsEngineOptions;
  /** Unload a model unused this long, ms (0: never). */
  idleUnloadMs: number;
  log: Logger;
}

const served = (m: InstalledModel) => m.family === 'stt-offline' || m.family === 'stt-streaming' || m.family === 'tts';
const isStt = (m: InstalledModel) => m.family === 'stt-offline' || m.family === 'stt-streaming';

/** What makes a model folder the same model: its folder (a model brought again gets a new one) and its manifest but the aliases. */
function identity(m: InstalledModel): string {
  let ino = 0;
  try {
    ino = statSync(m.dir).ino;
  } catch {
    // Gone: compared as changed.
  }
  const { aliases: _aliases, ...rest } = m;
  return `${ino}:${JSON.stringify(rest)}`;
}

export class LiveModels {
  /** The models served now (STT and TTS), by id. */
  private readonly current = new Map<string, { model: InstalledModel; identity: string }>();
  /** Models that could not be offered (a voice that failed its check), by id: tried again only once their folder changes. */
  private readonly refused = new Map<string, string>();
  /** Removed voices whose streams may still be speaking: closed once idle. */
  private readonly retired: SherpaTtsEngine[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private sweeper: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private closed = false;
  /** Why the last look at the models directory failed, while it fails. */
  private unreadable: string | undefined;

  constructor(private readonly o: LiveModelsOptions) {
    const tts = new Set(o.engines.tts.installedIds());
    for (const m of o.installed) {
      if (isStt(m) || tts.has(m.id)) this.current.set(m.id, { model: m, identity: identity(m) });
      else if (served(m)) this.refused.set(m.id, identity(m));
    }
  }

  private get sherpa(): SherpaEngine | undefined {
    const engine = this.o.engines.stt.engine(SHERPA_ENGINE_ID);
    return engine instanceof SherpaEngine ? engine : undefined;
  }

  /** Look at the models directory again and serve what it holds now; one refresh at a time. */
  refresh(): Promise<void> {
    const run = this.queue.then(() => this.apply());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Whether the model is served by this node and its weights are in memory (a labelling model: in use and loaded). */
  loaded(id: string): boolean {
    if (!this.current.has(id)) return this.o.labelling?.loaded(id) ?? false;
    const model = this.current.get(id)!.model;
    if (isStt(model)) return this.sherpa?.isLoaded(id) ?? false;
    const engine = this.o.engines.tts.resolve(id)?.engine;
    return engine instanceof SherpaTtsEngine && engine.loaded;
  }

  /** Whether the model is offered by this node (it is in the catalogs). */
  serves(id: string): boolean {
    return this.current.has(id);
  }

  /** The models of this node that are loaded now, the labelling models included (metrics). */
  loadedCount(): number {
    return [...this.current.keys()].filter((id) => this.loaded(id)).length + (this.o.labelling?.loadedCount() ?? 0);
  }

  /** Start the idle sweep (unloading unused models, closing removed voices). */
  startSweeper(): void {
    const every = this.o.idleUnloadMs > 0 ? Math.min(5000, Math.max(250, this.o.idleUnloadMs / 4)) : 5000;
    this.sweeper = setInterval(() => void this.sweep().catch((err: unknown) => this.o.log.warn({ err }, 'model idle sweep failed')), every);
    this.sweeper.unref();
  }

  /**
   * Poll the stamp every change renews (`version`), every `everyMs`, and refresh when it moved: another node installed,
   * removed or re-aliased a model. A poll rather than a database notification: the same on SQLite and PostgreSQL, no
   * connection of its own, and nothing missed while a connection is down (a notification lost then would need this
   * poll anyway); a change is rare and a second or two of lag is fine. The same tick compares the models directory's
   * listing (dir-listing.ts), which the stamp knows nothing of when a folder is copied in or removed by hand.
   */
  startSync(version: () => Promise<string | undefined>, everyMs: number): void {
    let last: string | undefined;
    let lastListing: string | undefined;
    let first = true;
    let busy = false;
    const tick = async () => {
      if (busy || this.closed) return;
      busy = true;
      try {
        // Read before the refresh: a change made while it runs is seen by the next tick.
        const listing = await modelsDirListing(this.o.modelsDir);
        let now = last;
        try {
          now = await version();
        } catch (err) {
          // The database is down: what the directory shows is still served.
          this.o.log.warn({ err: (err as Error).message }, 'could not look for model changes');
        }
        if (first || now !== last || listing !== lastListing || this.unreadable !== undefined) await this.refresh();
        last = now;
        lastListing = listing;
        first = false;
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, 'could not look for model changes');
      } finally {
        busy = false;
      }
    };
    void tick();
    this.poller = setInterval(() => void tick(), everyMs);
    this.poller.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.poller);
    await this.queue;
    await Promise.all(this.retired.splice(0).map((e) => e.close()));
  }

  private async apply(): Promise<void> {
    if (this.closed) return;
    let all: InstalledModel[];
    try {
      all = scanModelsDir(this.o.modelsDir);
    } catch (err) {
      // A folder broken meanwhile (by hand, or seen half-copied) changes nothing until it is fixed; the poll looks
      // again at each tick until then (a file completed in place leaves the listing as it was), saying it once.
      const message = (err as Error).message;
      if (message !== this.unreadable) this.o.log.error({ err: message }, 'the models directory cannot be read: the models served stay as they were');
      this.unreadable = message;
      return;
    }
    this.unreadable = undefined;
    this.o.labelling?.update(all);
    const scanned = all.filter(served);
    const wanted = new Map(scanned.map((m) => [m.id, m]));
    for (const [id, { model, identity: was }] of this.current) {
      const now = wanted.get(id);
      if (!now || identity(now) !== was) this.remove(model);
    }
    const realiased: InstalledModel[] = [];
    for (const m of scanned) {
      const had = this.current.get(m.id);
      if (!had) {
        const now = identity(m);
        if (this.refused.get(m.id) === now) continue;
        this.refused.delete(m.id);
        if (!(await this.add(m))) this.refused.set(m.id, now);
      } else if (JSON.stringify(had.model.aliases ?? []) !== JSON.stringify(m.aliases ?? [])) {
        this.realias(m);
        realiased.push(m);
      }
    }
    this.relinkStt();
    for (const m of realiased) this.o.log.info({ model: m.id, aliases: m.aliases ?? [] }, 'model aliases changed');
  }

  /** Offer the model; false when it cannot be (logged). */
  private async add(m: InstalledModel): Promise<boolean> {
    if (isStt(m)) {
      const sherpa = this.sherpa;
      if (!sherpa) return false;
      sherpa.addModel(m);
      try {
        this.o.engines.stt.registerModel(sherpaModelDescriptor(m));
      } catch (err) {
        void sherpa.removeModel(m.id);
        this.o.log.error({ model: m.id, err: (err as Error).message }, 'model not offered');
        return false;
      }
      this.current.set(m.id, { model: m, identity: identity(m) });
      this.o.log.info({ model: m.id, family: m.family, type: m.type }, 'model offered');
      return true;
    }
    if (this.o.ttsEnabled.length && !this.o.ttsEnabled.includes(m.id)) {
      this.o.log.warn({ model: m.id }, 'voice model installed but not offered: PARLANCE_TTS_MODELS does not list it');
      return false;
    }
    // Checked (it speaks a sentence in a child process) before it is offered, as at start.
    const [model] = await installedTtsModels([m], this.o.ttsOptions);
    if (!model) return false;
    try {
      this.o.engines.tts.addInstalled(model, m);
    } catch (err) {
      // Its claims cannot hold: offered without them.
      this.o.log.error({ model: m.id, err: (err as Error).message }, 'voice model offered without its aliases');
      this.o.engines.tts.addInstalled(model, { ...m, aliases: [] });
    }
    this.current.set(m.id, { model: m, identity: identity(m) });
    this.o.log.info({ model: m.id, family: m.family, type: m.type }, 'model offered');
    return true;
  }

  private remove(m: InstalledModel): void {
    this.current.delete(m.id);
    if (isStt(m)) {
      this.o.engines.stt.unregisterModel(m.id);
      const loaded = this.sherpa?.removeModel(m.id);
      this.relinkStt();
      const use = this.o.use;
      // Sessions and transcriptions that hold it finish on it; then its threads and memory go.
      if (loaded)
        void use
          .whenIdle(m.id)
          .then(async () => (await loaded.catch(() => undefined))?.close())
          .then(() => this.o.log.info({ model: m.id }, 'removed model unloaded'));
      use.forget(m.id);
    } else {
      const model: TtsModel | undefined = this.o.engines.tts.removeInstalled(m.id);
      if (model?.engine instanceof SherpaTtsEngine) this.retired.push(model.engine);
    }
    this.o.log.info({ model: m.id }, 'model no longer offered');
  }

  private realias(m: InstalledModel): void {
    const entry = this.current.get(m.id)!;
    this.current.set(m.id, { model: m, identity: entry.identity });
    if (m.family !== 'tts') return;
    try {
      this.o.engines.tts.updateInstalled(m);
    } catch (err) {
      this.o.log.error({ model: m.id, err: (err as Error).message }, 'new aliases of the voice model not taken');
    }
  }

  /** The STT alias table anew: the operator's pairs and each served model's claims that hold (one that cannot is logged). */
  private relinkStt(): void {
    const offers = this.o.engines.stt.offers();
    const kept: InstalledModel[] = [];
    let pairs: CatalogAlias[] = claimedAliases([], offers, this.o.sttAliasPairs);
    for (const { model } of this.current.values()) {
      if (!isStt(model)) continue;
      try {
        pairs = claimedAliases([...kept, model], offers, this.o.sttAliasPairs);
        kept.push(model);
      } catch (err) {
        if (!(err instanceof ModelClaimError)) throw err;
        this.o.log.error({ model: model.id, err: err.message }, 'model offered without its aliases');
        kept.push({ ...model, aliases: [] });
      }
    }
    // An operator's pair whose model went away is left out until it is back.
    this.o.catalog.refresh(pairs.filter((p) => offers.some((o) => o.id === p.target)));
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const engine of this.retired.slice()) {
      if (engine.busy === 0 && (!engine.loaded || now - engine.lastUsed >= RETIRED_TTS_IDLE_MS)) {
        this.retired.splice(this.retired.indexOf(engine), 1);
        await engine.close();
      }
    }
    await this.o.labelling?.sweep(now);
    const idle = this.o.idleUnloadMs;
    if (idle <= 0) return;
    for (const [id, { model }] of this.current) {
      if (isStt(model)) {
        const sherpa = this.sherpa;
        const loadedSince = sherpa?.loadedSince(id);
        if (!sherpa || loadedSince === undefined || this.o.use.inUse(id)) continue;
        // Idle since its last use, or since it loaded (the preload) when that came later.
        const last = Math.max(this.o.use.lastUsed(id) ?? 0, loadedSince);
        if (now - last >= idle && (await sherpa.unload(id))) this.o.log.info({ model: id, idle_s: Math.round((now - last) / 1000) }, 'idle model unloaded');
      } else {
        const engine = this.o.engines.tts.resolve(id)?.engine;
        if (!(engine instanceof SherpaTtsEngine) || !engine.loaded || engine.busy > 0 || now - engine.lastUsed < idle) continue;
        if (await engine.unload()) this.o.log.info({ model: id, idle_s: Math.round((now - engine.lastUsed) / 1000) }, 'idle model unloaded');
      }
    }
  }
}
