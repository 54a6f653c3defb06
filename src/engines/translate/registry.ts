// Translation registry: every direction any engine offers, and which engine serves it (the first registered engine
// that has a direction wins, so a better engine listed first in the engine list takes over its pairs).
import type { TranslationEngineDescriptor, TranslationEngineOptions } from './descriptor.js';
import type { TranslateOptions, TranslationEngine, TranslationPair } from './interface.js';

export class TranslationRegistry {
  private readonly engines: TranslationEngine[] = [];
  private readonly byPair = new Map<string, TranslationEngine>();

  register(engine: TranslationEngine): this {
    this.engines.push(engine);
    for (const p of engine.pairs) {
      const key = `${p.source}:${p.target}`;
      if (!this.byPair.has(key)) this.byPair.set(key, engine);
    }
    return this;
  }

  /** Whether `source` → `target` can be translated. */
  has(source: string, target: string): boolean {
    return this.byPair.has(`${source}:${target}`);
  }

  /** Every direction, sorted by source then target. */
  pairs(): TranslationPair[] {
    return [...this.byPair.keys()]
      .map((k) => {
        const [source, target] = k.split(':') as [string, string];
        return { source, target };
      })
      .sort((a, b) => a.source.localeCompare(b.source) || a.target.localeCompare(b.target));
  }

  /** Translate segments `source` → `target` with the engine serving that direction. */
  translate(source: string, target: string, segments: readonly string[], options?: TranslateOptions): Promise<string[]> {
    const engine = this.byPair.get(`${source}:${target}`);
    if (!engine) return Promise.reject(new Error(`no translation engine for ${source}-${target}`));
    return engine.translate(source, target, segments, options);
  }

  /** Warm up the engine serving `source` → `target` (e.g. at the start of a real-time session). */
  prepare(source: string, target: string): void {
    this.byPair.get(`${source}:${target}`)?.prepare?.(source, target);
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.close()));
  }
}

export interface TranslationRegistryOptions extends TranslationEngineOptions {
  /** False: no engines (translation unavailable everywhere). */
  enabled?: boolean;
}

/** The directions of `engines`, each discovered from what is installed, the earlier engine's first. */
export async function createTranslationRegistry(
  engines: readonly TranslationEngineDescriptor[],
  options: TranslationRegistryOptions = {},
): Promise<TranslationRegistry> {
  const registry = new TranslationRegistry();
  if (options.enabled === false) return registry;
  for (const engine of await Promise.all(engines.map((e) => e.build(options)))) registry.register(engine);
  return registry;
}
