import { describe, expect, it } from 'vitest';
import { ApiError } from '../../wire/api-error.js';
import { rawEncoding } from '../../audio/sample-decoder.js';
import { approximateTokens, parseRealtimeConfig, RAW_INPUT_FORMATS } from './config.js';

const base = { model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 };
const err = (c: unknown): ApiError => {
  try {
    parseRealtimeConfig(c);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('expected a validation error');
};

describe('parseRealtimeConfig', () => {
  it('applies the defaults', () => {
    expect(parseRealtimeConfig(base)).toMatchObject({
      enableNonFinalTokens: true,
      maxNonFinalTokensDurationMs: 4000,
      enableEndpointDetection: false,
      maxEndpointDelayMs: 2000,
      languageHints: [],
    });
  });

  it('accepts auto and containers without sample_rate / num_channels', () => {
    for (const audio_format of ['auto', 'wav', 'webm', 'ogg', 'mp3']) expect(parseRealtimeConfig({ model: 'm', audio_format }).audioFormat).toBe(audio_format);
  });

  it('names the field of every violation', () => {
    expect(err({ ...base, max_non_final_tokens_duration_ms: 359 }).message).toMatch(/max_non_final_tokens_duration_ms/);
    expect(err({ ...base, endpoint_latency_adjustment_level: 1.5 }).message).toMatch(/endpoint_latency_adjustment_level.*integer/);
    expect(err({ ...base, context: { general: [{ key: 1 }] } }).message).toMatch(/context\.general\.0/);
    expect(err({ ...base, translation: { type: 'one_way' } }).message).toMatch(/translation\.target_language/);
    expect(err({ ...base, language_hints: ['en', 5] }).message).toMatch(/language_hints\.1/);
    expect(err({ ...base, audio_format: 'pcm_s16le', sample_rate: undefined }).type).toBe('invalid_request');
  });

  it('lists every bad field in the one style, dotted, schema rules first, then the rules between fields', () => {
    expect(
      err({ ...base, model: '', language_hints: ['en', ''], context: { terms: ['a', 3] }, translation: { type: 'one_way', target_language: 'EN' } }),
    ).toMatchObject({
      message:
        'Invalid request: model: must NOT have fewer than 1 characters; language_hints.1: must be a language code such as "en"; context.terms.1: must be string; translation.target_language: must be a language code such as "es"',
      validationErrors: [
        { location: 'model', error_type: 'invalid_length' },
        { location: 'language_hints.1', error_type: 'invalid_length' },
        { location: 'context.terms.1', error_type: 'invalid_type' },
        { location: 'translation.target_language', error_type: 'invalid_format' },
      ],
    });
    expect(err({ model: 'm', audio_format: 'pcm_s16le', speakers: ['s1'] }).validationErrors.map((e) => e.location)).toEqual([
      'num_channels',
      'sample_rate',
      'speakers',
    ]);
    expect(err({ ...base, audio_format: 'pcm_s12le' }).message).toMatch(/^Invalid request: audio_format: must be "auto", a raw format/);
    expect(err({ ...base, context: 5 }).message).toBe('Invalid request: context: must be a string or an object {general, text, terms, translation_terms}');
    expect(err({ ...base, translation: { type: 'three_way' } }).message).toBe('Invalid request: translation.type: must be one of one_way, two_way');
    expect(err({ ...base, translation: { type: 'two_way', language_a: 'en', language_b: 'en' } }).message).toBe(
      'Invalid request: translation: language_a and language_b must differ',
    );
    expect(err({ ...base, max_endpoint_delay_ms: Infinity }).validationErrors).toEqual([
      { location: 'max_endpoint_delay_ms', error_type: 'invalid_type', message: 'must be number' },
    ]);
    expect(err([base]).message).toBe('Invalid request: configuration: must be object');
  });

  it('takes enable_multichannel for raw audio of two or more channels and for containers, refuses it on mono raw audio', () => {
    expect(parseRealtimeConfig({ ...base, num_channels: 2, enable_multichannel: true })).toMatchObject({ enableMultichannel: true, numChannels: 2 });
    expect(parseRealtimeConfig({ model: 'm', audio_format: 'auto', enable_multichannel: true }).enableMultichannel).toBe(true);
    expect(parseRealtimeConfig({ ...base, enable_multichannel: false })).not.toHaveProperty('enableMultichannel');
    expect(err({ ...base, enable_multichannel: true })).toMatchObject({
      message: 'Invalid request: enable_multichannel: needs audio with two or more channels; num_channels is 1',
      validationErrors: [{ location: 'enable_multichannel', error_type: 'invalid_value' }],
    });
    expect(err({ ...base, enable_multichannel: 'yes' }).validationErrors).toEqual([
      { location: 'enable_multichannel', error_type: 'invalid_type', message: 'must be boolean' },
    ]);
  });

  it('ignores unknown keys and treats nulls as absent, as the SDKs send them', () => {
    const c = parseRealtimeConfig({
      ...base,
      api_key: 'k',
      future_key: { x: 1 },
      context: { text: 'hi', general: null, extra: 1 },
      speakers: null,
      translation: null,
    });
    expect(c).toMatchObject({ model: 'stt-rt-v4', context: { text: 'hi', extra: 1 }, enableNonFinalTokens: true });
    expect(c).not.toHaveProperty('speakers');
    expect(c).not.toHaveProperty('translation');
    expect(parseRealtimeConfig({ ...base, enable_non_final_tokens: null, speakers: [] })).toMatchObject({ enableNonFinalTokens: true });
    expect(err({ ...base, model: null }).validationErrors).toEqual([{ location: 'model', error_type: 'missing', message: 'is required' }]);
  });

  it('approximates context tokens as words plus punctuation marks', () => {
    expect(approximateTokens('Hello, world!  Parlance v1.')).toBe(7);
    expect(approximateTokens('')).toBe(0);
    expect(err({ ...base, context: { text: '.,'.repeat(4100) } }).message).toMatch(/8000 tokens/);
    expect(parseRealtimeConfig({ ...base, context: 'word '.repeat(1999) }).context).toBeDefined();
  });
});

describe('raw formats', () => {
  it('are all decoded in-process', () => {
    for (const f of RAW_INPUT_FORMATS) expect(rawEncoding(f), f).toBeDefined();
    expect(rawEncoding('pcm_s16le')).toEqual({ kind: 'int', bits: 16, bigEndian: false });
    expect(rawEncoding('pcm_u8')).toMatchObject({ kind: 'uint', bits: 8 });
    expect(rawEncoding('pcm_f64be')).toEqual({ kind: 'float', bits: 64, bigEndian: true });
    expect(rawEncoding('pcm_s16')).toBeUndefined();
    expect(rawEncoding('pcm_s64le')).toBeUndefined();
  });
});
