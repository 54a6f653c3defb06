import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.js';
import { parseTtsClientMessage, ttsErrorFrame, TtsServerFrame } from './tts-frames.js';

const parse = (msg: unknown, handshakeKey = false) => parseTtsClientMessage(typeof msg === 'string' ? msg : JSON.stringify(msg), handshakeKey);

describe('parseTtsClientMessage', () => {
  it('tells the four messages apart by their keys', () => {
    expect(parse({ api_key: 'k', stream_id: 's', model: 'm' })).toMatchObject({ ok: true, message: { type: 'start', stream_id: 's', api_key: 'k' } });
    expect(parse({ stream_id: 's', cancel: true })).toEqual({ ok: true, message: { type: 'cancel', stream_id: 's' } });
    expect(parse({ keep_alive: true })).toEqual({ ok: true, message: { type: 'keep_alive' } });
    expect(parse({ stream_id: 's', text: 'hi' })).toEqual({ ok: true, message: { type: 'text', stream_id: 's', text: 'hi', text_end: false } });
    expect(parse({ stream_id: 's', text_end: true, text: null })).toEqual({ ok: true, message: { type: 'text', stream_id: 's', text: '', text_end: true } });
  });

  it('a start without api_key is a start only when a key came with the handshake', () => {
    expect(parse({ stream_id: 's', model: 'm', voice: 'v' }, true)).toMatchObject({ ok: true, message: { type: 'start', api_key: undefined } });
    const anon = parse({ stream_id: 's', model: 'm', voice: 'v' });
    expect(anon.ok).toBe(false);
  });

  it('connection-level errors: JSON, non-objects, unknown messages, stream_id', () => {
    for (const raw of ['{nope', '[1]', 'null', { hello: 1 }, { text: 'hi' }, { api_key: 'k', stream_id: '' }, { stream_id: 'x'.repeat(257), cancel: true }]) {
      const r = parse(raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.type).toBe('invalid_request');
    }
    const message = (raw: unknown) => {
      const r = parse(raw);
      return r.ok ? undefined : r.error.message;
    };
    expect(message({ text: 'hi' })).toBe('Invalid request: stream_id: is required');
    expect(message({ api_key: 'k', stream_id: '' })).toBe('Invalid request: stream_id: must NOT have fewer than 1 characters');
    expect(message({ stream_id: 'x'.repeat(257), cancel: true })).toBe('Invalid request: stream_id: must NOT have more than 256 characters');
    expect(message({ stream_id: 5, text_end: true })).toBe('Invalid request: stream_id: must be string');
  });

  it('a text of the wrong type is an error of its stream, not of the connection', () => {
    const r = parse({ stream_id: 's', text: 5 });
    expect(r.ok).toBe(true);
    if (r.ok && r.message.type === 'text' && 'error' in r.message) expect(r.message.error.message).toBe('Invalid request: text: must be string or null');
    else expect.fail('expected a text message with an error');
  });
});

describe('TTS server frames', () => {
  it('error frames: per stream, and connection-level in both profiles, all within TtsServerFrame', () => {
    const err = new ApiError('invalid_request', 'bad');
    const perStream = ttsErrorFrame(err, 's', 'r', 'https://x/docs/errors', 'spec');
    expect(perStream).toMatchObject({ stream_id: 's', error_code: 400, error_type: 'invalid_request' });
    expect(ttsErrorFrame(err, null, 'r', 'https://x/docs/errors', 'spec').stream_id).toBe('');
    expect(ttsErrorFrame(err, null, 'r', 'https://x/docs/errors', 'soniox-sdk')).not.toHaveProperty('stream_id');
    expect(Value.Check(TtsServerFrame, perStream)).toBe(true);
  });

  it('normal frames carry no error keys', () => {
    expect(Value.Check(TtsServerFrame, { stream_id: 's', audio: 'AAAA' })).toBe(true);
    expect(Value.Check(TtsServerFrame, { stream_id: 's', audio: 'AAAA', error_type: 'x' })).toBe(false);
    expect(Value.Check(TtsServerFrame, { stream_id: 's', terminated: true })).toBe(true);
    expect(Value.Check(TtsServerFrame, { stream_id: 's', audio_end: false })).toBe(false);
  });
});
