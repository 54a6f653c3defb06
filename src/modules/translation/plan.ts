// Which translation a request gets, decided once from its `translation` config, the STT model's languages and the
// installed translation directions — and the validation errors that name an unsupported combination.
//
// Rules (spec: Real-time token; docs/wire-compat.md, "Transcript tokens"):
// - one_way {target_language}: speech in a language with a direction to the target is translated to it
//   (originals `original`, then translated tokens `translation`); speech already in the target language is `none`.
//   Accepted when the target is one of the model's languages (everything is `none`) or some recognisable language
//   has a direction to it.
// - two_way {language_a, language_b}: speech in a is translated to b and speech in b to a. Accepted when both
//   directions are installed and the model recognises at least one of the two languages; speech the model cannot
//   recognise never occurs, so with the English-only model an en<->es session translates English speech to es.
// - Language identification: tokens carry the language the model recognised. Today every model recognises one
//   language, so that label is the model's language (no guessing: /v1/models lists the recognisable languages).
import type { TranslationRegistry } from '../../engines/translate/registry.js';

export type TranslationConfig = { type: 'one_way'; target_language: string } | { type: 'two_way'; language_a: string; language_b: string };

export interface TranslationPlan {
  config: TranslationConfig;
  /** Target per recognisable source language; absent = tokens in that language are not translated (`none`). */
  routes: ReadonlyMap<string, string>;
}

/** What the translation of a transcript or session needs: the plan, or the reason it is refused. */
export type PlanResult = { ok: true; plan: TranslationPlan } | { ok: false; message: string };

const list = (xs: readonly string[]) => (xs.length ? xs.join(', ') : 'none');

/** Targets reachable from the model's languages (including the languages themselves, which need no translation). */
export function oneWayTargets(registry: TranslationRegistry, modelLanguages: readonly string[]): Map<string, string[]> {
  const targets = new Map<string, string[]>();
  for (const p of registry.pairs()) {
    if (!modelLanguages.includes(p.source)) continue;
    targets.set(p.target, [...(targets.get(p.target) ?? []), p.source]);
  }
  return targets;
}

/** Two-way pairs usable with the model, "a:b" with a < b, both directions installed, one side recognisable. */
export function twoWayPairs(registry: TranslationRegistry, modelLanguages: readonly string[]): string[] {
  const out = new Set<string>();
  for (const { source: a, target: b } of registry.pairs()) {
    if (!registry.has(b, a)) continue;
    if (!modelLanguages.includes(a) && !modelLanguages.includes(b)) continue;
    out.add(a < b ? `${a}:${b}` : `${b}:${a}`);
  }
  return [...out].sort();
}

export function planTranslation(config: TranslationConfig, modelId: string, modelLanguages: readonly string[], registry: TranslationRegistry): PlanResult {
  const routes = new Map<string, string>();
  if (config.type === 'one_way') {
    const target = config.target_language;
    for (const lang of modelLanguages) if (lang !== target && registry.has(lang, target)) routes.set(lang, target);
    if (routes.size === 0 && !modelLanguages.includes(target)) {
      const available = [...oneWayTargets(registry, modelLanguages).keys()].sort();
      return {
        ok: false,
        message: `one-way translation to "${target}" is not available for model ${modelId}, which recognises ${list(modelLanguages)}; available targets: ${list(available)}`,
      };
    }
    return { ok: true, plan: { config, routes } };
  }
  const { language_a: a, language_b: b } = config;
  const pairName = `two-way translation between "${a}" and "${b}"`;
  if (a === b) return { ok: false, message: `${pairName}: language_a and language_b must differ` };
  if (!registry.has(a, b) || !registry.has(b, a))
    return { ok: false, message: `${pairName} is not available for model ${modelId}; available pairs: ${list(twoWayPairs(registry, modelLanguages))}` };
  if (!modelLanguages.includes(a) && !modelLanguages.includes(b))
    return { ok: false, message: `${pairName} is not available for model ${modelId}, which recognises only ${list(modelLanguages)}` };
  if (modelLanguages.includes(a)) routes.set(a, b);
  if (modelLanguages.includes(b)) routes.set(b, a);
  return { ok: true, plan: { config, routes } };
}

/**
 * Strict language hints the model cannot recognise, with their index, for validation errors. The two languages of
 * a two-way translation are exempt: the SDK's `translate({between: [a, b]})` always sends them as strict hints,
 * and the plan already says which of them is recognised (speech in the other one never occurs).
 */
export function unsupportedHints(
  hints: readonly string[],
  modelLanguages: readonly string[],
  translation?: TranslationConfig,
): { index: number; language: string }[] {
  const exempt = translation?.type === 'two_way' ? [translation.language_a, translation.language_b] : [];
  return hints.flatMap((language, index) => (modelLanguages.includes(language) || exempt.includes(language) ? [] : [{ index, language }]));
}
