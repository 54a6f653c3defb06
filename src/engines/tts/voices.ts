// The voices of a built-in TTS model: the curated ones (voice-table.ts) whose engine voice is installed here, and
// with `withEngineVariants` the engine's other voices under their own names.
import type { TtsEngine } from './interface.js';
import type { TtsVoice } from './model.js';
import type { Curated } from './voice-table.js';

export function buildVoices(engine: TtsEngine, curated: Curated[], withEngineVariants: boolean): TtsVoice[] {
  const out: TtsVoice[] = [];
  for (const c of curated) {
    const base = c.engineVoice.includes(':') ? c.engineVoice.split(':')[1]! : c.engineVoice;
    const ev = engine.voices.find((v) => v.id === base);
    if (!ev) continue; // not installed here
    out.push({ ...c, gender: c.gender ?? ev.gender, sampleRate: ev.sampleRate, ...(ev.languages ? { languages: ev.languages } : {}) });
  }
  if (withEngineVariants) {
    const taken = new Set(out.map((v) => v.id.toLowerCase()));
    for (const ev of engine.voices) {
      // espeak-ng's own variant names ("Alicia", "male3", ...) and festival voices without a curated entry
      // (another festvox package installed here) are usable as voices too.
      if (out.some((v) => v.engineVoice === ev.id)) continue;
      const id = ev.id.charAt(0).toUpperCase() + ev.id.slice(1);
      if (taken.has(id.toLowerCase())) continue;
      taken.add(id.toLowerCase());
      const lang = ev.languages?.length === 1 ? engine.languages.find((l) => l.code === ev.languages![0]) : undefined;
      out.push({
        id,
        engineVoice: ev.id,
        description: lang ? `${lang.name} ${engine.name} voice "${ev.id}"` : `${engine.name} voice variant "${ev.id}"`,
        gender: ev.gender,
        age: 'middle_aged',
        accent: lang ? lang.name.toLowerCase() : 'american',
        use_case: ['general'],
        style: ['synthetic'],
        sampleRate: ev.sampleRate,
        variant: true,
        ...(ev.languages ? { languages: ev.languages } : {}),
      });
    }
  }
  return out;
}
