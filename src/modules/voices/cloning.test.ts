// The cloning pieces with real engines and ffmpeg: the rubberband pitch shift moves pitch by the asked
// semitones and keeps length, espeak-ng's pitch range control widens and narrows intonation, the distance
// ranks a matching speaker first, and prepare() adapts a built-in voice towards a reference speaker.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSpectrumEmbeddingModel } from '../../../test/fixtures/sherpa-models.js';
import { tempDir } from '../../../test/harness.js';
import { pcmToFloat, voiceProfile } from '../../audio/features.js';
import { pitchShiftFilter, shiftPitch } from '../../audio/pitch-shift.js';
import { readManifest } from '../../engines/model-dir/manifest.js';
import { SpeakerEmbeddingEngine } from '../../engines/speaker/engine.js';
import { espeakTtsEngine } from '../../engines/tts/espeak.js';
import { fliteTtsEngine } from '../../engines/tts/flite.js';
import { TtsRegistry } from '../../engines/tts/registry.js';
import { mfccSpread, pcmSamples, pitchDistance, PROFILE_TEXT, profileDistance, VoiceCloner } from './cloning.js';

const dir = tempDir('parlance-cloning-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const registry = TtsRegistry.create([espeakTtsEngine, fliteTtsEngine]);
const semis = (a: number, b: number) => 12 * Math.log2(a / b);

describe('voice cloning', () => {
  it('shifts pitch by the asked semitones (formants kept) without changing the length', async () => {
    const reg = await registry;
    const model = reg.resolve('parlance-tts-espeak-v1')!;
    const cloner = new VoiceCloner(dir);
    const plain = await cloner.render(
      model,
      model.voices.find((v) => v.id === 'Adrian')!,
      PROFILE_TEXT,
    );
    const up = await cloner.render(
      model,
      model.voices.find((v) => v.id === 'Adrian')!,
      PROFILE_TEXT,
      { pitchSemitones: 5 },
    );
    expect(Math.abs(up.length - plain.length)).toBeLessThan(0.01 * plain.length);
    const [p0, p1] = [voiceProfile(pcmToFloat(plain)), voiceProfile(pcmToFloat(up))];
    expect(semis(p1.pitchMedianHz, p0.pitchMedianHz)).toBeGreaterThan(4);
    expect(semis(p1.pitchMedianHz, p0.pitchMedianHz)).toBeLessThan(6);
    // Formant-preserving: the spectral centroid moves far less than the 33 % a plain resample would.
    expect(Math.abs(p1.spectralCentroidHz / p0.spectralCentroidHz - 1)).toBeLessThan(0.15);
    expect(pitchShiftFilter(0.01)).toBeUndefined();
    const same = Buffer.from(plain);
    expect(await shiftPitch(same, 16000, 0)).toBe(same);
  }, 60_000);

  it('espeak-ng pitch range: 2 widens the intonation, 0.5 narrows it', async () => {
    const model = (await registry).resolve('parlance-tts-espeak-v1')!;
    expect(model.engine.supportsPitchRange).toBe(true);
    const cloner = new VoiceCloner(dir);
    const voice = model.voices.find((v) => v.id === 'Adrian')!;
    const range = async (r: number) => voiceProfile(pcmToFloat(await cloner.render(model, voice, PROFILE_TEXT, { pitchRange: r }))).pitchRangeSemitones;
    const [narrow, normal, wide] = [await range(0.5), await range(1), await range(2)];
    expect(narrow).toBeLessThan(normal);
    expect(wide).toBeGreaterThan(normal);
    // The range goes in as SSML: markup-like text is escaped and spoken, not parsed.
    const tricky = 'Say <b>bold</b> & "quoted" words.';
    const [plain, ranged] = [await cloner.render(model, voice, tricky), await cloner.render(model, voice, tricky, { pitchRange: 1.5 })];
    expect(ranged.length).toBeGreaterThan(0.8 * plain.length);
    expect(ranged.length).toBeLessThan(1.2 * plain.length);
  }, 60_000);

  it('the distance is zero for a profile with itself, and ranks the same speaker above another', async () => {
    const reg = await registry;
    const model = reg.resolve('parlance-tts-flite-v1')!;
    const cloner = new VoiceCloner(dir);
    const slt = model.voices.find((v) => v.engineVoice === 'slt')!;
    const rms = model.voices.find((v) => v.engineVoice === 'rms')!;
    const a = voiceProfile(pcmToFloat(await cloner.render(model, slt, PROFILE_TEXT)));
    const b = voiceProfile(pcmToFloat(await cloner.render(model, slt, 'Four hours of steady work faced us. A large size in stockings is hard to sell.')));
    const c = voiceProfile(pcmToFloat(await cloner.render(model, rms, PROFILE_TEXT)));
    const spread = mfccSpread([a, b, c]);
    expect(profileDistance(a, a, spread)).toBe(0);
    expect(profileDistance(a, b, spread)).toBeLessThan(profileDistance(a, c, spread));
    expect(pitchDistance(a, c)).toBeGreaterThan(pitchDistance(a, b));
  }, 60_000);

  it('prepare() picks a same-gender base voice and moves pitch, rate and range towards the reference', async () => {
    const reg = await registry;
    const espeak = reg.resolve('parlance-tts-espeak-v1')!;
    const flite = reg.resolve('parlance-tts-flite-v1')!;
    const cloner = new VoiceCloner(dir);
    // The reference: flite's female slt voice, slowed down; matched against espeak-ng's voices.
    const refPcm = await cloner.render(
      flite,
      flite.voices.find((v) => v.engineVoice === 'slt')!,
      PROFILE_TEXT,
      { rate: 0.75 },
    );
    const ref = voiceProfile(pcmToFloat(refPcm));
    const adaptation = await cloner.prepare(ref, espeak);
    const base = espeak.voices.find((v) => v.id === adaptation.base_voice)!;
    expect(base.gender).toBe('female');
    expect(adaptation.rate).toBeLessThan(1);
    const baseProfile = (await cloner.builtinProfiles(espeak)).get(base.id)!;
    const out = voiceProfile(
      pcmToFloat(
        await cloner.render(espeak, base, PROFILE_TEXT, {
          pitchSemitones: adaptation.pitch_semitones,
          pitchRange: adaptation.pitch_range,
          rate: adaptation.rate,
        }),
      ),
    );
    expect(pitchDistance(ref, out)).toBeLessThan(Math.max(1, pitchDistance(ref, baseProfile)));
    expect(Math.abs(out.syllablesPerSecond - ref.syllablesPerSecond)).toBeLessThan(Math.abs(baseProfile.syllablesPerSecond - ref.syllablesPerSecond) + 0.1);
    // The built-in profiles were cached on disk for the next process.
    const cached = JSON.parse(readFileSync(path.join(dir, 'parlance-tts-espeak-v1.json'), 'utf8')) as { profiles: Record<string, unknown> };
    expect(Object.keys(cached.profiles)).toContain(base.engineVoice);
  }, 120_000);
});

describe('voice cloning with a speaker-embedding model', () => {
  it('picks the built-in voice whose embedding is the most similar to the reference, and caches the embeddings', async () => {
    // The test model's embedding is the average spectrum (test/fixtures/sherpa-models.ts).
    const modelDir = path.join(dir, 'spectrum');
    mkdirSync(modelDir, { recursive: true });
    writeSpectrumEmbeddingModel(modelDir);
    writeFileSync(
      path.join(modelDir, 'parlance-model.json'),
      JSON.stringify({ id: 'spectrum-v1', family: 'speaker-embedding', type: 'embedding', files: { model: 'model.onnx' }, languages: ['en'] }),
    );
    const embedder = new SpeakerEmbeddingEngine(readManifest(modelDir));
    const cacheDir = path.join(dir, 'with-embeddings');
    const cloner = new VoiceCloner(cacheDir, embedder);
    const flite = (await registry).resolve('parlance-tts-flite-v1')!;
    const other = 'Four hours of steady work faced us. A large size in stockings is hard to sell.';
    for (const engineVoice of ['slt', 'rms']) {
      const voice = flite.voices.find((v) => v.engineVoice === engineVoice)!;
      // Another text than the built-in voices speak for their embeddings.
      const pcm = await cloner.render(flite, voice, other);
      const reference = voiceProfile(pcmToFloat(pcm));
      const embedding = await embedder.embed(pcmSamples(pcm));
      const adaptation = await cloner.prepare(reference, flite, undefined, embedding);
      expect(adaptation.base_voice).toBe(voice.id);
      expect(adaptation.similarity).toBeGreaterThan(0.8);
      expect(adaptation.distance).toBeGreaterThanOrEqual(0);
    }
    // Without the reference's embedding the profile distance decides, as without a model.
    const plain = await cloner.prepare(
      voiceProfile(
        pcmToFloat(
          await cloner.render(
            flite,
            flite.voices.find((v) => v.engineVoice === 'slt')!,
            other,
          ),
        ),
      ),
      flite,
    );
    expect(plain.similarity).toBeUndefined();
    const cached = JSON.parse(readFileSync(path.join(cacheDir, 'parlance-tts-flite-v1.embeddings.json'), 'utf8')) as {
      embedder: string;
      embeddings: Record<string, number[]>;
    };
    expect(cached.embedder).toBe('spectrum-v1');
    expect(Object.keys(cached.embeddings)).toEqual(expect.arrayContaining(['slt', 'rms', 'kal']));
    await embedder.close();
  }, 120_000);
});
