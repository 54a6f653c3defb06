// A TTS model as the API offers it: a public id, the engine that speaks it, and its human-named voices mapped onto
// the engine's own (the built-in models in registry.ts, the models users bring in installed.ts).
import type { Gender, TtsEngine } from './interface.js';

export interface VoiceInfo {
  id: string;
  description: string;
  gender: Gender;
  age: string;
  accent: string;
  use_case: string[];
  style: string[];
}

export interface TtsVoice extends VoiceInfo {
  /** Engine voice id. */
  engineVoice: string;
  sampleRate: number;
  /** An engine's raw variant offered as-is (not one of the curated, described voices). */
  variant?: boolean;
  /** The only languages this voice speaks (festival voices: one each); undefined = every language of the model. */
  languages?: readonly string[];
}

export interface TtsModel {
  id: string;
  name: string;
  engine: TtsEngine;
  voices: TtsVoice[];
  supportsSilenceReduction: boolean;
  /** The voice that speaks `language` for a voice of this model (a routed model's English voices); default: itself. */
  voiceIn?(voice: TtsVoice, language: string): TtsVoice;
}
