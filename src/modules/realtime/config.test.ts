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
