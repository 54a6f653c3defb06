// Speech-to-text models as GET /v1/models lists them (the fields the console uses).
import { api } from './api.js';
import type { Choice } from './ui.js';

export interface SttModel {
  id: string;
  name: string;
  transcription_mode: 'real_time' | 'async';
  languages: { code: string; name: string }[];
  translation_targets: { target_language: string; source_languages: string[] }[];
  /** "a:b" pairs. */
  two_way_translation_pairs: string[];
}

export const loadSttModels = async (mode: SttModel['transcription_mode']): Promise<SttModel[]> =>
  (await api<{ models: SttModel[] }>('/v1/models')).models.filter((m) => m.transcription_mode === mode);

export type Translation = { type: 'one_way'; target_language: string } | { type: 'two_way'; language_a: string; language_b: string } | undefined;

/** "none", "one_way:es" or "two_way:en:es" (a select's value) → the API's translation object. */
export function translationOf(choice: string): Translation {
  const [type, a, b] = choice.split(':');
  if (type === 'one_way' && a) return { type, target_language: a };
  if (type === 'two_way' && a && b) return { type, language_a: a, language_b: b };
  return undefined;
}

/** Options for a translation select, from a model's targets and pairs. */
/** The models as drop-down choices. */
export const modelChoices = (models: readonly { id: string; name: string }[] | undefined): Choice[] =>
  models?.map((m) => ({ value: m.id, label: m.name })) ?? [];

/** The translations a model offers, after "No translation" (value `none`). */
export function translationChoices(m: SttModel | undefined): Choice[] {
  const none = { value: 'none', label: 'No translation' };
  if (!m) return [none];
  const one = m.translation_targets.map((t) => ({ value: `one_way:${t.target_language}`, label: `Into ${t.target_language}` }));
  const two = m.two_way_translation_pairs.map((p) => {
    const [a, b] = p.split(':');
    return { value: `two_way:${a}:${b}`, label: `Between ${a} and ${b}` };
  });
  return [none, ...one, ...two];
}

export const splitList = (text: string, by: RegExp = /[,\s]+/): string[] =>
  text
    .split(by)
    .map((s) => s.trim())
    .filter(Boolean);
