// STT model registry: public model ids → (engine, engine-specific model key).
//
// Canonical ids are version-suffixed ("parlance-en-pocketsphinx-v1"). A model also answers to its aliases and to its
// unversioned family name ("parlance-en-pocketsphinx"), which follows the highest registered version. Lookups are
// exact (case-sensitive), like the ids clients send. The API layer turns `resolve() === undefined` into
// model_not_available.
import type { SttEngine, SttFeatures } from './interface.js';

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
}

export interface ResolvedModel {
  engine: SttEngine;
  canonicalId: string;
  model: SttModelDescriptor;
}

const VERSIONED = /^(.+)-v(\d+)$/;

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

  registerEngine(engine: SttEngine): this {
    if (this.engines.has(engine.id)) throw new Error(`STT engine '${engine.id}' is already registered`);
    this.engines.set(engine.id, engine);
    return this;
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

  /** Every other name that resolves to the given canonical id (its aliases and, when newest, its family name). */
  namesOf(canonicalId: string): string[] {
    const out = [...this.aliases.entries()].filter(([, id]) => id === canonicalId).map(([name]) => name);
    for (const [family, id] of this.families) if (id === canonicalId && !this.models.has(family)) out.push(family);
    return out;
  }

  /**
   * Load every model now, and what its first live session needs (the first warm streaming decoder; more keep loading
   * in the background), one after another, rather than on first use; `onLoaded` hears of each model loaded or failed.
   * A model that cannot load is reported and left for first use.
   */
  async preload(onLoaded: (model: string, outcome: { ms: number } | { error: Error }) => void): Promise<void> {
    for (const model of this.list()) {
      if (this.closed) return;
      const started = Date.now();
      try {
        const recognizer = await this.engines.get(model.engineId)!.load(model.engineModel);
        await recognizer.prewarm?.();
        onLoaded(model.id, { ms: Date.now() - started });
      } catch (err) {
        onLoaded(model.id, { error: err instanceof Error ? err : new Error(String(err)) });
      }
    }
  }

  /** Close every engine (each releases whatever it loaded). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.engines.values()].map((e) => e.close()));
  }
}
