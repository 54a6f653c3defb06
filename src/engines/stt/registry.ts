// STT model registry: public model ids → (engine, engine-specific model key).
//
// Canonical ids are version-suffixed ("parlance-en-pocketsphinx-v1"). A model also answers to its aliases and to its
// unversioned family name ("parlance-en-pocketsphinx"), which follows the highest registered version. Lookups are
// exact (case-sensitive), like the ids clients send. The API layer turns `resolve() === undefined` into
// model_not_available.
//
// Models are loaded through the registry (load()), which remembers a model whose load failed (a folder sherpa-onnx
// cannot use): it is logged once per attempt, and requests for it are refused for `loadRetryMs` before the next
// request tries it again (the files may have been fixed), so a broken model costs one load attempt per window.
import type { LoadOptions, PoolSlots, Recognizer, SttEngine, SttFeatures } from './interface.js';

/** How a model is offered: for files (async) or for live sessions (real_time). */
export type TranscriptionMode = 'async' | 'real_time';

/** A public id a model is offered under, in one mode (GET /v1/models). */
export interface ModelOffer {
  id: string;
  name: string;
  mode: TranscriptionMode;
}

/** An offer with the registry id of the model behind it: one entry of the public catalog. */
export interface CatalogModel extends ModelOffer {
  engineModelId: string;
}

export interface SttModelDescriptor {
  /** Canonical id, ending in `-v<N>`. */
  id: string;
  /** Other names accepted for this exact version. */
  aliases?: readonly string[];
  /** Id of the engine that serves it. */
  engineId: string;
  /** Key passed to `engine.load()`. */
  engineModel: string;
  languages: readonly string[];
  features: SttFeatures;
  description?: string;
  /** The public ids (and modes) it is offered under; none: reachable through the registry only. */
  offers?: readonly ModelOffer[];
}

export interface ResolvedModel {
  engine: SttEngine;
  canonicalId: string;
  model: SttModelDescriptor;
}

const VERSIONED = /^(.+)-v(\d+)$/;

/** The model's last load failed; requests for it are refused (model_not_available) until its retry window passed. */
export class ModelLoadFailedError extends Error {
  constructor(
    readonly modelId: string,
    /** Why, as the engine said it (for the operator: it may name files). */
    readonly reason: string,
  ) {
    super(`speech model ${modelId} could not be loaded: ${reason}`);
    this.name = 'ModelLoadFailedError';
  }
}

export type RegistryLog = (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;

export interface ModelLoadPolicy {
  /** How long a model whose load failed is refused before a request tries it again, ms (default 60 s). */
  loadRetryMs?: number;
  log?: RegistryLog;
  /** Told of each model loaded and how long its load took (metrics). */
  onLoaded?: (model: string, ms: number) => void;
  now?: () => number;
}

interface LoadFailure {
  reason: string;
  at: number;
}

/** Split "name-v3" into its family and version; undefined when the id has no version suffix. */
export function parseVersionedId(id: string): { family: string; version: number } | undefined {
  const m = VERSIONED.exec(id);
  if (!m) return undefined;
  return { family: m[1]!, version: Number(m[2]) };
}

export class SttRegistry {
  private readonly engines = new Map<string, SttEngine>();
  private readonly models = new Map<string, SttModelDescriptor>();
  private closed = false;
  /** alias → canonical id */
  private readonly aliases = new Map<string, string>();
  /** unversioned family name → canonical id of its newest version */
  private readonly families = new Map<string, string>();
  /** canonical id → the load under way, shared by every request that waits for it */
  private readonly loading = new Map<string, Promise<Recognizer>>();
  /** canonical id → why its last load failed (until it loads) */
  private readonly failures = new Map<string, LoadFailure>();
  private readonly loadRetryMs: number;
  private readonly now: () => number;
  /** Models loaded at least once (a load of one of these is timed only when its engine had unloaded it). */
  private readonly loadedOnce = new Set<string>();

  constructor(private readonly options: ModelLoadPolicy = {}) {
    this.loadRetryMs = options.loadRetryMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  registerEngine(engine: SttEngine): this {
    if (this.engines.has(engine.id)) throw new Error(`STT engine '${engine.id}' is already registered`);
    this.engines.set(engine.id, engine);
    return this;
  }

  /** The engine of that id, if registered. */
  engine(id: string): SttEngine | undefined {
    return this.engines.get(id);
  }

  registerModel(model: SttModelDescriptor): this {
    const parsed = parseVersionedId(model.id);
    if (!parsed) throw new Error(`STT model id '${model.id}' must end in a version suffix like -v1`);
    const engine = this.engines.get(model.engineId);
    if (!engine) throw new Error(`STT model '${model.id}' names unknown engine '${model.engineId}'`);
    for (const lang of model.languages) {
      if (!engine.languages.includes(lang)) {
        throw new Error(`STT model '${model.id}' declares language '${lang}' that engine '${engine.id}' lacks`);
      }
    }
    for (const name of [model.id, ...(model.aliases ?? [])]) {
      if (this.models.has(name) || this.aliases.has(name)) throw new Error(`STT model name '${name}' is already taken`);
    }
    this.models.set(model.id, model);
    for (const alias of model.aliases ?? []) this.aliases.set(alias, model.id);
    const newest = this.families.get(parsed.family);
    if (newest === undefined || parseVersionedId(newest)!.version < parsed.version) this.families.set(parsed.family, model.id);
    return this;
  }

  /**
   * Take a model out (a model users brought, removed while the server runs): it no longer resolves, and what is
   * remembered of its loads is dropped. Its engine's loaded recognizer is the caller's to release.
   */
  unregisterModel(id: string): boolean {
    const model = this.models.get(id);
    if (!model) return false;
    this.models.delete(id);
    for (const alias of model.aliases ?? []) this.aliases.delete(alias);
    this.failures.delete(id);
    this.loading.delete(id);
    this.loadedOnce.delete(id);
    const family = parseVersionedId(id)!.family;
    if (this.families.get(family) === id) {
      this.families.delete(family);
      for (const other of this.models.values()) {
        const parsed = parseVersionedId(other.id)!;
        const newest = this.families.get(family);
        if (parsed.family === family && (newest === undefined || parseVersionedId(newest)!.version < parsed.version)) this.families.set(family, other.id);
      }
    }
    return true;
  }

  /**
   * Find the model a client asked for: a canonical id, then an alias, then an unversioned family name (newest
   * version). Undefined when nothing matches.
   */
  resolve(modelId: string): ResolvedModel | undefined {
    const canonicalId = this.models.has(modelId) ? modelId : (this.aliases.get(modelId) ?? this.families.get(modelId));
    if (canonicalId === undefined) return undefined;
    const model = this.models.get(canonicalId)!;
    const engine = this.engines.get(model.engineId)!;
    return { engine, canonicalId, model };
  }

  /** Every registered model (canonical ids), sorted by id. */
  list(): SttModelDescriptor[] {
    return [...this.models.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Every offer of every model, in the order the models were registered. */
  offers(): CatalogModel[] {
    return [...this.models.values()].flatMap((m) => (m.offers ?? []).map((o) => ({ ...o, engineModelId: m.id })));
  }

  /** Every other name that resolves to the given canonical id (its aliases and, when newest, its family name). */
  namesOf(canonicalId: string): string[] {
    const out = [...this.aliases.entries()].filter(([, id]) => id === canonicalId).map(([name]) => name);
    for (const [family, id] of this.families) if (id === canonicalId && !this.models.has(family)) out.push(family);
    return out;
  }

  /**
   * The recognizer of a registered model (canonical id), loading it on first use. Rejects with ModelLoadFailedError
   * when the load fails, and at once, without trying, while the last failure is younger than the retry window.
   */
  load(canonicalId: string, options: LoadOptions = {}): Promise<Recognizer> {
    const refusal = this.refusal(canonicalId);
    if (refusal) return Promise.reject(refusal);
    let attempt = this.loading.get(canonicalId);
    if (!attempt) {
      const model = this.models.get(canonicalId);
      if (!model) return Promise.reject(new Error(`no STT model ${canonicalId}`));
      // No caller's signal: the load is shared with every other request for the model.
      const engine = this.engines.get(model.engineId)!;
      const started = Date.now();
      const fresh = !this.loadedOnce.has(canonicalId) || (engine.isLoaded !== undefined && !engine.isLoaded(model.engineModel));
      attempt = engine
        .load(model.engineModel)
        .then(
          (recognizer) => {
            this.loadedOnce.add(canonicalId);
            if (fresh) this.options.onLoaded?.(canonicalId, Date.now() - started);
            if (this.failures.delete(canonicalId)) this.options.log?.('info', 'speech model loaded (its last load had failed)', { model: canonicalId });
            return recognizer;
          },
          (err: unknown) => {
            const reason = err instanceof Error ? err.message : String(err);
            this.failures.set(canonicalId, { reason, at: this.now() });
            this.options.log?.('error', 'speech model could not be loaded: requests for it get model_not_available', {
              model: canonicalId,
              reason,
              retry_after_s: Math.round(this.loadRetryMs / 1000),
            });
            throw new ModelLoadFailedError(canonicalId, reason);
          },
        )
        .finally(() => this.loading.delete(canonicalId));
      attempt.catch(() => undefined); // a caller that gave up (its signal) leaves the rejection to nobody
      this.loading.set(canonicalId, attempt);
    }
    return options.signal ? untilAborted(attempt, options.signal) : attempt;
  }

  /** The decoder pools of every loaded model, by model id, as its engine reports them (metrics); loads nothing. */
  slots(): (PoolSlots & { model: string })[] {
    return this.list().flatMap((m) => (this.engines.get(m.engineId)!.slots?.(m.engineModel) ?? []).map((s) => ({ ...s, model: m.id })));
  }

  /** Why the model's last load failed; undefined when it has not failed, or has loaded since. */
  loadFailure(canonicalId: string): string | undefined {
    return this.failures.get(canonicalId)?.reason;
  }

  /** The model's last load failed within the retry window: requests for it are refused without trying again. */
  refusal(canonicalId: string): ModelLoadFailedError | undefined {
    const failure = this.failures.get(canonicalId);
    return failure && this.now() - failure.at < this.loadRetryMs ? new ModelLoadFailedError(canonicalId, failure.reason) : undefined;
  }

  /**
   * Load every model now, and what its first live session needs (the first warm streaming decoder; more keep loading
   * in the background), one after another, rather than on first use; `onLoaded` hears of each model loaded. A model
   * that cannot load is logged (load()) and refused until a request tries it again.
   */
  async preload(onLoaded: (model: string, ms: number) => void): Promise<void> {
    for (const model of this.list()) {
      if (this.closed) return;
      const started = Date.now();
      const recognizer = await this.load(model.id).catch(() => undefined);
      if (!recognizer) continue;
      try {
        await recognizer.prewarm?.();
      } catch (err) {
        this.options.log?.('warn', 'speech model loaded, but no live decoder could be warmed: the first session loads one', {
          model: model.id,
          reason: (err as Error).message,
        });
      }
      onLoaded(model.id, Date.now() - started);
    }
  }

  /** Close every engine (each releases whatever it loaded). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.engines.values()].map((e) => e.close()));
  }
}

/** `work`, or the signal's reason once it aborts (the work itself goes on for whoever else waits for it). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  let onAbort: (() => void) | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]).finally(() => signal.removeEventListener('abort', onAbort!));
}
