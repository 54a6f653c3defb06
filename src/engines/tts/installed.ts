// TTS models users bring (the models directory, family `tts`): each is checked by sherpa-onnx in a child process
// (sherpa/engine.ts) and offered under its manifest id, one voice per entry of its `voices` (name → speaker id). A
// model that cannot be used is left out with the reason logged: the server and the other models go on.
import type { InstalledModel } from '../model-dir/manifest.js';
import type { TtsEngineDescriptor, TtsEngineOptions, TtsLog } from './descriptor.js';
import type { TtsModel, TtsVoice } from './model.js';
import { SherpaTtsEngine } from './sherpa/engine.js';
import { voiceGender } from './sherpa/voice-gender.js';

/**
 * The voices of a checked model. A manifest names speaker ids only: the gender is what the makers' voice names say
 * (Kokoro af_/am_, Kitten -f/-m; otherwise neutral), age and accent are neutral, the accent the model's language
 * when it has one.
 */
export function sherpaVoices(engine: SherpaTtsEngine): TtsVoice[] {
  const m = engine.model;
  const accent = engine.languages.length === 1 ? engine.languages[0]!.name.toLowerCase() : 'neutral';
  return engine.speakers.map((s) => ({
    id: s.name,
    engineVoice: String(s.sid),
    description: `${m.name ?? m.id}: speaker ${s.sid} (${m.type} model)`,
    gender: voiceGender(s.name),
    age: 'middle_aged',
    accent,
    use_case: ['general'],
    style: ['neural'],
    sampleRate: engine.sampleRate,
  }));
}

/** Check the models (in parallel) and make the usable ones TTS models; the others are logged and left out. */
export async function installedTtsModels(models: readonly InstalledModel[], options: TtsEngineOptions = {}): Promise<TtsModel[]> {
  const log: TtsLog = options.log ?? ((level, msg) => level !== 'info' && console.error(msg));
  const checked = await Promise.all(
    models.map(async (m): Promise<TtsModel | undefined> => {
      const engine = new SherpaTtsEngine(m, options.sherpa);
      try {
        await engine.init();
      } catch (err) {
        log('error', `${(err as Error).message}; the model is not offered`, { model: m.id, dir: m.dir });
        return undefined;
      }
      if (m.sample_rate !== undefined && m.sample_rate !== engine.sampleRate)
        log('warn', `TTS model ${m.id}: the manifest says sample_rate ${m.sample_rate}, the model speaks at ${engine.sampleRate} Hz (used)`, { model: m.id });
      log('info', 'TTS model ready', { model: m.id, sample_rate: engine.sampleRate, speakers: engine.numSpeakers, voices: engine.speakers.map((s) => s.name) });
      return { id: m.id, name: m.name ?? m.id, engine, voices: sherpaVoices(engine), supportsSilenceReduction: true };
    }),
  );
  return checked.filter((m): m is TtsModel => m !== undefined);
}

/** sherpa-onnx: the TTS models users brought. */
export const sherpaTtsEngine: TtsEngineDescriptor = {
  family: 'tts',
  id: 'sherpa-onnx',
  models: [],
  build: ({ installed, options }) => installedTtsModels(installed, options),
};
