// What "cloning" means here: no neural voice model, but a measured match. The reference clip's speaker is
// described by src/audio/features.ts (pitch median and range, speaking rate, spectral centroid, MFCC means);
// each built-in voice of a TTS model is described the same way from a fixed text it speaks once (cached in
// memory and on disk). The nearest built-in voice on normalised features becomes the base, and its pitch range
// (engine prosody, where the engine has one), rate (engine speed) and pitch (a formant-preserving rubberband
// shift after synthesis) are adapted to the speaker, calibrated by rendering the base once and measuring it.
// With a speaker-embedding model installed (engines/speaker), the base is the voice whose embedding is the most
// similar to the reference's instead: a model trained to tell speakers apart judges "sounds like" better than five
// hand-picked features.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PCM_SAMPLE_RATE } from '../../audio/decode.js';
import { shiftPitch } from '../../audio/pitch-shift.js';
import type { VoiceProfile } from '../../audio/features.js';
import { voiceProfileOffThread } from '../../audio/audio-thread.js';
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import { cosine } from '../../engines/speaker/cluster.js';
import type { SpeakerEmbedder } from '../../engines/speaker/engine.js';

/** Harvard sentences: phonetically balanced English, about six seconds spoken. */
export const PROFILE_TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well.';
/** Bump when the profile text or the features change: cached profiles of another version are recomputed. */
const PROFILE_VERSION = 1;

/** How a cloned voice is spoken by one model: stored per voice and model once ready. */
export interface VoiceAdaptation {
  /** Built-in voice of the model used as the base. */
  base_voice: string;
  /** Pitch shift after synthesis, in semitones. */
  pitch_semitones: number;
  /** Intonation range relative to the base voice (1 where the engine cannot change it). */
  pitch_range: number;
  /** Speaking-rate multiplier applied through the engine's speed. */
  rate: number;
  /** Distance of the base voice's profile to the reference (normalised units; smaller is closer). */
  distance: number;
  /** Cosine similarity of the base voice's speaker embedding to the reference's, when embeddings chose the base. */
  similarity?: number;
}

export const RATE_MIN = 0.6;
export const RATE_MAX = 1.6;
const RANGE_MIN = 0.4;
const RANGE_MAX = 2.5;
const SHIFT_MAX = 12;
/** A reference needs this much voiced speech (10 ms frames) to be measured at all. */
export const MIN_VOICED_FRAMES = 50;

/** A 16-bit PCM buffer's samples (copied: a Buffer's offset may be odd). */
export const pcmSamples = (pcm: Buffer): Int16Array => new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength - (pcm.byteLength % 2)));
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const semitones = (hz: number) => 12 * Math.log2(Math.max(hz, 1) / 100);

/** Feature scales: a difference of one scale unit counts as 1 in the distance. */
const SCALES = { pitchSemitones: 4, rangeSemitones: 3, syllablesPerSecond: 1, centroidOctaves: 0.3 };

/**
 * Distance between two speaker profiles on normalised features: pitch median (semitones), pitch range, speaking
 * rate, spectral centroid (octaves) and MFCC means (coefficients 1-12, each over its spread `mfccScale`).
 * Each of the five terms weighs the same.
 */
export function profileDistance(a: VoiceProfile, b: VoiceProfile, mfccScale?: number[]): number {
  const terms = [
    (semitones(a.pitchMedianHz) - semitones(b.pitchMedianHz)) / SCALES.pitchSemitones,
    (a.pitchRangeSemitones - b.pitchRangeSemitones) / SCALES.rangeSemitones,
    (a.syllablesPerSecond - b.syllablesPerSecond) / SCALES.syllablesPerSecond,
    Math.log2(Math.max(a.spectralCentroidHz, 1) / Math.max(b.spectralCentroidHz, 1)) / SCALES.centroidOctaves,
  ];
  let mfcc = 0;
  for (let c = 1; c < a.mfccMean.length; c++) mfcc += ((a.mfccMean[c]! - b.mfccMean[c]!) / (mfccScale?.[c] ?? 10)) ** 2 / (a.mfccMean.length - 1);
  return Math.sqrt(terms.reduce((s, t) => s + t * t, 0) + mfcc);
}

/** Pitch-only distance in semitones (the benchmark's second measure). */
export function pitchDistance(a: VoiceProfile, b: VoiceProfile): number {
  return Math.abs(semitones(a.pitchMedianHz) - semitones(b.pitchMedianHz));
}

/** Spread of each MFCC mean across the candidate voices: normalises the spectral-envelope term. */
export function mfccSpread(profiles: VoiceProfile[]): number[] {
  const n = profiles[0]?.mfccMean.length ?? 0;
  return Array.from({ length: n }, (_, c) => {
    const xs = profiles.map((p) => p.mfccMean[c]!);
    const mean = xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    // Too few voices to measure a spread: a fixed scale typical of MFCC means.
    if (xs.length < 3) return 5;
    return Math.max(1, Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length));
  });
}

/** A reference clip that cannot be measured (no or too little speech). */
export class UnusableReference extends Error {}

export async function measureReference(pcm16k: Buffer): Promise<VoiceProfile> {
  const profile = await voiceProfileOffThread(pcm16k);
  const voicedFrames = Math.round(profile.voicedRatio * profile.durationSeconds * 100);
  if (voicedFrames < MIN_VOICED_FRAMES || profile.pitchMedianHz <= 0) throw new UnusableReference('the clip contains no measurable speech');
  return profile;
}

export interface RenderOptions {
  pitchSemitones?: number;
  pitchRange?: number;
  rate?: number;
  signal?: AbortSignal;
}

/** The language built-in voices are profiled and calibrated in. */
function profileLanguage(model: TtsModel): string {
  return model.engine.languages.some((l) => l.code === 'en') ? 'en' : model.engine.languages[0]!.code;
}

export class VoiceCloner {
  private readonly memory = new Map<string, Promise<Map<string, VoiceProfile>>>();
  private readonly embeddings = new Map<string, Promise<Map<string, number[]>>>();

  constructor(
    private readonly cacheDir: string,
    /** Chooses base voices by speaker embedding when set: an embedder, or the one in use now (it may change). */
    private readonly embedderOf?: SpeakerEmbedder | (() => SpeakerEmbedder | undefined),
  ) {}

  /** The speaker-embedding model in use now, if any. */
  get embedder(): SpeakerEmbedder | undefined {
    return typeof this.embedderOf === 'function' ? this.embedderOf() : this.embedderOf;
  }

  /** Speak `text` with a built-in voice and the given adaptation; 16 kHz PCM for measuring. */
  async render(model: TtsModel, voice: TtsVoice, text: string, opts: RenderOptions = {}): Promise<Buffer> {
    const parts: Buffer[] = [];
    const synthesis = model.engine.synthesize(text, voice.engineVoice, profileLanguage(model), {
      speed: opts.rate ?? 1,
      ...(model.engine.supportsPitchRange && opts.pitchRange !== undefined ? { pitchRange: opts.pitchRange } : {}),
      signal: opts.signal,
    });
    for await (const ch of synthesis) parts.push(ch.pcm);
    return shiftPitch(Buffer.concat(parts), voice.sampleRate, opts.pitchSemitones ?? 0, { outputRate: PCM_SAMPLE_RATE, signal: opts.signal });
  }

  /**
   * The voices worth matching against: the model's curated voices (espeak-ng's hundred raw variants are left
   * out: profiling them all would take minutes), one per distinct engine voice, in catalog order.
   */
  candidates(model: TtsModel): TtsVoice[] {
    const seen = new Set<string>();
    const language = profileLanguage(model);
    // As each voice speaks the profile's language (a routed model's English voices are another engine's).
    return model.voices
      .map((v) => model.voiceIn?.(v, language) ?? v)
      .filter((v) => {
        if (v.variant) return false;
        // The profile text is English: voices of other languages (festival's) are not bases for a cloned voice.
        if (v.languages && !v.languages.includes(language)) return false;
        // Limited-domain voices (flite awb_time speaks times of day) cannot say arbitrary text.
        if (v.engineVoice.endsWith('_time') || seen.has(v.engineVoice)) return false;
        seen.add(v.engineVoice);
        return true;
      });
  }

  /** Profiles of the model's candidate voices by voice id, computed once (memory, then a JSON file per model). */
  builtinProfiles(model: TtsModel): Promise<Map<string, VoiceProfile>> {
    let p = this.memory.get(model.id);
    if (!p) {
      p = this.loadOrCompute(model);
      p.catch(() => this.memory.delete(model.id));
      this.memory.set(model.id, p);
    }
    return p;
  }

  private async loadOrCompute(model: TtsModel): Promise<Map<string, VoiceProfile>> {
    const file = path.join(this.cacheDir, `${model.id}.json`);
    const candidates = this.candidates(model);
    let cached: Record<string, VoiceProfile> = {};
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { version: number; engine: string; profiles: Record<string, VoiceProfile> };
      if (parsed.version === PROFILE_VERSION && parsed.engine === model.engine.name) cached = parsed.profiles;
    } catch {
      // no cache yet, or unreadable: recompute
    }
    const out = new Map<string, VoiceProfile>();
    let computed = false;
    for (const v of candidates) {
      let profile = cached[v.engineVoice];
      if (!profile) {
        profile = await voiceProfileOffThread(await this.render(model, v, PROFILE_TEXT));
        cached[v.engineVoice] = profile;
        computed = true;
      }
      // A voice that produced no measurable speech cannot be a base.
      if (profile.pitchMedianHz > 0) out.set(v.id, profile);
    }
    if (computed) {
      await mkdir(this.cacheDir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify({ version: PROFILE_VERSION, engine: model.engine.name, profiles: cached }));
      await rename(tmp, file);
    }
    if (!out.size) throw new Error(`no built-in voice of ${model.id} could be profiled`);
    return out;
  }

  /**
   * Speaker embeddings of the model's candidate voices by voice id (each speaking the profile text), computed once
   * per embedding model (memory, then a JSON file per TTS model). Empty without an embedder.
   */
  builtinEmbeddings(model: TtsModel): Promise<Map<string, number[]>> {
    const embedder = this.embedder;
    if (!embedder) return Promise.resolve(new Map());
    // By embedding model too: another one installed meanwhile embeds the voices anew.
    const key = `${embedder.modelId}\n${model.id}`;
    let p = this.embeddings.get(key);
    if (!p) {
      p = this.loadOrEmbed(model, embedder);
      p.catch(() => this.embeddings.delete(key));
      this.embeddings.set(key, p);
    }
    return p;
  }

  private async loadOrEmbed(model: TtsModel, embedder: SpeakerEmbedder): Promise<Map<string, number[]>> {
    const file = path.join(this.cacheDir, `${model.id}.embeddings.json`);
    let cached: Record<string, number[]> = {};
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { version: number; engine: string; embedder: string; embeddings: Record<string, number[]> };
      if (parsed.version === PROFILE_VERSION && parsed.engine === model.engine.name && parsed.embedder === embedder.modelId) cached = parsed.embeddings;
    } catch {
      // no cache yet, or unreadable: recompute
    }
    const out = new Map<string, number[]>();
    let computed = false;
    for (const v of this.candidates(model)) {
      let e = cached[v.engineVoice];
      if (!e) {
        e = Array.from(await embedder.embed(pcmSamples(await this.render(model, v, PROFILE_TEXT))));
        cached[v.engineVoice] = e;
        computed = true;
      }
      out.set(v.id, e);
    }
    if (computed) {
      await mkdir(this.cacheDir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify({ version: PROFILE_VERSION, engine: model.engine.name, embedder: embedder.modelId, embeddings: cached }));
      await rename(tmp, file);
    }
    return out;
  }

  /**
   * The built-in voice nearest to the reference: the most similar speaker embedding when there are embeddings (the
   * reference's and the embedder's), else the smallest profile distance.
   */
  async nearest(
    reference: VoiceProfile,
    model: TtsModel,
    referenceEmbedding?: ArrayLike<number>,
  ): Promise<{ voice: TtsVoice; profile: VoiceProfile; distance: number; similarity?: number }> {
    const profiles = await this.builtinProfiles(model);
    const spread = mfccSpread([...profiles.values()]);
    const embeddings = referenceEmbedding ? await this.builtinEmbeddings(model) : new Map<string, number[]>();
    let best: { voice: TtsVoice; profile: VoiceProfile; distance: number; similarity?: number } | undefined;
    for (const [id, profile] of profiles) {
      const distance = profileDistance(reference, profile, spread);
      const e = embeddings.get(id);
      const similarity = e && referenceEmbedding ? cosine(referenceEmbedding, e) : undefined;
      const better = !best || (embeddings.size ? (similarity ?? -Infinity) > (best.similarity ?? -Infinity) : distance < best.distance);
      if (better) best = { voice: model.voices.find((v) => v.id === id)!, profile, distance, similarity };
    }
    return best!;
  }

  /** Choose the base voice and adapt range, rate and pitch to the reference speaker. */
  async prepare(reference: VoiceProfile, model: TtsModel, signal?: AbortSignal, referenceEmbedding?: ArrayLike<number>): Promise<VoiceAdaptation> {
    const { voice, profile, distance, similarity } = await this.nearest(reference, model, referenceEmbedding);
    const pitchRange =
      model.engine.supportsPitchRange && profile.pitchRangeSemitones > 0 && reference.pitchRangeSemitones > 0
        ? clamp(reference.pitchRangeSemitones / profile.pitchRangeSemitones, RANGE_MIN, RANGE_MAX)
        : 1;
    let rate =
      profile.syllablesPerSecond > 0 && reference.syllablesPerSecond > 0
        ? clamp(reference.syllablesPerSecond / profile.syllablesPerSecond, RATE_MIN, RATE_MAX)
        : 1;
    // Calibrate: a wider range also moves the median, and engine speed is not exactly syllables per second.
    const rendered = await voiceProfileOffThread(await this.render(model, voice, PROFILE_TEXT, { pitchRange, rate, signal }));
    const measuredMedian = rendered.pitchMedianHz > 0 ? rendered.pitchMedianHz : profile.pitchMedianHz;
    const shift = clamp(semitones(reference.pitchMedianHz) - semitones(measuredMedian), -SHIFT_MAX, SHIFT_MAX);
    if (rendered.syllablesPerSecond > 0 && reference.syllablesPerSecond > 0)
      rate = clamp((rate * reference.syllablesPerSecond) / rendered.syllablesPerSecond, RATE_MIN, RATE_MAX);
    const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
    const adaptation: VoiceAdaptation = {
      base_voice: voice.id,
      pitch_semitones: round(shift, 2),
      pitch_range: round(pitchRange),
      rate: round(rate),
      distance: round(distance),
    };
    return similarity === undefined ? adaptation : { ...adaptation, similarity: round(similarity) };
  }
}
