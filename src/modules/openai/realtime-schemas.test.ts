import { describe, expect, it } from 'vitest';
import { MAX_CONTEXT_CHARS } from '../realtime/config.js';
import { ClientEventError, parseClientEvent } from './realtime-schemas.js';
import { MAX_KEYWORD_CHARS, MAX_KEYWORDS } from './schemas.js';

/** The ClientEventError parseClientEvent throws for `event`. */
function refusal(event: unknown): ClientEventError {
  try {
    parseClientEvent(typeof event === 'string' ? event : JSON.stringify(event));
  } catch (err) {
    if (err instanceof ClientEventError) return err;
    throw err;
  }
  throw new Error(`accepted: ${JSON.stringify(event)}`);
}

const ga = (input: Record<string, unknown>) => ({ type: 'session.update', session: { type: 'transcription', audio: { input } } });

describe('parseClientEvent', () => {
  it("accepts the SDK's GA and beta session updates, appends, commits and clears, ignoring fields it does not know", () => {
    expect(
      parseClientEvent(
        JSON.stringify(
          ga({
            format: { type: 'audio/pcm', rate: 24000 },
            transcription: { model: 'gpt-4o-transcribe', language: 'en', prompt: 'x' },
            turn_detection: null,
            noise_reduction: { type: 'near_field' },
          }),
        ),
      ).type,
    ).toBe('session.update');
    expect(parseClientEvent(JSON.stringify(ga({ turn_detection: { type: 'semantic_vad', eagerness: 'high' }, future_field: 1 }))).type).toBe('session.update');
    expect(
      parseClientEvent(
        JSON.stringify({
          type: 'transcription_session.update',
          session: { input_audio_format: 'g711_alaw', turn_detection: { type: 'server_vad', silence_duration_ms: 0 } },
        }),
      ).type,
    ).toBe('transcription_session.update');
    expect(parseClientEvent('{"type":"input_audio_buffer.append","audio":"AAAA","event_id":"e"}')).toEqual({
      type: 'input_audio_buffer.append',
      audio: 'AAAA',
      event_id: 'e',
    });
    expect(parseClientEvent('{"type":"input_audio_buffer.commit"}').type).toBe('input_audio_buffer.commit');
    expect(parseClientEvent('{"type":"input_audio_buffer.clear"}').type).toBe('input_audio_buffer.clear');
  });

  it('refuses what is not an event, naming the code and the param, and echoing the client event_id', () => {
    expect(refusal('{')).toMatchObject({ code: 'invalid_json', param: null, eventId: null });
    expect(refusal('"x"')).toMatchObject({ code: 'invalid_event' });
    expect(refusal({ event_id: 'e1' })).toMatchObject({ code: 'missing_required_parameter', param: 'type', eventId: 'e1' });
    expect(refusal({ type: 'x'.repeat(500) }).message.length).toBeLessThan(400);
    expect(refusal({ type: 'response.create' })).toMatchObject({ code: 'unsupported_event', param: 'type' });
    expect(refusal({ type: 'input_audio_buffer.append', audio: 3 })).toMatchObject({ code: 'invalid_value', param: 'audio' });
    expect(
      refusal({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } }).param,
    ).toMatch(/^session\.audio\.input\.format/);
    expect(refusal({ type: 'transcription_session.update', session: { input_audio_format: 'mp3' } })).toMatchObject({
      code: 'invalid_value',
      param: 'session.input_audio_format',
    });
  });

  it('says what is wrong in the one style, every bad field by its dotted location, the first as param', () => {
    expect(refusal({ type: 'session.update', session: {} })).toMatchObject({
      code: 'missing_required_parameter',
      param: 'session.type',
      message: 'Invalid request: session.type: is required',
    });
    expect(refusal(ga({ format: { type: 'audio/pcm', rate: 16000 }, turn_detection: { type: 'semantic_vad', eagerness: 'now' } }))).toMatchObject({
      code: 'invalid_value',
      param: 'session.audio.input.format.rate',
      message:
        'Invalid request: session.audio.input.format.rate: must be 24000; session.audio.input.turn_detection.eagerness: must be one of low, medium, high, auto',
    });
    expect(refusal({ type: 'transcription_session.update', session: { input_audio_format: 'mp3' } }).message).toBe(
      'Invalid request: session.input_audio_format: must be one of pcm16, g711_ulaw, g711_alaw',
    );
    expect(refusal({ type: 'nope' }).message).toMatch(/^Invalid request: type: 'nope' is not supported; must be one of session\.update, /);
  });

  it('holds every limit at its boundary', () => {
    const prompt = (n: number) => ga({ transcription: { prompt: 'a'.repeat(n) } });
    expect(parseClientEvent(JSON.stringify(prompt(MAX_CONTEXT_CHARS))).type).toBe('session.update');
    expect(refusal(prompt(MAX_CONTEXT_CHARS + 1))).toMatchObject({ code: 'invalid_value', param: 'session.audio.input.transcription.prompt' });
    expect(parseClientEvent(JSON.stringify(ga({ transcription: { language: 'x'.repeat(16) } }))).type).toBe('session.update');
    expect(refusal(ga({ transcription: { language: 'x'.repeat(17) } })).param).toBe('session.audio.input.transcription.language');
    expect(parseClientEvent(JSON.stringify(ga({ transcription: { model: 'm'.repeat(64) } }))).type).toBe('session.update');
    expect(refusal(ga({ transcription: { model: 'm'.repeat(65) } })).param).toBe('session.audio.input.transcription.model');
    const vad = (v: Record<string, unknown>) => ga({ turn_detection: { type: 'server_vad', ...v } });
    for (const ok of [{ threshold: 0 }, { threshold: 1 }, { silence_duration_ms: 0 }, { silence_duration_ms: 10_000 }, { prefix_padding_ms: 10_000 }])
      expect(parseClientEvent(JSON.stringify(vad(ok))).type).toBe('session.update');
    for (const [bad, field] of [
      [{ threshold: -0.01 }, 'threshold'],
      [{ threshold: 1.01 }, 'threshold'],
      [{ silence_duration_ms: -1 }, 'silence_duration_ms'],
      [{ silence_duration_ms: 10_001 }, 'silence_duration_ms'],
      [{ silence_duration_ms: 1.5 }, 'silence_duration_ms'],
    ] as const)
      expect(refusal(vad(bad)).param).toBe(`session.audio.input.turn_detection.${field}`);
    expect(refusal(ga({ turn_detection: { type: 'semantic_vad', eagerness: 'now' } })).param).toBe('session.audio.input.turn_detection.eagerness');
    const keywords = (list: unknown) => ga({ transcription: { keywords: list } });
    expect(parseClientEvent(JSON.stringify(keywords(Array<string>(MAX_KEYWORDS).fill('k')))).type).toBe('session.update');
    expect(parseClientEvent(JSON.stringify(keywords(['k'.repeat(MAX_KEYWORD_CHARS)]))).type).toBe('session.update');
    expect(parseClientEvent(JSON.stringify(keywords(null))).type).toBe('session.update');
    expect(refusal(keywords(Array<string>(MAX_KEYWORDS + 1).fill('k'))).param).toBe('session.audio.input.transcription.keywords');
    expect(refusal(keywords(['k'.repeat(MAX_KEYWORD_CHARS + 1)])).param).toBe('session.audio.input.transcription.keywords.0');
    expect(refusal(keywords('Parlance'))).toMatchObject({ code: 'invalid_value', param: 'session.audio.input.transcription.keywords' });
    expect(refusal({ type: 'transcription_session.update', session: { input_audio_transcription: { keywords: [1] } } }).param).toBe(
      'session.input_audio_transcription.keywords.0',
    );
  });
});
