import { describe, expect, it } from 'vitest';
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import { ApiError } from '../../wire/api-error.js';
import { checkTtsText, parseTtsBody, parseTtsStart, resolveTtsConfig, type TtsRequestFields } from './request-config.js';

const voice = (id: string, languages?: string[]): TtsVoice => ({
  id,
  description: '',
  gender: 'female',
  age: 'middle_aged',
  accent: '',
  use_case: [],
  style: [],
  engineVoice: id.toLowerCase(),
  sampleRate: 22050,
  ...(languages ? { languages } : {}),
});
const model = {
  id: 'tts-test-v1',
  name: 'test',
  engine: {
    languages: [
      { code: 'en', name: 'English' },
      { code: 'de', name: 'German' },
    ],
  },
  voices: [voice('Adrian'), voice('Greta', ['de'])],
  supportsSilenceReduction: false,
} as unknown as TtsModel;
const registry = { resolve: (id: string) => (id === model.id ? model : undefined), models: () => [model], aliases: new Map() } as unknown as TtsRegistry;

const base = { model: 'tts-test-v1', language: 'en', voice: 'Adrian', audio_format: 'wav', text: 'Hello.' };

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('accepted');
}
const resolve = (fields: Record<string, unknown>) => resolveTtsConfig(registry, parseTtsBody({ ...base, ...fields }));

describe('the TTS request', () => {
  it('applies the defaults once: 24 kHz, the format bitrate lowered to what the encoder can make, speed 1', () => {
    expect(resolve({})).toMatchObject({ sampleRate: 24000, bitrate: undefined, speed: 1, reduceSilence: false, clientReferenceId: null });
    expect(resolve({ audio_format: 'mp3' }).bitrate).toBe(128000);
    expect(resolve({ audio_format: 'mp3', sample_rate: 8000 }).bitrate).toBe(64000);
    expect(resolve({ audio_format: 'opus', sample_rate: null, bitrate: null, speed: null }).bitrate).toBe(64000);
  });

  it('checks every field by schema, naming each by its location in one message', () => {
    const err = refusal(() => parseTtsBody({ ...base, speed: 1.5, audio_format: 'ogg', sample_rate: 22050, text: 42, voice: null }));
    expect(err).toMatchObject({ type: 'invalid_request', status: 400 });
    expect(err.validationErrors.map((v) => [v.location, v.error_type])).toEqual([
      ['voice', 'missing'],
      ['audio_format', 'invalid_value'],
      ['sample_rate', 'invalid_value'],
      ['speed', 'out_of_range'],
      ['text', 'invalid_type'],
    ]);
    expect(err.message).toMatch(/^Invalid request: voice: is required; audio_format: must be one of pcm_f32le, .*; sample_rate: must be one of 8000, 16000/);
    expect(refusal(() => parseTtsBody('[1]')).message).toBe('Invalid request: body: must be object');
    expect(refusal(() => parseTtsStart({ ...base, return_timestamps: 'yes' })).validationErrors).toEqual([
      { location: 'return_timestamps', error_type: 'invalid_type', message: 'must be boolean' },
    ]);
    expect(parseTtsStart({ ...base, stream_id: 's', api_key: 'k', return_timestamps: null })).not.toHaveProperty('return_timestamps');
  });

  it('then the rules between fields and against the model', () => {
    const err = refusal(() => resolve({ language: 'fr', audio_format: 'opus', sample_rate: 44100, reduce_silence: true }));
    expect(err.validationErrors.map((v) => v.location)).toEqual(['language', 'sample_rate', 'reduce_silence']);
    expect(refusal(() => resolve({ bitrate: 128000 })).message).toBe('Invalid request: bitrate: applies only to mp3, aac and opus, not wav');
    expect(refusal(() => resolve({ audio_format: 'mp3', sample_rate: 8000, bitrate: 128000 })).validationErrors).toEqual([
      { location: 'bitrate', error_type: 'out_of_range', message: '128000 is not valid for mp3 at sample_rate 8000 (at most 64000)' },
    ]);
    expect(refusal(() => resolve({ voice: 'Greta' })).validationErrors[0]).toMatchObject({ location: 'voice', error_type: 'unsupported' });
    expect(refusal(() => resolve({ model: 'nope' })).type).toBe('model_not_available');
    expect(refusal(() => resolve({ voice: 'Nobody' })).type).toBe('voice_not_found');
  });

  it('the text: required, something to speak, capped, located at text', () => {
    const cfg = resolveTtsConfig(registry, base as TtsRequestFields);
    expect(checkTtsText('Hi.', 10, cfg)).toBe('Hi.');
    expect(refusal(() => checkTtsText(undefined, 10)).message).toBe('Invalid request: text: is required');
    expect(refusal(() => checkTtsText('...', 10)).validationErrors[0]).toMatchObject({ location: 'text' });
    expect(refusal(() => checkTtsText('a'.repeat(11), 10)).message).toBe('Invalid request: text: must NOT have more than 10 characters');
  });
});
