// An STT engine as the engine catalog (engines/catalog.ts) knows it: an id, and how to build the engine with the
// models it serves from the process's options. Each model says its languages, its capabilities (SttFeatures) and
// the public ids and modes it is offered under; a model is loaded on first use (SttRegistry.load).
import type { InstalledModel } from '../model-dir/manifest.js';
import type { RecognitionContext, SttEngine } from './interface.js';
import type { PocketsphinxOptions } from './pocketsphinx/options.js';
import type { ModelLoadPolicy, SttModelDescriptor } from './registry.js';
import type { SecondPassOptions, SecondPassPool } from './second-pass.js';
import type { SherpaOptions } from './sherpa/engine.js';

/** The options of the STT engines, resolved from the settings where the catalog is built (src/create-context.ts). */
export interface SttEngineOptions extends ModelLoadPolicy {
  pocketsphinx?: PocketsphinxOptions;
  sherpa?: SherpaOptions;
  /**
   * An installed offline model whose words are the final tokens of live sessions (a second pass of each utterance),
   * for pocketsphinx's sessions and streaming models' alike; unset: pocketsphinx decodes its own again, streaming
   * models' words are final. Off when pocketsphinx.secondPass is false.
   */
  secondPassModel?: string;
}

/** What each STT engine is built from. */
export interface SttBuildContext {
  options: SttEngineOptions;
  /** Models users brought (the models directory): an engine takes those of its kind. */
  installed: readonly InstalledModel[];
  /** The live second pass on another model (options.secondPassModel, with pocketsphinx's wait), when there is one. */
  secondPass?: { model: string } & Partial<SecondPassOptions>;
  /** Its second passes, from the engine that serves that model, loaded on first use; set with secondPass. */
  secondPassPool?: () => Promise<SecondPassPool<RecognitionContext>>;
}

export interface SttEngineBuild {
  engine: SttEngine;
  models: readonly SttModelDescriptor[];
  /** The second passes of the context's secondPass model, when this engine serves it. */
  secondPassPool?: () => Promise<SecondPassPool<RecognitionContext>>;
}

export interface SttEngineDescriptor {
  readonly family: 'stt';
  readonly id: string;
  /** The engine and its models; undefined when it has nothing to serve here (no model of its kind installed). */
  build(context: SttBuildContext): SttEngineBuild | undefined;
}
