// TTS models: public, version-suffixed ids, each served by one engine, with human-named voices mapped onto
// the engine's voices, plus an operator-editable alias table (PARLANCE_TTS_MODEL_ALIASES) so client code
// that pins the public ids (`tts-rt-v2`, ...) runs unchanged. Models users bring (the models directory) join the
// built-in ones under their manifest ids, and the public ids they claim in `aliases` are theirs.
import { ConfigError } from '../../config/settings.js';
import type { InstalledModel } from '../model-dir/manifest.js';
import { EspeakEngine } from './espeak.js';
import { FestivalEngine } from './festival.js';
import { FliteEngine } from './flite.js';
import { installedTtsModels, type InstalledTtsOptions } from './installed.js';
import { LanguageRoutedEngine } from './routed.js';
import type { Gender, TtsEngine } from './interface.js';

export interface VoiceInfo {
  id: string;
  description: string;
  gender: Gender;
  age: string;
  accent: string;
  use_case: string[];
  style: string[];
}

export interface TtsVoice extends VoiceInfo {
  /** Engine voice id. */
  engineVoice: string;
  sampleRate: number;
  /** An engine's raw variant offered as-is (not one of the curated, described voices). */
  variant?: boolean;
  /** The only languages this voice speaks (festival voices: one each); undefined = every language of the model. */
  languages?: readonly string[];
}

export interface TtsModel {
  id: string;
  name: string;
  engine: TtsEngine;
  voices: TtsVoice[];
  supportsSilenceReduction: boolean;
  /** The voice that speaks `language` for a voice of this model (a routed model's English voices); default: itself. */
  voiceIn?(voice: TtsVoice, language: string): TtsVoice;
}

export const AGES = ['young', 'middle_aged', 'old'] as const;

type Curated = Omit<VoiceInfo, 'gender'> & { engineVoice: string; gender?: Gender };

/** The named voices of the espeak-ng model (variant + preferred English accent). */
const ESPEAK_CURATED: Curated[] = [
  {
    id: 'Adrian',
    engineVoice: 'en-us:m3',
    description: 'Warm male narrator',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['narration', 'audiobook', 'assistant'],
    style: ['warm', 'calm'],
  },
  {
    id: 'Maya',
    engineVoice: 'en-us:f3',
    description: 'Bright, friendly female voice',
    age: 'young',
    accent: 'american',
    use_case: ['assistant', 'customer_service'],
    style: ['friendly', 'bright'],
  },
  {
    id: 'Oliver',
    engineVoice: 'en-gb-x-rp:m1',
    description: 'Measured British male voice',
    age: 'old',
    accent: 'british',
    use_case: ['narration', 'documentary'],
    style: ['formal', 'calm'],
  },
  {
    id: 'Fiona',
    engineVoice: 'en-gb-scotland:f2',
    description: 'Clear Scottish female voice',
    age: 'middle_aged',
    accent: 'scottish',
    use_case: ['education', 'assistant'],
    style: ['clear', 'friendly'],
  },
  {
    id: 'Noah',
    engineVoice: 'en-us:m7',
    description: 'Energetic young male voice',
    age: 'young',
    accent: 'american',
    use_case: ['advertising', 'gaming'],
    style: ['energetic'],
  },
  {
    id: 'Clara',
    engineVoice: 'en-gb:f4',
    description: 'Soft British female voice',
    age: 'middle_aged',
    accent: 'british',
    use_case: ['meditation', 'audiobook'],
    style: ['soft', 'calm'],
  },
  {
    id: 'Rowan',
    engineVoice: 'en-us:klatt',
    description: 'Neutral synthetic voice',
    gender: 'neutral',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['assistant', 'accessibility'],
    style: ['neutral'],
  },
  {
    id: 'Grace',
    engineVoice: 'en-029:f5',
    description: 'Gentle Caribbean English female voice',
    age: 'old',
    accent: 'caribbean',
    use_case: ['storytelling'],
    style: ['warm', 'gentle'],
  },
  {
    id: 'Ethan',
    engineVoice: 'en-us-nyc:m2',
    description: 'Fast-talking New York male voice',
    age: 'young',
    accent: 'american',
    use_case: ['news', 'advertising'],
    style: ['energetic', 'direct'],
  },
  {
    id: 'Isla',
    engineVoice: 'en-gb-x-gbclan:f1',
    description: 'Northern English female voice',
    age: 'old',
    accent: 'british',
    use_case: ['storytelling', 'education'],
    style: ['warm'],
  },
];

const FLITE_CURATED: Curated[] = [
  {
    id: 'Adrian',
    engineVoice: 'rms',
    description: 'Warm male narrator (flite rms)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['narration', 'assistant'],
    style: ['calm'],
  },
  {
    id: 'Maya',
    engineVoice: 'slt',
    description: 'Friendly female voice (flite slt)',
    age: 'young',
    accent: 'american',
    use_case: ['assistant', 'customer_service'],
    style: ['friendly'],
  },
  {
    id: 'Alan',
    engineVoice: 'awb',
    description: 'Scottish male voice (flite awb)',
    age: 'middle_aged',
    accent: 'scottish',
    use_case: ['narration'],
    style: ['clear'],
  },
  {
    id: 'Archie',
    engineVoice: 'awb_time',
    description: 'Scottish male limited-domain voice for speaking times of day (flite awb_time)',
    age: 'middle_aged',
    accent: 'scottish',
    use_case: ['announcements'],
    style: ['clear'],
  },
  {
    id: 'Kevin',
    engineVoice: 'kal16',
    description: 'American male diphone voice (flite kal16)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['assistant', 'accessibility'],
    style: ['neutral'],
  },
  {
    id: 'Kenneth',
    engineVoice: 'kal',
    description: 'Telephone-quality American male voice, 8 kHz (flite kal)',
    age: 'old',
    accent: 'american',
    use_case: ['telephony'],
    style: ['neutral'],
  },
  {
    id: 'Sarah',
    engineVoice: 'slt',
    description: 'American female voice (flite slt)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['narration', 'education'],
    style: ['clear'],
  },
  {
    id: 'Richard',
    engineVoice: 'rms',
    description: 'American male voice (flite rms)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['news'],
    style: ['direct'],
  },
];

// Festival voices from Debian's festvox-* packages; each speaks one language (its engine voice's).
const FESTIVAL_CURATED: Curated[] = [
  {
    id: 'Adrian',
    engineVoice: 'kal_diphone',
    description: 'American English male diphone voice (festival kal)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['narration'],
    style: ['neutral'],
  },
  {
    id: 'Kal',
    engineVoice: 'kal_diphone',
    description: 'American English male diphone voice (festival kal)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['assistant'],
    style: ['neutral'],
  },
  {
    id: 'Keith',
    engineVoice: 'ked_diphone',
    description: 'American English male diphone voice (festival ked)',
    age: 'middle_aged',
    accent: 'american',
    use_case: ['assistant', 'accessibility'],
    style: ['neutral'],
  },
  {
    id: 'Sarah',
    engineVoice: 'cmu_us_slt_arctic_hts',
    description: 'American English female HTS voice, smooth statistical synthesis (festival slt)',
    age: 'young',
    accent: 'american',
    use_case: ['narration', 'assistant'],
    style: ['clear', 'smooth'],
  },
  {
    id: 'Ona',
    engineVoice: 'upc_ca_ona_hts',
    description: 'Catalan female HTS voice, central Catalan (festival ona, Festcat)',
    age: 'middle_aged',
    accent: 'central_catalan',
    use_case: ['narration', 'assistant'],
    style: ['clear'],
  },
  {
    id: 'Dita',
    engineVoice: 'czech_dita',
    description: 'Czech adult female voice (festival dita)',
    age: 'middle_aged',
    accent: 'czech',
    use_case: ['narration', 'assistant'],
    style: ['clear'],
  },
  {
    id: 'Kuba',
    engineVoice: 'czech_krb',
    description: 'Czech boy voice (festival krb, a child speaker)',
    gender: 'male',
    age: 'young',
    accent: 'czech',
    use_case: ['storytelling', 'gaming'],
    style: ['bright'],
  },
  {
    id: 'Marek',
    engineVoice: 'czech_machac',
    description: 'Czech adult male voice (festival machac)',
    age: 'middle_aged',
    accent: 'czech',
    use_case: ['narration', 'news'],
    style: ['calm'],
  },
  {
    id: 'Petr',
    engineVoice: 'czech_ph',
    description: 'Czech male voice (festival ph)',
    age: 'middle_aged',
    accent: 'czech',
    use_case: ['assistant'],
    style: ['neutral'],
  },
  {
    id: 'Leena',
    engineVoice: 'suo_fi_lj_diphone',
    description: 'Finnish female diphone voice (festival suopuhe lj)',
    gender: 'female',
    age: 'middle_aged',
    accent: 'finnish',
    use_case: ['narration', 'assistant'],
    style: ['clear'],
  },
  {
    id: 'Mikko',
    engineVoice: 'hy_fi_mv_diphone',
    description: 'Finnish male diphone voice, Helsinki (festival suopuhe mv)',
    age: 'middle_aged',
    accent: 'finnish',
    use_case: ['narration', 'assistant'],
    style: ['calm'],
  },
  {
    id: 'Arjun',
    engineVoice: 'hindi_NSK_diphone',
    description: 'Hindi male diphone voice (festival NSK, IIIT Hyderabad)',
    age: 'middle_aged',
    accent: 'indian',
    use_case: ['assistant', 'accessibility'],
    style: ['neutral'],
  },
  {
    id: 'Lucia',
    engineVoice: 'lp_diphone',
    description: 'Italian female diphone voice (festival lp)',
    age: 'middle_aged',
    accent: 'italian',
    use_case: ['assistant', 'education'],
    style: ['clear'],
  },
  {
    id: 'Paolo',
    engineVoice: 'pc_diphone',
    description: 'Italian male diphone voice (festival pc)',
    age: 'middle_aged',
    accent: 'italian',
    use_case: ['narration', 'assistant'],
    style: ['calm'],
  },
  {
    id: 'Sachin',
    engineVoice: 'marathi_NSK_diphone',
    description: 'Marathi male diphone voice (festival NSK, IIIT Hyderabad)',
    age: 'middle_aged',
    accent: 'indian',
    use_case: ['assistant', 'accessibility'],
    style: ['neutral'],
  },
  {
    id: 'Nikolai',
    engineVoice: 'msu_ru_nsh_clunits',
    description: 'Russian male unit-selection voice, Moscow (festival msu nsh)',
    age: 'middle_aged',
    accent: 'russian',
    use_case: ['narration', 'assistant'],
    style: ['natural'],
  },
  {
    id: 'Ravi',
    engineVoice: 'telugu_NSK_diphone',
    description: 'Telugu male diphone voice (festival NSK, IIIT Hyderabad)',
    age: 'middle_aged',
    accent: 'indian',
    use_case: ['assistant', 'accessibility'],
    style: ['neutral'],
  },
];

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
