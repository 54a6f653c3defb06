// The TTS models a node offers, as GET /v1/tts-models and `parlance models list` show them.
import type { TtsModel } from '../../engines/tts/model.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';

/** The speed range every model accepts (the engines' own wider range is kept for styles). */
export const SPEED_MIN = 0.7;
export const SPEED_MAX = 1.3;

export interface TtsModelRecord {
  id: string;
  aliased_model_id: string | null;
  name: string;
  languages: { code: string; name: string }[];
  voices: { id: string; description: string; gender: 'male' | 'female' | 'neutral' }[];
  supports_timestamps: boolean;
  supports_speed_adjustment: boolean;
  speed_min: number;
  speed_max: number;
  supports_silence_reduction: boolean;
}

/** Every model, then every alias as its own entry pointing at its model. */
export function ttsModelRecords(registry: TtsRegistry): TtsModelRecord[] {
  const entry = (m: TtsModel, id: string, aliased: string | null): TtsModelRecord => ({
    id,
    aliased_model_id: aliased,
    name: aliased ? `${m.name} (alias ${id})` : m.name,
    languages: m.engine.languages.map((l) => ({ code: l.code, name: l.name })),
    voices: m.voices.map((v) => ({ id: v.id, description: v.description, gender: v.gender })),
    supports_timestamps: m.engine.supportsTimestamps,
    supports_speed_adjustment: m.engine.supportsSpeed,
    speed_min: SPEED_MIN,
    speed_max: SPEED_MAX,
    supports_silence_reduction: m.supportsSilenceReduction,
  });
  const out = registry.models().map((m) => entry(m, m.id, null));
  for (const [alias, target] of registry.aliases) out.push(entry(registry.resolve(target)!, alias, target));
  return out;
}
