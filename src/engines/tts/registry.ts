// TTS models: public, version-suffixed ids, each served by one engine, with human-named voices mapped onto
// the engine's voices, plus an operator-editable alias table (PARLANCE_TTS_MODEL_ALIASES) so client code
// that pins the public ids (`tts-rt-v2`, ...) runs unchanged. Models users bring (the models directory) join the
// built-in ones under their manifest ids, and the public ids they claim in `aliases` are theirs.
import { ConfigError } from '../../lib/config-error.js';
import type { InstalledModel } from '../model-dir/manifest.js';
import { EspeakEngine } from './espeak.js';
import { FestivalEngine } from './festival.js';
import { FliteEngine } from './flite.js';
import { installedTtsModels, type InstalledTtsOptions } from './installed.js';
import { synthesisGate } from './process.js';
import { LanguageRoutedEngine } from './routed.js';
import type { TtsEngine } from './interface.js';
import type { TtsModel, TtsVoice } from './model.js';
import { type Curated, ESPEAK_CURATED, FESTIVAL_CURATED, FLITE_CURATED } from './voice-table.js';

export { AGES } from './voice-table.js';

function buildVoices(engine: TtsEngine, curated: Curated[], withEngineVariants: boolean): TtsVoice[] {
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

export const DEFAULT_TTS_MODEL = 'parlance-tts-espeak-v1';
/** The model the public aliases name: English by flite, every other language by espeak-ng (routed.ts). */
export const ROUTED_TTS_MODEL = 'parlance-tts-v1';
export const KNOWN_TTS_MODELS: readonly string[] = [ROUTED_TTS_MODEL, DEFAULT_TTS_MODEL, 'parlance-tts-flite-v1', 'parlance-tts-festival-v1'];

/**
 * English voices of the routed model that flite speaks: each the flite voice nearest in kind, all distinct, so the
 * voices stay tell-apart. Round-trip WER through our recogniser (docs/benchmarks.md): rms 22.2 %, awb 25.9 %, slt
 * 42.0 %, kal16 43.2 %, against 84–94 % for the espeak-ng voices they replace. The other voices (flite has one female
 * speaker) keep espeak-ng's English.
 */
const ENGLISH_BY_FLITE: Readonly<Record<string, string>> = { Adrian: 'rms', Maya: 'slt', Oliver: 'awb', Noah: 'kal16' };

function englishVoiceOf(voice: TtsVoice, flite: TtsEngine): TtsVoice {
  const engineVoice = ENGLISH_BY_FLITE[voice.id];
  const ev = engineVoice === undefined ? undefined : flite.voices.find((v) => v.id === engineVoice);
  return ev ? { ...voice, engineVoice: `${flite.name}:${ev.id}`, sampleRate: ev.sampleRate } : voice;
}

export class TtsRegistry {
  private readonly byId = new Map<string, TtsModel>();
  readonly aliases = new Map<string, string>();
  private readonly engines: TtsEngine[] = [];

  /**
   * `enabled`: the model ids to offer (PARLANCE_TTS_MODELS); empty = every model whose engine is installed.
   * `options.installed`: the models directory's models (its `tts` ones are offered once sherpa-onnx could use them;
   * their `aliases` take those public ids over from `aliasPairs`); a claim that cannot hold is a ConfigError.
   */
  static async create(
    aliasPairs: readonly string[],
    enabled: readonly string[] = [],
    options: InstalledTtsOptions & { installed?: readonly InstalledModel[] } = {},
  ): Promise<TtsRegistry> {
    const reg = new TtsRegistry();
    const installed = (options.installed ?? []).filter((m) => m.family === 'tts');
    checkClaims(installed, aliasPairs);
    const known = [...KNOWN_TTS_MODELS, ...installed.map((m) => m.id)];
    for (const id of enabled) if (!known.includes(id)) throw new Error(`unknown TTS model "${id}" in PARLANCE_TTS_MODELS; known: ${known.join(', ')}`);
    const wanted = (id: string) => enabled.length === 0 || enabled.includes(id);
    // Checked in child processes while the built-in engines start.
    const brought = installedTtsModels(
      installed.filter((m) => wanted(m.id)),
      options,
    );
    const espeak = new EspeakEngine();
    if (wanted(DEFAULT_TTS_MODEL) && (await espeak.available())) {
      await espeak.init();
      reg.add({
        id: DEFAULT_TTS_MODEL,
        name: 'Parlance TTS v1 (espeak-ng, multilingual)',
        engine: espeak,
        voices: buildVoices(espeak, ESPEAK_CURATED, true),
        supportsSilenceReduction: true,
      });
    }
    const flite = new FliteEngine();
    const fliteInstalled = await flite.available();
    if (wanted(ROUTED_TTS_MODEL) && fliteInstalled && (await espeak.available())) {
      if (espeak.languages.length === 0) await espeak.init();
      const english = new Map<string, TtsVoice>();
      reg.add({
        id: ROUTED_TTS_MODEL,
        name: 'Parlance TTS v1 (English: flite; other languages: espeak-ng)',
        engine: new LanguageRoutedEngine(espeak, [flite]),
        voices: buildVoices(espeak, ESPEAK_CURATED, true),
        supportsSilenceReduction: true,
        voiceIn(voice, language) {
          if (language !== 'en') return voice;
          let v = english.get(voice.id);
          if (!v) english.set(voice.id, (v = englishVoiceOf(voice, flite)));
          return v;
        },
      });
    }
    if (wanted('parlance-tts-flite-v1') && fliteInstalled)
      reg.add({
        id: 'parlance-tts-flite-v1',
        name: 'Parlance TTS v1 (flite, English)',
        engine: flite,
        voices: buildVoices(flite, FLITE_CURATED, false),
        supportsSilenceReduction: true,
      });
    const festival = new FestivalEngine();
    if (wanted('parlance-tts-festival-v1') && (await festival.available())) {
      await festival.init();
      const voices = buildVoices(festival, FESTIVAL_CURATED, true);
      const name = `Parlance TTS v1 (festival: ${festival.languages.map((l) => l.name).join(', ')})`;
      if (voices.length) reg.add({ id: 'parlance-tts-festival-v1', name, engine: festival, voices, supportsSilenceReduction: false });
    }
    for (const model of await brought) {
      reg.add(model);
      // Claimed aliases come first: the pairs below skip an alias that is taken.
      for (const alias of installed.find((m) => m.id === model.id)?.aliases ?? []) reg.aliases.set(alias, model.id);
    }
    for (const pair of aliasPairs) {
      const [alias, target, extra] = pair.split('=').map((s) => s.trim());
      if (!alias || !target || extra !== undefined) throw new Error(`TTS model alias "${pair}" must look like alias=model`);
      // An alias may be listed with several targets: the first one offered here wins (a fallback when an engine is
      // not installed or not enabled). Engine not installed for any: the alias is simply not offered.
      if (!reg.byId.has(target) || reg.aliases.has(alias)) continue;
      if (reg.byId.has(alias)) throw new Error(`TTS model alias ${alias} hides a model of the same id`);
      reg.aliases.set(alias, target);
    }
    return reg;
  }

  add(model: TtsModel): void {
    this.byId.set(model.id, model);
    this.engines.push(model.engine);
  }

  resolve(id: string): TtsModel | undefined {
    return this.byId.get(this.aliases.get(id) ?? id);
  }

  models(): TtsModel[] {
    return [...this.byId.values()];
  }

  /** The node's synthesizer process slots, busy and in all (metrics). */
  slots(): { pool: string; busy: number; total: number }[] {
    return [{ pool: 'tts_synthesis', busy: synthesisGate.running, total: synthesisGate.size }];
  }

  async close(): Promise<void> {
    // Synthesis processes live only as long as their request; models users bring keep worker threads.
    await Promise.all([...new Set(this.engines)].map((e) => e.close?.()));
  }
}

/** The ids and aliases of brought TTS models must not hide a built-in model, nor an alias be a model's id. */
function checkClaims(installed: readonly InstalledModel[], aliasPairs: readonly string[]): void {
  const modelIds = new Set([...KNOWN_TTS_MODELS, ...installed.map((m) => m.id)]);
  const configured = new Set(aliasPairs.map((p) => p.split('=')[0]!.trim()));
  for (const m of installed) {
    if (KNOWN_TTS_MODELS.includes(m.id)) throw new ConfigError(`model ${m.id} (${m.dir}) has the id of a built-in TTS model: give it another id`);
    if (configured.has(m.id))
      throw new ConfigError(
        `model ${m.id} (${m.dir}) has the id of a public alias (PARLANCE_TTS_MODEL_ALIASES): give it its own id and claim ${m.id} in "aliases"`,
      );
    for (const alias of m.aliases ?? []) {
      if (modelIds.has(alias)) throw new ConfigError(`model ${m.id} (${m.dir}) claims ${alias}, the id of a TTS model: claim aliases only`);
    }
  }
}
