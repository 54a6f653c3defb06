import { describe, expect, it } from 'vitest';
import type { TranscriptToken } from '../transcriptions/schemas.js';
import { FRAME_MS } from '../../audio/speech-map.js';
import { render, streamEvents, withSegments } from './render.js';
import type { FinishedAudio } from './service.js';

const tok = (text: string, start_ms: number, end_ms: number, extra: Partial<TranscriptToken> = {}): TranscriptToken => ({
  text,
  start_ms,
  end_ms,
  confidence: 0.5,
  ...extra,
});

const tokens = [
  tok('Hello', 100, 400, { speaker: '1' }),
  tok(' world.', 450, 900, { speaker: '1' }),
  tok(' Bye', 2000, 2300, { speaker: '2' }),
  tok(' now.', 2350, 2600, { speaker: '2' }),
];
const result: FinishedAudio = { id: 't1', task: 'transcribe', text: 'Hello world. Bye now.', tokens, durationMs: 2500, language: 'en' };

describe('render', () => {
  it('json and text', () => {
    expect(render(result, { format: 'json' })).toEqual({ json: { text: 'Hello world. Bye now.', usage: { type: 'duration', seconds: 3 } } });
    expect(render(result, { format: 'text' })).toEqual({ text: 'Hello world. Bye now.\n' });
    const lp = render(result, { format: 'json', logprobs: true }) as { json: { logprobs: { token: string; logprob: number; bytes: number[] }[] } };
    expect(lp.json.logprobs[0]).toEqual({ token: 'Hello', logprob: -0.6931, bytes: [72, 101, 108, 108, 111] });
  });

  it('verbose_json: segments by default, words on request, times inside the audio, words without punctuation', () => {
    const v = (render(result, { format: 'verbose_json' }) as { json: Record<string, unknown> }).json;
    expect(v).toMatchObject({ task: 'transcribe', language: 'english', duration: 2.5, text: 'Hello world. Bye now.' });
    expect(v.words).toBeUndefined();
    expect(v.segments).toEqual([
      expect.objectContaining({
        id: 0,
        seek: 10,
        start: 0.1,
        end: 0.9,
        text: ' Hello world.',
        tokens: [],
        temperature: 0,
        avg_logprob: -0.6931,
        no_speech_prob: 0,
      }),
      // The last word ends past the decoded audio: clamped to the duration.
      expect.objectContaining({ id: 1, start: 2, end: 2.5, text: ' Bye now.' }),
    ]);
    const w = (render(result, { format: 'verbose_json', granularities: ['word'] }) as { json: Record<string, unknown> }).json;
    expect(w.segments).toBeUndefined();
    expect(w.words).toEqual([
      { word: 'Hello', start: 0.1, end: 0.4 },
      { word: 'world', start: 0.45, end: 0.9 },
      { word: 'Bye', start: 2, end: 2.3 },
      { word: 'now', start: 2.35, end: 2.5 },
    ]);
  });

  it('verbose_json: no_speech_prob is the share of the segment the detector heard no speech in', () => {
    // Speech from 96 ms to 608 ms and from 2016 ms on: the first segment (100-900 ms) is 292 ms short of it.
    const speech = Uint8Array.from({ length: 80 }, (_, i) => ((i >= 3 && i < 19) || i >= 63 ? 1 : 0));
    const v = render({ ...result, speech: { speech, durationMs: 80 * FRAME_MS } }, { format: 'verbose_json' }) as {
      json: { segments: { no_speech_prob: number }[] };
    };
    expect(v.json.segments.map((s) => s.no_speech_prob)).toEqual([0.365, 0.032]);
    expect([withSegments('verbose_json'), withSegments('verbose_json', ['segment', 'word']), withSegments('verbose_json', ['word'])]).toEqual([
      true,
      true,
      false,
    ]);
    expect(withSegments('json')).toBe(false);
  });

  it('diarized_json: speakers as letters', () => {
    const d = (render(result, { format: 'diarized_json' }) as { json: { segments: unknown[] } }).json;
    expect(d.segments).toEqual([
      { type: 'transcript.text.segment', id: 'seg_0', start: 0.1, end: 0.9, text: 'Hello world.', speaker: 'A' },
      { type: 'transcript.text.segment', id: 'seg_1', start: 2, end: 2.5, text: 'Bye now.', speaker: 'B' },
    ]);
  });

  it('diarized_json: known speakers by their names, the other voices lettered from A, skipping a letter in use', () => {
    const named = (speakers: string[]) =>
      (
        render({ ...result, tokens: tokens.map((t, i) => ({ ...t, speaker: speakers[i] })) }, { format: 'diarized_json' }) as {
          json: { segments: { speaker: string }[] };
        }
      ).json.segments.map((x) => x.speaker);
    expect(named(['agent', 'agent', '3', '3'])).toEqual(['agent', 'A']);
    expect(named(['2', '2', 'customer', 'customer'])).toEqual(['A', 'customer']);
    // A known speaker called "A": the unknown voice is B.
    expect(named(['A', 'A', '1', '1'])).toEqual(['A', 'B']);
  });

  it('a translation shows the translated text, timed by its originals', () => {
    const translated: FinishedAudio = {
      ...result,
      task: 'translate',
      tokens: [
        tok('hola', 100, 400, { translation_status: 'original' }),
        tok(' mundo', 450, 900, { translation_status: 'original' }),
        { text: ' hello world', confidence: 0.5, translation_status: 'translation' },
      ],
    };
    expect(render(translated, { format: 'json' })).toEqual({ json: { text: 'hello world' } });
    expect(render(translated, { format: 'srt' })).toEqual({ text: '1\n00:00:00,100 --> 00:00:00,900\nhello world\n' });
  });
});

describe('streamEvents', () => {
  it('deltas add up to the text, then done', () => {
    const events = streamEvents(result, false);
    expect(events.at(-1)).toEqual({ type: 'transcript.text.done', text: 'Hello world. Bye now.' });
    expect(
      events
        .slice(0, -1)
        .map((e) => e.delta)
        .join(''),
    ).toBe('Hello world. Bye now.');
  });

  it('diarized: each segment after its deltas, which name it', () => {
    const events = streamEvents(result, true);
    expect(events.map((e) => e.type)).toEqual([
      'transcript.text.delta',
      'transcript.text.delta',
      'transcript.text.segment',
      'transcript.text.delta',
      'transcript.text.delta',
      'transcript.text.segment',
      'transcript.text.done',
    ]);
    expect(events[3]).toEqual({ type: 'transcript.text.delta', delta: ' Bye', segment_id: 'seg_1' });
  });
});
