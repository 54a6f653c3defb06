// TTS models: public, version-suffixed ids, each served by one engine, with human-named voices mapped onto
// the engine's voices, plus an operator-editable alias table (PARLANCE_TTS_MODEL_ALIASES) so client code
// that pins the public ids (`tts-rt-v2`, ...) runs unchanged.
import { EspeakEngine } from './espeak.js';
import { FestivalEngine } from './festival.js';
import { FliteEngine } from './flite.js';
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
}

export interface TtsModel {
  id: string;
  name: string;
  engine: TtsEngine;
  voices: TtsVoice[];
  supportsSilenceReduction: boolean;
}

export const AGES = ['young', 'middle_aged', 'old'] as const;

type Curated = Omit<VoiceInfo, 'gender'> & { engineVoice: string; gender?: Gender };

/** The named voices of the espeak-ng model (variant + preferred English accent). */
const ESPEAK_CURATED: Curated[] = [
  { id: 'Adrian', engineVoice: 'en-us:m3', description: 'Warm male narrator', age: 'middle_aged', accent: 'american', use_case: ['narration', 'audiobook', 'assistant'], style: ['warm', 'calm'] },
  { id: 'Maya', engineVoice: 'en-us:f3', description: 'Bright, friendly female voice', age: 'young', accent: 'american', use_case: ['assistant', 'customer_service'], style: ['friendly', 'bright'] },
  { id: 'Oliver', engineVoice: 'en-gb-x-rp:m1', description: 'Measured British male voice', age: 'old', accent: 'british', use_case: ['narration', 'documentary'], style: ['formal', 'calm'] },
  { id: 'Fiona', engineVoice: 'en-gb-scotland:f2', description: 'Clear Scottish female voice', age: 'middle_aged', accent: 'scottish', use_case: ['education', 'assistant'], style: ['clear', 'friendly'] },
  { id: 'Noah', engineVoice: 'en-us:m7', description: 'Energetic young male voice', age: 'young', accent: 'american', use_case: ['advertising', 'gaming'], style: ['energetic'] },
  { id: 'Clara', engineVoice: 'en-gb:f4', description: 'Soft British female voice', age: 'middle_aged', accent: 'british', use_case: ['meditation', 'audiobook'], style: ['soft', 'calm'] },
  { id: 'Rowan', engineVoice: 'en-us:klatt', description: 'Neutral synthetic voice', gender: 'neutral', age: 'middle_aged', accent: 'american', use_case: ['assistant', 'accessibility'], style: ['neutral'] },
  { id: 'Grace', engineVoice: 'en-029:f5', description: 'Gentle Caribbean English female voice', age: 'old', accent: 'caribbean', use_case: ['storytelling'], style: ['warm', 'gentle'] },
  { id: 'Ethan', engineVoice: 'en-us-nyc:m2', description: 'Fast-talking New York male voice', age: 'young', accent: 'american', use_case: ['news', 'advertising'], style: ['energetic', 'direct'] },
  { id: 'Isla', engineVoice: 'en-gb-x-gbclan:f1', description: 'Northern English female voice', age: 'old', accent: 'british', use_case: ['storytelling', 'education'], style: ['warm'] },
];

const FLITE_CURATED: Curated[] = [
  { id: 'Adrian', engineVoice: 'rms', description: 'Warm male narrator (flite rms)', age: 'middle_aged', accent: 'american', use_case: ['narration', 'assistant'], style: ['calm'] },
  { id: 'Maya', engineVoice: 'slt', description: 'Friendly female voice (flite slt)', age: 'young', accent: 'american', use_case: ['assistant', 'customer_service'], style: ['friendly'] },
  { id: 'Alan', engineVoice: 'awb', description: 'Scottish male voice (flite awb)', age: 'middle_aged', accent: 'scottish', use_case: ['narration'], style: ['clear'] },
  { id: 'Archie', engineVoice: 'awb_time', description: 'Scottish male limited-domain voice for speaking times of day (flite awb_time)', age: 'middle_aged', accent: 'scottish', use_case: ['announcements'], style: ['clear'] },
  { id: 'Kevin', engineVoice: 'kal16', description: 'American male diphone voice (flite kal16)', age: 'middle_aged', accent: 'american', use_case: ['assistant', 'accessibility'], style: ['neutral'] },
  { id: 'Kenneth', engineVoice: 'kal', description: 'Telephone-quality American male voice, 8 kHz (flite kal)', age: 'old', accent: 'american', use_case: ['telephony'], style: ['neutral'] },
  { id: 'Sarah', engineVoice: 'slt', description: 'American female voice (flite slt)', age: 'middle_aged', accent: 'american', use_case: ['narration', 'education'], style: ['clear'] },
  { id: 'Richard', engineVoice: 'rms', description: 'American male voice (flite rms)', age: 'middle_aged', accent: 'american', use_case: ['news'], style: ['direct'] },
];

const FESTIVAL_CURATED: Curated[] = [
  { id: 'Adrian', engineVoice: 'kal_diphone', description: 'American male diphone voice (festival kal)', age: 'middle_aged', accent: 'american', use_case: ['narration'], style: ['neutral'] },
  { id: 'Kal', engineVoice: 'kal_diphone', description: 'American male diphone voice (festival kal)', age: 'middle_aged', accent: 'american', use_case: ['assistant'], style: ['neutral'] },
];

function buildVoices(engine: TtsEngine, curated: Curated[], withEngineVariants: boolean): TtsVoice[] {
  const out: TtsVoice[] = [];
  for (const c of curated) {
    const base = c.engineVoice.includes(':') ? c.engineVoice.split(':')[1]! : c.engineVoice;
    const ev = engine.voices.find((v) => v.id === base);
    if (!ev) continue; // not installed here
    out.push({ ...c, gender: c.gender ?? ev.gender, sampleRate: ev.sampleRate });
  }
  if (withEngineVariants) {
    const taken = new Set(out.map((v) => v.id.toLowerCase()));
    for (const ev of engine.voices) {
      // espeak-ng's own variant names ("Alicia", "male3", ...) are usable as voices too.
      const id = ev.id.charAt(0).toUpperCase() + ev.id.slice(1);
      if (taken.has(id.toLowerCase())) continue;
      taken.add(id.toLowerCase());
      out.push({
        id,
        engineVoice: ev.id,
        description: `espeak-ng voice variant "${ev.id}"`,
        gender: ev.gender,
        age: 'middle_aged',
        accent: 'american',
        use_case: ['general'],
        style: ['synthetic'],
        sampleRate: ev.sampleRate,
        variant: true,
      });
    }
  }
  return out;
}

export const DEFAULT_TTS_MODEL = 'parlance-tts-espeak-v1';
export const KNOWN_TTS_MODELS: readonly string[] = [DEFAULT_TTS_MODEL, 'parlance-tts-flite-v1', 'parlance-tts-festival-v1'];

export class TtsRegistry {
  private readonly byId = new Map<string, TtsModel>();
  readonly aliases = new Map<string, string>();
  private readonly engines: TtsEngine[] = [];

  /** `enabled`: the model ids to offer (PARLANCE_TTS_MODELS); empty = every model whose engine is installed. */
  static async create(aliasPairs: readonly string[], enabled: readonly string[] = []): Promise<TtsRegistry> {
    const reg = new TtsRegistry();
    for (const id of enabled) if (!KNOWN_TTS_MODELS.includes(id)) throw new Error(`unknown TTS model "${id}" in PARLANCE_TTS_MODELS; known: ${KNOWN_TTS_MODELS.join(', ')}`);
    const wanted = (id: string) => enabled.length === 0 || enabled.includes(id);
    const espeak = new EspeakEngine();
    if (wanted(DEFAULT_TTS_MODEL) && (await espeak.available())) {
      await espeak.init();
      reg.add({ id: DEFAULT_TTS_MODEL, name: 'Parlance TTS v1 (espeak-ng, multilingual)', engine: espeak, voices: buildVoices(espeak, ESPEAK_CURATED, true), supportsSilenceReduction: true });
    }
    const flite = new FliteEngine();
    if (wanted('parlance-tts-flite-v1') && (await flite.available()))
      reg.add({ id: 'parlance-tts-flite-v1', name: 'Parlance TTS v1 (flite, English)', engine: flite, voices: buildVoices(flite, FLITE_CURATED, false), supportsSilenceReduction: true });
    const festival = new FestivalEngine();
    if (wanted('parlance-tts-festival-v1') && (await festival.available()))
      reg.add({ id: 'parlance-tts-festival-v1', name: 'Parlance TTS v1 (festival, English)', engine: festival, voices: buildVoices(festival, FESTIVAL_CURATED, false), supportsSilenceReduction: false });
    for (const pair of aliasPairs) {
      const [alias, target, extra] = pair.split('=').map((s) => s.trim());
      if (!alias || !target || extra !== undefined) throw new Error(`TTS model alias "${pair}" must look like alias=model`);
      if (!reg.byId.has(target)) continue; // engine not installed: the alias is simply not offered
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
    // Synthesis processes live only as long as their request; nothing pools them.
  }
}
