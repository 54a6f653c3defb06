// GET /v1/tts-voices: the shared voices of one model, filtered by the query and paged by voice id.
import type { TtsVoice } from '../../engines/tts/model.js';
import { AGES, type TtsRegistry } from '../../engines/tts/registry.js';
import { type CursorCodec, invalidCursor } from '../../lib/cursor.js';
import { ApiError, invalidField } from '../../wire/api-error.js';

export interface VoiceList {
  voices: Omit<TtsVoice, 'engineVoice' | 'sampleRate' | 'languages'>[];
  next_page_cursor: string | null;
}

export interface VoiceQuery {
  model?: unknown;
  gender?: unknown;
  age?: unknown;
  accent?: unknown;
  use_case?: unknown;
  style?: unknown;
  limit?: unknown;
  cursor?: unknown;
  /** Extension: only voices that speak this language code. */
  language?: unknown;
}

/** Shared voices of one model, filtered, paged by voice id. */
export function listVoices(registry: TtsRegistry, cursors: CursorCodec, q: VoiceQuery): VoiceList {
  const one = (k: string, max?: number): string | undefined => {
    let v = q[k as keyof VoiceQuery];
    if (Array.isArray(v)) {
      if (v.length !== 1) throw invalidField(k, 'must be given once', 'invalid_value');
      v = v[0];
    }
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw invalidField(k, 'must be a string', 'invalid_type');
    if (max !== undefined && v.length > max) throw invalidField(k, `must be at most ${max} characters`, 'invalid_length');
    return v;
  };
  const many = (k: 'use_case' | 'style'): string[] => {
    const raw = q[k];
    if (raw === undefined) return [];
    const list = (Array.isArray(raw) ? raw : [raw])
      .flatMap((v) => String(v).split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    if (list.length > 10) throw invalidField(k, 'at most 10 values', 'invalid_length');
    for (const v of list) if (v.length > 40) throw invalidField(k, 'each value must be at most 40 characters', 'invalid_length');
    return list;
  };
  const modelId = one('model', 64);
  if (modelId === undefined || modelId === '') throw invalidField('model', 'is required', 'missing');
  const gender = one('gender');
  if (gender !== undefined && !['male', 'female', 'neutral'].includes(gender)) throw invalidField('gender', 'must be male, female or neutral');
  const age = one('age', 40);
  if (age !== undefined && !(AGES as readonly string[]).includes(age)) throw invalidField('age', `must be one of ${AGES.join(', ')}`);
  const accent = one('accent', 40);
  const language = one('language', 16);
  const useCases = many('use_case');
  const styles = many('style');
  const limitRaw = one('limit');
  let limit = 100;
  if (limitRaw !== undefined) {
    if (!/^\d+$/.test(limitRaw)) throw invalidField('limit', 'must be an integer from 1 to 200', 'invalid_type');
    limit = Number(limitRaw);
    if (limit < 1 || limit > 200) throw invalidField('limit', 'must be from 1 to 200', 'out_of_range');
  }
  const cursor = one('cursor');
  const model = registry.resolve(modelId);
  if (!model) throw new ApiError('invalid_request', `No TTS model with id "${modelId}".`, { status: 404 });
  const list = `tts-voices:${modelId}`;
  const pos = cursors.positionOf(cursor, list);
  const after = pos?.key[0];
  if (pos !== undefined && typeof after !== 'string') throw invalidCursor();
  const lower = (s: string) => s.toLowerCase();
  const matches = model.voices
    .filter((v) => gender === undefined || v.gender === gender)
    .filter((v) => age === undefined || v.age === age)
    .filter((v) => accent === undefined || lower(v.accent) === lower(accent))
    .filter((v) => language === undefined || (v.languages ?? model.engine.languages.map((l) => l.code)).includes(language))
    .filter((v) => useCases.every((u) => v.use_case.map(lower).includes(lower(u))))
    .filter((v) => styles.every((s) => v.style.map(lower).includes(lower(s))))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .filter((v) => after === undefined || v.id > after);
  const page = matches.slice(0, limit);
  const next = matches.length > limit ? cursors.encode({ list, key: [page[page.length - 1]!.id] }) : null;
  return {
    voices: page.map((v) => ({ id: v.id, description: v.description, gender: v.gender, age: v.age, accent: v.accent, use_case: v.use_case, style: v.style })),
    next_page_cursor: next,
  };
}
