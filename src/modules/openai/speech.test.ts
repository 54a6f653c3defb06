import { describe, expect, it } from 'vitest';
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import { engineSpeed, OPENAI_VOICES, voiceForOpenAiName } from './speech.js';

const voice = (id: string, gender: TtsVoice['gender'], variant = false): TtsVoice => ({
  id,
  gender,
  description: id,
  age: 'middle_aged',
  accent: 'american',
  use_case: [],
  style: [],
  engineVoice: id.toLowerCase(),
  sampleRate: 16000,
  ...(variant ? { variant } : {}),
});
const model = (voices: TtsVoice[]) => ({ id: 'm', name: 'm', voices, supportsSilenceReduction: false }) as unknown as TtsModel;

describe('OpenAI voice names', () => {
  it('map to the preferred built-in voices of the default model', () => {
    const m = model([
      voice('Adrian', 'male'),
      voice('Maya', 'female'),
      voice('Oliver', 'male'),
      voice('Noah', 'male'),
      voice('Rowan', 'neutral'),
      voice('Clara', 'female'),
      voice('Fiona', 'female'),
      voice('Grace', 'female'),
    ]);
    const got = Object.fromEntries(Object.keys(OPENAI_VOICES).map((n) => [n, voiceForOpenAiName(m, n)?.id]));
    expect(got).toEqual({
      alloy: 'Rowan',
      ash: 'Noah',
      ballad: 'Oliver',
      coral: 'Maya',
      echo: 'Adrian',
      fable: 'Oliver',
      onyx: 'Adrian',
      nova: 'Maya',
      sage: 'Clara',
      shimmer: 'Fiona',
      verse: 'Noah',
      marin: 'Grace',
      cedar: 'Adrian',
    });
    expect(voiceForOpenAiName(m, 'NOVA')?.id).toBe('Maya');
    expect(voiceForOpenAiName(m, 'nobody')).toBeUndefined();
  });

  it('fall back to a curated voice of the same gender, then any voice; an override map wins', () => {
    const m = model([voice('Dita', 'female'), voice('Marek', 'male'), voice('Petr', 'male'), voice('Alt', 'female', true)]);
    for (const [name, spec] of Object.entries(OPENAI_VOICES)) {
      const v = voiceForOpenAiName(m, name)!;
      if (spec.gender !== 'neutral') expect(v.gender, name).toBe(spec.gender);
      expect(v.variant, name).toBeUndefined();
    }
    expect(voiceForOpenAiName(model([voice('Solo', 'male')]), 'nova')?.id).toBe('Solo');
    expect(voiceForOpenAiName(m, 'nova', { nova: 'alt' })?.id).toBe('Alt');
  });

  it("speed is clamped into the engines' 0.7–1.3", () => {
    expect([engineSpeed(undefined), engineSpeed(0.25), engineSpeed(1.1), engineSpeed(4)]).toEqual([1, 0.7, 1.1, 1.3]);
  });
});
