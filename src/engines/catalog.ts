// The engine catalog: every engine of this build, one descriptor each in ENGINES, and the models they serve here,
// each engine built from its own options. Adding an engine is its folder (the engine and its descriptor) and one
// line in ENGINES (docs/architecture.md, "Where to add things").
import type { InstalledModel } from './model-dir/manifest.js';
import type { SttBuildContext, SttEngineDescriptor, SttEngineOptions } from './stt/descriptor.js';
import type { RecognitionContext } from './stt/interface.js';
import { pocketsphinxEngine } from './stt/pocketsphinx/descriptor.js';
import { SttRegistry } from './stt/registry.js';
import type { SecondPassPool } from './stt/second-pass.js';
import { sherpaSttEngine } from './stt/sherpa/descriptor.js';
import type { TtsEngineDescriptor } from './tts/descriptor.js';
import { espeakTtsEngine } from './tts/espeak.js';
import { festivalTtsEngine } from './tts/festival.js';
import { fliteTtsEngine } from './tts/flite.js';
import { sherpaTtsEngine } from './tts/installed.js';
import { TtsRegistry, type TtsRegistryOptions } from './tts/registry.js';
import { routedTtsEngine } from './tts/routed.js';
import { apertiumEngine } from './translate/apertium/descriptor.js';
import type { TranslationEngineDescriptor } from './translate/descriptor.js';
import { createTranslationRegistry, type TranslationRegistry, type TranslationRegistryOptions } from './translate/registry.js';

export type EngineDescriptor = SttEngineDescriptor | TtsEngineDescriptor | TranslationEngineDescriptor;

/** Every engine; within a family, in the order its models are listed. */
export const ENGINES: readonly EngineDescriptor[] = [
  pocketsphinxEngine,
  sherpaSttEngine,
  espeakTtsEngine,
  routedTtsEngine,
  fliteTtsEngine,
  festivalTtsEngine,
  sherpaTtsEngine,
  apertiumEngine,
];

export interface EngineOptions {
  /** Models users brought (the models directory): each engine takes those of its kind. */
  installed?: readonly InstalledModel[];
  stt?: SttEngineOptions;
  tts?: Omit<TtsRegistryOptions, 'installed'>;
  translation?: TranslationRegistryOptions;
}

export class EngineCatalog {
  private constructor(
    readonly stt: SttRegistry,
    readonly tts: TtsRegistry,
    readonly translation: TranslationRegistry,
  ) {}

  static async create(options: EngineOptions = {}, engines: readonly EngineDescriptor[] = ENGINES): Promise<EngineCatalog> {
    const installed = options.installed ?? [];
    const stt = sttRegistry(engines, options.stt ?? {}, installed);
    const [tts, translation] = await Promise.all([
      TtsRegistry.create(
        engines.filter((e) => e.family === 'tts'),
        { ...options.tts, installed },
      ),
      createTranslationRegistry(
        engines.filter((e) => e.family === 'translate'),
        options.translation,
      ),
    ]);
    return new EngineCatalog(stt, tts, translation);
  }

  /** The slots of every engine's pools, as each reports them (metrics); loads nothing. */
  slots(): { pool: string; model?: string; busy: number; total: number }[] {
    return [...this.stt.slots(), ...this.tts.slots()];
  }

  /** Release every engine. */
  async close(): Promise<void> {
    await Promise.all([this.stt.close(), this.tts.close(), this.translation.close()]);
  }
}

/** The STT engines built, their models registered in the order of `engines`. */
function sttRegistry(engines: readonly EngineDescriptor[], options: SttEngineOptions, installed: readonly InstalledModel[]): SttRegistry {
  const ps = options.pocketsphinx ?? {};
  const secondPass = options.secondPassModel && ps.secondPass !== false ? { model: options.secondPassModel, ...ps.secondPass } : undefined;
  // The engine serving the second-pass model is known once every engine is built; its pool is asked for later.
  let served: (() => Promise<SecondPassPool<RecognitionContext>>) | undefined;
  const context: SttBuildContext = {
    options,
    installed,
    ...(secondPass && {
      secondPass,
      secondPassPool: () => served?.() ?? Promise.reject(new Error(`no engine serves the second-pass model ${secondPass.model}`)),
    }),
  };
  const registry = new SttRegistry(options);
  for (const descriptor of engines) {
    const built = descriptor.family === 'stt' ? descriptor.build(context) : undefined;
    if (!built) continue;
    registry.registerEngine(built.engine);
    for (const model of built.models) registry.registerModel(model);
    served ??= built.secondPassPool;
  }
  return registry;
}
