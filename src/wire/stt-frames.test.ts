import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.js';
import { parseSttClientMessage, SttConfigMessage, sttErrorFrame, SttFinalizeMessage, SttServerFrame } from './stt-frames.js';

const errorOf = (r: { ok: boolean; error?: ApiError }) => (r.ok ? undefined : r.error?.message);

describe('parseSttClientMessage: the configuration', () => {
  it('a JSON object is the configuration, its api_key handed on as sent', () => {
    const body = { api_key: 'k', model: 'stt-rt-v4', audio_format: 'auto', unknown_key: 1 };
    expect(parseSttClientMessage(JSON.stringify(body), 'config')).toEqual({ ok: true, message: { type: 'config', api_key: 'k', body } });
    expect(parseSttClientMessage('{"api_key": 5}', 'config')).toMatchObject({ ok: true, message: { api_key: 5 } });
    expect(Value.Check(SttConfigMessage, body)).toBe(true);
  });

  it('audio first, bad JSON and non-objects are invalid_request', () => {
    expect(errorOf(parseSttClientMessage(new Uint8Array([1, 2]), 'config'))).toBe(
      'Invalid request: the first message must be the JSON configuration (a text frame), not audio.',
    );
    expect(errorOf(parseSttClientMessage('{nope', 'config'))).toBe('Invalid request: the configuration message is not valid JSON.');
    for (const raw of ['[1]', 'null', '3', '"x"'])
      expect(errorOf(parseSttClientMessage(raw, 'config'))).toBe('Invalid request: the configuration message must be a JSON object.');
  });
});

describe('parseSttClientMessage: while streaming', () => {
  const parse = (data: string | Uint8Array) => parseSttClientMessage(data, 'stream');

  it('binary frames are audio, an empty one the end', () => {
    expect(parse(new Uint8Array([1, 2, 3]))).toEqual({ ok: true, message: { type: 'audio', data: new Uint8Array([1, 2, 3]) } });
    expect(parse(new Uint8Array(0))).toEqual({ ok: true, message: { type: 'end' } });
  });

  it('text frames: the end, base64 audio (whitespace ignored), invalid base64', () => {
    expect(parse('')).toEqual({ ok: true, message: { type: 'end' } });
    const r = parse('AQID\nBA==');
    expect(r.ok && r.message.type === 'audio' && Buffer.from(r.message.data)).toEqual(Buffer.from([1, 2, 3, 4]));
    const blank = parse('   ');
    expect(blank.ok && blank.message.type === 'audio' && blank.message.data.length).toBe(0);
    for (const bad of ['A', 'not base64!', 'AB=C']) expect(errorOf(parse(bad))).toBe('Invalid request: text audio message is not valid base64.');
  });

  it('control messages: finalize (with trailing_silence_ms) and keepalive, spaced variants too', () => {
    expect(parse('{"type":"keepalive"}')).toEqual({ ok: true, message: { type: 'keepalive' } });
    expect(parse('  { "type": "finalize" }')).toEqual({ ok: true, message: { type: 'finalize' } });
    expect(parse('{"type":"finalize","trailing_silence_ms":null}')).toEqual({ ok: true, message: { type: 'finalize' } });
    expect(parse('{"type":"finalize","trailing_silence_ms":300}')).toEqual({ ok: true, message: { type: 'finalize', trailing_silence_ms: 300 } });
    expect(Value.Check(SttFinalizeMessage, { type: 'finalize', trailing_silence_ms: 300 })).toBe(true);
  });

  it('bad control messages name what is wrong', () => {
    expect(errorOf(parse('{"type":'))).toBe('Invalid request: malformed JSON control message.');
    const finalize = (t: string) => parse(`{"type":"finalize","trailing_silence_ms":${t}}`);
    expect(errorOf(finalize('-1'))).toBe('Invalid request: trailing_silence_ms: must be >= 0');
    // 1e400 is parsed as Infinity, which is not a number here.
    for (const t of ['"300"', '1e400']) expect(errorOf(finalize(t))).toBe('Invalid request: trailing_silence_ms: must be number or null');
    expect(errorOf(parse('{"type":"pause"}'))).toBe('Invalid request: type: must be one of finalize, keepalive');
    expect(errorOf(parse('{"kind":1}'))).toBe('Invalid request: type: is required');
    expect(errorOf(parse('{"type":"finalize","trailing_silence_ms":-1}'))).not.toMatch(/keepalive/);
  });
});

describe('server frames', () => {
  it('the error frame has the integer status and matches the schema', () => {
    const f = sttErrorFrame(new ApiError('request_timeout', 'late'), 'req-1', 'https://example.test/errors');
    expect(f).toMatchObject({ tokens: [], error_code: 408, error_type: 'request_timeout', error_message: 'late', request_id: 'req-1' });
    expect(Value.Check(SttServerFrame, f)).toBe(true);
  });

  it('a result frame matches the schema; error keys on it do not', () => {
    const frame = { tokens: [{ text: 'hi', start_ms: 0, end_ms: 100, confidence: 0.9, is_final: true }], final_audio_proc_ms: 100, total_audio_proc_ms: 120 };
    expect(Value.Check(SttServerFrame, frame)).toBe(true);
    expect(Value.Check(SttServerFrame, { ...frame, finished: true })).toBe(true);
    expect(Value.Check(SttServerFrame, { ...frame, error_code: null })).toBe(false);
  });
});
