// The gender of a model's voice from the name its makers gave it, where their naming says it: Kokoro's `af_bella`,
// `bm_george` (second letter f/m), Kitten's `expr-voice-2-f` (last letter). Other names (Piper speakers, names a
// manifest chose) say nothing: neutral.
import type { Gender } from '../interface.js';

export function voiceGender(name: string): Gender {
  const m = /^[a-z]([fm])_/.exec(name) ?? /-([fm])$/.exec(name);
  return m?.[1] === 'f' ? 'female' : m?.[1] === 'm' ? 'male' : 'neutral';
}
