// The public STT model catalog: ids clients send (each engine's models offered under their ids, engines/catalog.ts),
// what serves them, and the operator-editable alias table (public ids that client code pins, e.g. the SDK docs'
// `stt-async-v4`, mapped onto our models).
import type { LoadOptions, Recognizer } from '../../engines/stt/interface.js';
import { type CatalogModel, ModelLoadFailedError, type ResolvedModel, type SttRegistry, type TranscriptionMode } from '../../engines/stt/registry.js';
import type { EngineCatalog } from '../../engines/catalog.js';
import type { TranslationRegistry } from '../../engines/translate/registry.js';
import { oneWayTargets, type PlanResult, planTranslation, type TranslationConfig, twoWayPairs } from '../translation/plan.js';
import { ApiError } from '../../wire/api-error.js';

export type { CatalogModel, TranscriptionMode } from '../../engines/stt/registry.js';

const displayNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });
/** English name of a language code ("es" → "Spanish"), the code itself when ICU does not know it. */
export const languageName = (code: string): string => {
  try {
    return displayNames.of(code) ?? code;
  } catch {
    return code;
  }
};

export interface ResolvedCatalogModel {
  /** The catalog model (after following an alias). */
  model: CatalogModel;
  engine: ResolvedModel;
  /** The model's recognizer, loaded on first use; a model that cannot load is 400 model_not_available. */
  load(options?: LoadOptions): Promise<Recognizer>;
}

/** A public id that stands for a catalog model: in the target's modes, or in `mode` only. */
export interface CatalogAlias {
  alias: string;
  target: string;
  /** A target offered in both modes (a streaming model) is aliased in this one only (`stt-async-v4`, not real time). */
  mode?: TranscriptionMode;
}

/** Catalog key: a streaming model is offered under one id in both modes, as two entries. */
const keyOf = (id: string, mode: TranscriptionMode) => `${mode}\u0000${id}`;

export class ModelCatalog {
  private readonly entries = new Map<string, CatalogModel>();
  private readonly ids = new Set<string>();
  private readonly aliases = new Map<string, CatalogAlias>();

  private readonly registry: SttRegistry;
  /** Installed translation directions (an empty registry: no translation). */
  readonly translation: TranslationRegistry;

  constructor(
    engines: Pick<EngineCatalog, 'stt' | 'translation'>,
    /** Operator pairs (`alias=model`) and the claims of installed models. */
    aliasPairs: readonly (string | CatalogAlias)[] = [],
  ) {
    this.registry = engines.stt;
    this.translation = engines.translation;
    for (const m of this.registry.offers()) {
      this.entries.set(keyOf(m.id, m.mode), m);
      this.ids.add(m.id);
    }
    for (const pair of aliasPairs) {
      const a = typeof pair === 'string' ? parseAliasPair(pair) : pair;
      if (!this.ids.has(a.target)) throw new Error(`model alias ${a.alias} points at unknown model ${a.target}`);
      if (this.ids.has(a.alias)) throw new Error(`model alias ${a.alias} hides a model of the same id`);
      this.aliases.set(a.alias, a);
    }
  }

  /**
   * The model for `id` in `mode`, or 400 model_not_available naming what exists, or saying that it failed to load
   * (while the registry refuses it: it is tried again after its retry window).
   */
  resolve(id: string, mode: TranscriptionMode): ResolvedCatalogModel {
    const alias = this.aliases.get(id);
    const target = alias ? (alias.mode === undefined || alias.mode === mode ? alias.target : undefined) : id;
    const model = target === undefined ? undefined : this.entries.get(keyOf(target, mode));
    if (!model) {
      const offered = [...this.entries.values()].filter((m) => m.mode === mode).map((m) => m.id);
      throw new ApiError(
        'model_not_available',
        `Model "${id}" is not available for ${mode === 'async' ? 'async' : 'real-time'} transcription. Available: ${offered.join(', ')}.`,
      );
    }
    const engine = this.registry.resolve(model.engineModelId)!;
    const failure = this.registry.refusal(engine.canonicalId);
    if (failure) throw notLoaded(id, failure);
    const load = (options?: LoadOptions) =>
      this.registry.load(engine.canonicalId, options).catch((err: unknown) => {
        throw err instanceof ModelLoadFailedError ? notLoaded(id, err) : err;
      });
    return { model, engine, load };
  }

  /** The translation a request gets with `modelId` (a resolved catalog id) recognising `languages`, or why not. */
  planTranslation(config: TranslationConfig, modelId: string, languages: readonly string[]): PlanResult {
    return planTranslation(config, modelId, languages, this.translation);
  }

  /** GET /v1/models entries in the shape the SDK reads (docs/wire-compat.md, "Models and voices"), aliases included. */
  list(): Record<string, unknown>[] {
    const entry = (id: string, m: CatalogModel, aliasOf: string | null) => {
      const engine = this.registry.resolve(m.engineModelId)!;
      const languages = engine.model.languages;
      const targets = oneWayTargets(this.translation, languages);
      const pairs = twoWayPairs(this.translation, languages);
      return {
        id,
        aliased_model_id: aliasOf,
        name: aliasOf ? `${m.name} (alias of ${aliasOf})` : m.name,
        context_version: null,
        transcription_mode: m.mode,
        // The languages the model recognises in speech: translation sources are limited to these.
        languages: languages.map((code) => ({ code, name: languageName(code) })),
        supports_language_hints_strict: true,
        supports_max_endpoint_delay: m.mode === 'real_time',
        supports_endpoint_sensitivity: false,
        supports_endpoint_latency_adjustment: false,
        endpoint_latency_adjustment_max_level: 0,
        // The server's diarizer (src/engines/diarization) labels the tokens of every model, async and real-time.
        supports_speaker_diarization: true,
        // Each token is labelled with the language the model recognised; a one-language model labels every token
        // with that language (it cannot tell other languages apart, so it does not guess).
        supports_language_identification: true,
        // The languages identification can tell apart: only these ever appear as a token's `language`.
        language_identification_languages: [...languages],
        translation_targets: [...targets.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([target_language, source_languages]) => ({ target_language, source_languages, exclude_source_languages: [] })),
        two_way_translation_pairs: pairs,
        // "all_languages": every language in `languages` can be translated one way (to the targets above).
        one_way_translation: languages.length > 0 && languages.every((l) => [...targets.values()].some((s) => s.includes(l))) ? 'all_languages' : null,
        // Two-way translation is offered for the listed pairs only.
        two_way_translation: pairs.length ? 'specific_pairs' : null,
      };
    };
    const out = [...this.entries.values()].map((m) => entry(m.id, m, null));
    for (const a of this.aliases.values()) {
      for (const mode of a.mode ? [a.mode] : (['async', 'real_time'] as const)) {
        const target = this.entries.get(keyOf(a.target, mode));
        if (target) out.push(entry(a.alias, target, a.target));
      }
    }
    return out;
  }
}

/** A model that failed to load: the reason (file names, the engine's words) is the operator's, in the server log. */
function notLoaded(id: string, cause: ModelLoadFailedError): ApiError {
  return new ApiError('model_not_available', `Model "${id}" is not available: it failed to load on this server (the server log says why).`, { cause });
}

/** The error refuses a model that exists but failed to load (an unknown model's error lists those that exist). */
export const failedToLoad = (err: unknown): boolean => err instanceof ApiError && err.cause instanceof ModelLoadFailedError;

/** An operator's `alias=model` pair. */
export function parseAliasPair(pair: string): CatalogAlias {
  const [alias, target, extra] = pair.split('=').map((s) => s.trim());
  if (!alias || !target || extra !== undefined) throw new Error(`model alias "${pair}" must look like alias=model`);
  return { alias, target };
}
