// The public model catalog: the STT ids clients send (each engine's models offered under their ids in a mode,
// engines/catalog.ts), what serves them, and the operator-editable alias table (public ids that client code pins,
// e.g. the SDK docs' `stt-async-v4`, mapped onto our models); open() gives the loaded recognizer of an STT model, or
// the synthesizer of a TTS model.
import type { Recognizer, StreamingSession } from '../../engines/stt/interface.js';
import { type CatalogModel, ModelLoadFailedError, type SttRegistry, type TranscriptionMode } from '../../engines/stt/registry.js';
import type { TtsModel } from '../../engines/tts/model.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import type { EngineCatalog } from '../../engines/catalog.js';
import type { TranslationRegistry } from '../../engines/translate/registry.js';
import { oneWayTargets, type PlanResult, planTranslation, type TranslationConfig, twoWayPairs } from '../translation/plan.js';
import { ApiError } from '../../wire/api-error.js';
import type { ModelUse } from './use.js';

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

export interface OpenOptions {
  /** The language of the audio (of the text, for TTS), given to every call of the recognizer; default its first. */
  language?: string;
  /** Stops waiting for the model's load (the load goes on for whoever else waits for it). */
  signal?: AbortSignal;
}

export interface ResolvedCatalogModel {
  /** The catalog model (after following an alias). */
  model: CatalogModel;
  /** The languages the model recognises. */
  languages: readonly string[];
  /** The model's recognizer, loaded on first use; a model that cannot load is 400 model_not_available. */
  open(options?: OpenOptions): Promise<Recognizer>;
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
  private entries = new Map<string, CatalogModel>();
  private ids = new Set<string>();
  private aliases = new Map<string, CatalogAlias>();

  private readonly registry: SttRegistry;
  private readonly tts: TtsRegistry;
  /** Installed translation directions (an empty registry: no translation). */
  readonly translation: TranslationRegistry;

  constructor(
    engines: Pick<EngineCatalog, 'stt' | 'tts' | 'translation'>,
    /** Operator pairs (`alias=model`) and the claims of installed models. */
    aliasPairs: readonly (string | CatalogAlias)[] = [],
    /** Told of every transcription and live session of a model, from start to end (idle unloading, removals). */
    private readonly use?: ModelUse,
  ) {
    this.registry = engines.stt;
    this.tts = engines.tts;
    this.translation = engines.translation;
    this.refresh(aliasPairs);
  }

  /**
   * Read the registry's models again (models brought or removed while the server runs) with this alias table: the
   * entries and aliases change in one step, so a request sees the old table or the new one, never a mix. Throws,
   * changing nothing, when an alias points at no model or hides one.
   */
  refresh(aliasPairs: readonly (string | CatalogAlias)[]): void {
    const entries = new Map<string, CatalogModel>();
    const ids = new Set<string>();
    const aliases = new Map<string, CatalogAlias>();
    for (const m of this.registry.offers()) {
      entries.set(keyOf(m.id, m.mode), m);
      ids.add(m.id);
    }
    for (const pair of aliasPairs) {
      const a = typeof pair === 'string' ? parseAliasPair(pair) : pair;
      if (!ids.has(a.target)) throw new Error(`model alias ${a.alias} points at unknown model ${a.target}`);
      if (ids.has(a.alias)) throw new Error(`model alias ${a.alias} hides a model of the same id`);
      aliases.set(a.alias, a);
    }
    this.entries = entries;
    this.ids = ids;
    this.aliases = aliases;
  }

  /** Every catalog entry (one per id and mode), for the registry's own listing of what is offered. */
  offers(): CatalogModel[] {
    return [...this.entries.values()];
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
    const languages = engine.model.languages;
    const open = async ({ language = languages[0], signal }: OpenOptions = {}) => {
      // Asked for now, and again once loaded: an idle model is not unloaded under a request about to use it.
      this.use?.touch(engine.canonicalId);
      const recognizer = await this.registry.load(engine.canonicalId, { signal }).catch((err: unknown) => {
        throw err instanceof ModelLoadFailedError ? notLoaded(id, err) : err;
      });
      this.use?.touch(engine.canonicalId);
      const use = this.use;
      return inLanguage(use ? tracked(recognizer, () => use.begin(engine.canonicalId)) : recognizer, language);
    };
    return { model, languages, open };
  }

  /**
   * An STT model for `mode`, loaded: its recognizer, in `options.language` (errors as resolve(), and 400
   * model_not_available when it fails to load); or a TTS model ('tts'): its synthesizer, 400 model_not_available
   * when there is none of that id, invalid_request when it does not speak `options.language`.
   */
  open(id: string, mode: TranscriptionMode, options?: OpenOptions): Promise<Recognizer>;
  open(id: string, mode: 'tts', options?: Pick<OpenOptions, 'language'>): Promise<TtsModel>;
  async open(id: string, mode: TranscriptionMode | 'tts', options: OpenOptions = {}): Promise<Recognizer | TtsModel> {
    if (mode !== 'tts') return this.resolve(id, mode).open(options);
    const model = this.tts.resolve(id);
    if (!model) {
      const offered = [...this.tts.models().map((m) => m.id), ...this.tts.aliases.keys()];
      throw new ApiError('model_not_available', `TTS model "${id}" is not available. Available: ${offered.join(', ')}.`);
    }
    const { language } = options;
    if (language !== undefined && !model.engine.languages.some((l) => l.code === language))
      throw new ApiError('invalid_request', `language "${language}" is not supported by model ${id}; GET /v1/tts-models lists the languages.`);
    return model;
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

/**
 * The recognizer with each transcription and live session counted as a use of its model, from its start until it
 * ends (the transcription settles; the session ends, is aborted or fails).
 */
function tracked(recognizer: Recognizer, begin: () => () => void): Recognizer {
  return {
    engineId: recognizer.engineId,
    engineModel: recognizer.engineModel,
    ...(recognizer.prewarm ? { prewarm: () => recognizer.prewarm!() } : {}),
    async transcribe(pcm, options) {
      const done = begin();
      try {
        return await recognizer.transcribe(pcm, options);
      } finally {
        done();
      }
    },
    async stream(options) {
      const done = begin();
      let session: StreamingSession;
      try {
        session = await recognizer.stream(options);
      } catch (err) {
        done();
        throw err;
      }
      const end = session.end.bind(session);
      const abort = session.abort.bind(session);
      session.end = () => end().finally(done);
      session.abort = () => {
        abort();
        done();
      };
      session.on('error', done);
      return session;
    },
  };
}

/** The recognizer with `language` given to each call. */
function inLanguage(recognizer: Recognizer, language: string | undefined): Recognizer {
  if (language === undefined) return recognizer;
  return {
    engineId: recognizer.engineId,
    engineModel: recognizer.engineModel,
    transcribe: (pcm, options) => recognizer.transcribe(pcm, { ...options, language }),
    stream: (options) => recognizer.stream({ ...options, language }),
  };
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
