// A TTS engine as the engine catalog (engines/catalog.ts) knows it: an id, the built-in model ids it may offer, and
// how to build those models on this machine (its program looked for, its languages and voices read from it). A
// model's capabilities and languages are its engine's (TtsEngine), its voices the model's own.
import type { InstalledModel } from '../model-dir/manifest.js';
import type { TtsModel } from './model.js';
import type { SherpaTtsOptions } from './sherpa/engine.js';

export type TtsLog = (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;

/** The options of the TTS engines, resolved where the catalog is built (src/create-context.ts). */
export interface TtsEngineOptions {
  log?: TtsLog;
  sherpa?: SherpaTtsOptions;
}

/** What each TTS engine is built from. */
export interface TtsBuildContext {
  options: TtsEngineOptions;
  /** Whether a model is to be offered (PARLANCE_TTS_MODELS; unset: every model). */
  wanted(id: string): boolean;
  /** The TTS models users brought that are wanted (the models directory). */
  installed: readonly InstalledModel[];
}

export interface TtsEngineDescriptor {
  readonly family: 'tts';
  readonly id: string;
  /** The built-in model ids it may offer (PARLANCE_TTS_MODELS may name them); models users brought have their own. */
  readonly models: readonly string[];
  /** Its wanted models this machine can speak, in the order they are listed; none when its program is missing. */
  build(context: TtsBuildContext): Promise<TtsModel[]>;
}
