// TTS models: public, version-suffixed ids, each served by one engine (its descriptor in the engine list,
// engines/catalog.ts), with human-named voices mapped onto the engine's voices, plus an operator-editable alias table
// (PARLANCE_TTS_MODEL_ALIASES) so client code that pins the public ids (`tts-rt-v2`, ...) runs unchanged. Models
// users bring (the models directory) join the built-in ones under their manifest ids, and the public ids they claim
// in `aliases` are theirs.
import { ConfigError } from '../../lib/config-error.js';
import type { InstalledModel } from '../model-dir/manifest.js';
import type { TtsEngineDescriptor, TtsEngineOptions } from './descriptor.js';
import type { TtsEngine } from './interface.js';
import type { TtsModel } from './model.js';
import { synthesisGate } from './process.js';

export { AGES } from './voice-table.js';

export interface TtsRegistryOptions extends TtsEngineOptions {
  /** `alias=model` pairs (PARLANCE_TTS_MODEL_ALIASES). */
  aliases?: readonly string[];
  /** The model ids to offer (PARLANCE_TTS_MODELS); empty = every model whose engine is installed. */
  enabled?: readonly string[];
  /** The models directory's models: its `tts` ones are offered once sherpa-onnx could use them. */
  installed?: readonly InstalledModel[];
}

export class TtsRegistry {
  private readonly byId = new Map<string, TtsModel>();
  readonly aliases = new Map<string, string>();
  private readonly engines: TtsEngine[] = [];
  /** The built-in model ids of the engines (their ids cannot be taken by a model users brought). */
  private builtIn: readonly string[] = [];
  /** The operator's `alias=model` pairs. */
  private aliasPairs: readonly string[] = [];
  /** The models users brought that are offered, with the aliases each claims. */
  private readonly installed = new Map<string, InstalledModel>();

  /**
   * The models of `engines` (in their order) this machine can speak, and the aliases. The models users brought take
   * the public ids they claim over from the pairs; a claim that cannot hold is a ConfigError.
   */
  static async create(engines: readonly TtsEngineDescriptor[], options: TtsRegistryOptions = {}): Promise<TtsRegistry> {
    const reg = new TtsRegistry();
    const { aliases: aliasPairs = [], enabled = [] } = options;
    const installed = (options.installed ?? []).filter((m) => m.family === 'tts');
    const builtIn = engines.flatMap((e) => e.models);
    checkClaims(builtIn, installed, aliasPairs);
    const known = [...builtIn, ...installed.map((m) => m.id)];
    for (const id of enabled) if (!known.includes(id)) throw new Error(`unknown TTS model "${id}" in PARLANCE_TTS_MODELS; known: ${known.join(', ')}`);
    const wanted = (id: string) => enabled.length === 0 || enabled.includes(id);
    reg.builtIn = builtIn;
    reg.aliasPairs = aliasPairs;
    // Every engine at once (models users brought are checked in child processes meanwhile), listed in their order.
    const built = await Promise.all(engines.map((e) => e.build({ options, wanted, installed: installed.filter((m) => wanted(m.id)) })));
    for (const model of built.flat()) {
      reg.add(model);
      const brought = installed.find((m) => m.id === model.id);
      if (brought) reg.installed.set(model.id, brought);
    }
    reg.relink();
    return reg;
  }

  add(model: TtsModel): void {
    this.byId.set(model.id, model);
    this.engines.push(model.engine);
  }

  /**
   * Offer a model users brought while the server runs (checked and built by the caller), with the aliases its manifest
   * claims; a ConfigError when a claim cannot hold (nothing changes then).
   */
  addInstalled(model: TtsModel, manifest: InstalledModel): void {
    checkClaims(this.builtIn, [...[...this.installed.values()].filter((m) => m.id !== manifest.id), manifest], this.aliasPairs);
    this.add(model);
    this.installed.set(model.id, manifest);
    this.relink();
  }

  /** Offer a model users brought no more; the model, whose engine the caller releases once nobody uses it. */
  removeInstalled(id: string): TtsModel | undefined {
    const model = this.byId.get(id);
    if (!model || !this.installed.has(id)) return undefined;
    this.byId.delete(id);
    this.installed.delete(id);
    const i = this.engines.indexOf(model.engine);
    if (i >= 0) this.engines.splice(i, 1);
    this.relink();
    return model;
  }

  /** A brought model's claims changed (its manifest's aliases); a ConfigError when one cannot hold. */
  updateInstalled(manifest: InstalledModel): void {
    if (!this.installed.has(manifest.id)) return;
    this.checkInstalled([...this.installed.values()].map((m) => (m.id === manifest.id ? manifest : m)));
    this.installed.set(manifest.id, manifest);
    this.relink();
  }

  /** Whether these brought models' ids and claims can hold together with the built-in models and the pairs. */
  checkInstalled(installed: readonly InstalledModel[]): void {
    checkClaims(
      this.builtIn,
      installed.filter((m) => m.family === 'tts'),
      this.aliasPairs,
    );
  }

  /** The brought models offered now. */
  installedIds(): string[] {
    return [...this.installed.keys()];
  }

  /**
   * The alias table anew, in one step: the claims of the brought models first, then the pairs (an alias may be listed
   * with several targets: the first one offered here wins, a fallback when an engine is not installed or not enabled;
   * an alias none of whose targets is offered is simply not offered).
   */
  private relink(): void {
    const next = new Map<string, string>();
    for (const model of this.byId.values()) for (const alias of this.installed.get(model.id)?.aliases ?? []) next.set(alias, model.id);
    for (const pair of this.aliasPairs) {
      const [alias, target, extra] = pair.split('=').map((s) => s.trim());
      if (!alias || !target || extra !== undefined) throw new Error(`TTS model alias "${pair}" must look like alias=model`);
      if (!this.byId.has(target) || next.has(alias)) continue;
      if (this.byId.has(alias)) throw new Error(`TTS model alias ${alias} hides a model of the same id`);
      next.set(alias, target);
    }
    this.aliases.clear();
    for (const [alias, target] of next) this.aliases.set(alias, target);
  }

  resolve(id: string): TtsModel | undefined {
    return this.byId.get(this.aliases.get(id) ?? id);
  }

  models(): TtsModel[] {
    return [...this.byId.values()];
  }

  /** The node's synthesizer process slots, busy and in all (metrics). */
  slots(): { pool: string; busy: number; total: number }[] {
    return [{ pool: 'tts_synthesis', busy: synthesisGate.running, total: synthesisGate.size }];
  }

  async close(): Promise<void> {
    // Synthesis processes live only as long as their request; models users bring keep worker threads.
    await Promise.all([...new Set(this.engines)].map((e) => e.close?.()));
  }
}

/** The ids and aliases of brought TTS models must not hide a built-in model, nor an alias be a model's id. */
function checkClaims(builtIn: readonly string[], installed: readonly InstalledModel[], aliasPairs: readonly string[]): void {
  const modelIds = new Set([...builtIn, ...installed.map((m) => m.id)]);
  const configured = new Set(aliasPairs.map((p) => p.split('=')[0]!.trim()));
  for (const m of installed) {
    if (builtIn.includes(m.id)) throw new ConfigError(`model ${m.id} (${m.dir}) has the id of a built-in TTS model: give it another id`);
    if (configured.has(m.id))
      throw new ConfigError(
        `model ${m.id} (${m.dir}) has the id of a public alias (PARLANCE_TTS_MODEL_ALIASES): give it its own id and claim ${m.id} in "aliases"`,
      );
    for (const alias of m.aliases ?? []) {
      if (modelIds.has(alias)) throw new ConfigError(`model ${m.id} (${m.dir}) claims ${alias}, the id of a TTS model: claim aliases only`);
    }
  }
}
