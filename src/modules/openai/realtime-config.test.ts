import { describe, expect, it } from 'vitest';
import { parseRealtimeConfig } from '../realtime/config.js';
import { applyBeta, applyGa, defaultSettings, lockedFields, nativeConfig, renderBeta, renderGa } from './realtime-config.js';
import { ClientEventError } from './realtime-schemas.js';

describe('transcription session settings', () => {
  it("start from OpenAI's defaults: pcm16 at 24 kHz, server VAD with 500 ms of silence, the URL's model", () => {
    const s = defaultSettings('whisper-1');
    expect(renderGa(s, 'sess_1', 5).audio).toEqual({
      input: {
        format: { type: 'audio/pcm', rate: 24000 },
        transcription: { model: 'whisper-1', language: null, prompt: '' },
        turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 },
        noise_reduction: null,
      },
    });
    expect(defaultSettings().model).toBe('gpt-4o-transcribe');
  });

  it('a GA update changes only the fields it has; the beta update is the same settings in its own shape', () => {
    const s = applyGa(
      defaultSettings(),
      {
        type: 'transcription',
        audio: { input: { format: { type: 'audio/pcmu' }, transcription: { language: 'en' }, turn_detection: null } },
        include: ['item.input_audio_transcription.logprobs'],
      },
      null,
    );
    expect(s).toMatchObject({ format: 'g711_ulaw', model: 'gpt-4o-transcribe', language: 'en', turnDetection: null, logprobs: true });
    const again = applyGa(s, { type: 'transcription', audio: { input: { transcription: { prompt: 'names' } } } }, null);
    expect(again).toMatchObject({ format: 'g711_ulaw', language: 'en', prompt: 'names', turnDetection: null });
    const beta = applyBeta(defaultSettings(), {
      input_audio_format: 'g711_ulaw',
      input_audio_transcription: { language: 'en' },
      turn_detection: null,
      include: ['item.input_audio_transcription.logprobs'],
    });
    expect(beta).toEqual(s);
    expect(renderBeta(beta, 'sess_1', 5)).toMatchObject({
      input_audio_format: 'g711_ulaw',
      turn_detection: null,
      include: ['item.input_audio_transcription.logprobs'],
    });
    expect(() => applyGa(s, { type: 'realtime' }, 'e1')).toThrow(ClientEventError);
  });

  it('become a native configuration the real-time parser accepts, OpenAI model names served by the configured model', () => {
    const native = nativeConfig(
      applyGa(defaultSettings(), { type: 'transcription', audio: { input: { transcription: { language: 'en', prompt: 'Parlance' } } } }, null),
      'parlance-rt-en-v1',
    );
    expect(parseRealtimeConfig(native)).toMatchObject({
      model: 'parlance-rt-en-v1',
      audioFormat: 'pcm_s16le',
      sampleRate: 24000,
      numChannels: 1,
      languageHints: ['en'],
      context: 'Parlance',
      enableEndpointDetection: true,
    });
    expect(nativeConfig({ ...defaultSettings(), format: 'g711_alaw', model: 'stt-rt-v4' }, 'x')).toMatchObject({
      model: 'stt-rt-v4',
      audio_format: 'alaw',
      sample_rate: 8000,
    });
  });

  it('keywords become the context terms, the prompt its text; null or a null transcription clears them', () => {
    const withKeywords = applyGa(
      defaultSettings(),
      { type: 'transcription', audio: { input: { transcription: { prompt: 'A call', keywords: ['Parlance', 'unmuted'] } } } },
      null,
    );
    expect(parseRealtimeConfig(nativeConfig(withKeywords, 'm')).context).toEqual({ text: 'A call', terms: ['Parlance', 'unmuted'] });
    expect(nativeConfig({ ...withKeywords, prompt: null }, 'm').context).toEqual({ terms: ['Parlance', 'unmuted'] });
    expect(renderGa(withKeywords, 's', 1).audio).toMatchObject({ input: { transcription: { prompt: 'A call', keywords: ['Parlance', 'unmuted'] } } });
    expect(renderBeta(withKeywords, 's', 1).input_audio_transcription).toEqual({
      model: 'gpt-4o-transcribe',
      language: null,
      prompt: 'A call',
      keywords: ['Parlance', 'unmuted'],
    });
    // Only the fields sent change: an update without keywords keeps them.
    expect(applyBeta(withKeywords, { input_audio_transcription: { language: 'en' } }).keywords).toEqual(['Parlance', 'unmuted']);
    expect(applyBeta(withKeywords, { input_audio_transcription: { keywords: null } }).keywords).toEqual([]);
    expect(applyBeta(withKeywords, { input_audio_transcription: null }).keywords).toEqual([]);
    expect(nativeConfig(applyBeta(withKeywords, { input_audio_transcription: { keywords: [] } }), 'm').context).toBe('A call');
  });

  it('clamp the turn silence to the native endpoint delay range, at both ends', () => {
    const delay = (silence: number) => nativeConfig(withSilence(silence), 'm').max_endpoint_delay_ms;
    const withSilence = (silence_duration_ms: number) => ({ ...defaultSettings(), turnDetection: { type: 'server_vad' as const, silence_duration_ms } });
    expect([delay(0), delay(499), delay(500), delay(1200), delay(3000), delay(3001)]).toEqual([500, 500, 500, 1200, 3000, 3000]);
    expect(nativeConfig({ ...defaultSettings(), turnDetection: { type: 'semantic_vad', eagerness: 'low' } }, 'm').max_endpoint_delay_ms).toBe(2000);
  });

  it('lock what the running recognizer depends on, not turn detection', () => {
    const s = defaultSettings();
    expect(lockedFields(applyGa(s, { type: 'transcription', audio: { input: { turn_detection: null } } }, null), 'ga')).toEqual(lockedFields(s, 'ga'));
    expect(lockedFields({ ...s, format: 'g711_alaw' }, 'ga')['session.audio.input.format']).toBe('g711_alaw');
    expect(lockedFields({ ...s, language: 'en' }, 'beta')['session.input_audio_transcription.language']).toBe('en');
    expect(lockedFields({ ...s, keywords: ['Parlance'] }, 'ga')['session.audio.input.transcription.keywords']).toEqual(['Parlance']);
  });
});
