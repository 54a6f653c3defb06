// Word timestamps of synthesized speech against a real server and real engines (flite behind tts-rt-v2, espeak-ng,
// festival): `word_timestamps: true` on a /tts-websocket start adds {stream_id, word_timestamps} frames before the audio
// they describe, and POST /tts/with-timestamps answers the audio with its words as JSON, validated as POST /tts is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textWords } from '../../src/engines/tts/word-timings.js';
import { startParlance, type Parlance } from '../harness.js';
import { openTts, probeAudio, startMsg, type WsClient } from './tts-helpers.js';

let s: Parlance;
beforeAll(async () => {
  s = await startParlance();
});
afterAll(async () => s?.stop());

interface Word {
  text: string;
  start_ms: number;
  end_ms: number;
}

const TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet, to the dark blue background!';
const PARTS = ['The birch canoe slid on ', 'the smooth planks. Glue the sheet, ', 'to the dark blue background!'];
const VOICES: [string, string][] = [
  ['tts-rt-v2', 'Adrian'], // flite: its own phone times
  ['parlance-tts-espeak-v1', 'Maya'], // espeak-ng: estimated from the audio
  ['parlance-tts-festival-v1', 'Kal'], // festival: its own word times
];
const RATE = 16000;

/** Words in order, each within itself and after the previous one, inside `durationMs`, and spread over the audio. */
function expectWellFormed(words: Word[], durationMs: number): void {
  expect(words.map((w) => w.text)).toEqual(textWords(TEXT).map((w) => w.text));
  let prevEnd = 0;
  for (const w of words) {
    expect(Number.isInteger(w.start_ms) && Number.isInteger(w.end_ms)).toBe(true);
    expect(w.start_ms).toBeGreaterThanOrEqual(prevEnd);
    expect(w.end_ms).toBeGreaterThan(w.start_ms);
    prevEnd = w.end_ms;
  }
  expect(prevEnd).toBeLessThanOrEqual(durationMs + 1);
  // The words cover most of the audio: not bunched at its start.
  expect(prevEnd).toBeGreaterThan(durationMs * 0.7);
  expect(words[0]!.start_ms).toBeLessThan(durationMs * 0.2);
}

async function stream(c: WsClient, id: string, extra: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  c.send(startMsg(s.apiKey, id, extra));
  PARTS.forEach((text, i) => c.send({ stream_id: id, text, text_end: i === PARTS.length - 1 }));
  await c.next((f) => f.stream_id === id && f.terminated === true, 60_000);
  return c.frames.filter((f) => f.stream_id === id);
}

describe('/tts-websocket word_timestamps', () => {
  for (const [model, voice] of VOICES) {
    it(`sends the words of ${model} ${voice} before their audio, in order, within the audio`, async () => {
      const c = await openTts(s.url);
      const frames = await stream(c, `w-${voice}`, { model, voice, word_timestamps: true });
      c.close();
      expect(frames.some((f) => f.error_type !== undefined)).toBe(false);
      const words: Word[] = [];
      let audioMs = 0;
      for (const f of frames) {
        if (Array.isArray(f.word_timestamps)) {
          // Before or with the audio they describe: no word of this frame is in audio already sent.
          for (const w of f.word_timestamps as Word[]) expect(w.start_ms).toBeGreaterThanOrEqual(Math.floor(audioMs) - 1);
          words.push(...(f.word_timestamps as Word[]));
        }
        if (typeof f.audio === 'string') audioMs += (Buffer.from(f.audio, 'base64').length / 2 / RATE) * 1000;
      }
      // Word frames come before audio_end.
      const end = frames.findIndex((f) => f.audio_end === true);
      const lastWords = frames.map((f) => Array.isArray(f.word_timestamps)).lastIndexOf(true);
      expect(lastWords).toBeGreaterThanOrEqual(0);
      expect(end).toBeGreaterThan(lastWords);
      expectWellFormed(words, audioMs);
    });
  }

  it('sends no word frames unless asked', async () => {
    const c = await openTts(s.url);
    const frames = await stream(c, 'plain', {});
    c.close();
    expect(frames.some((f) => 'word_timestamps' in f)).toBe(false);
    expect(frames.some((f) => f.audio_end === true)).toBe(true);
  });

  it('refuses a word_timestamps that is not a boolean as an error of that stream', async () => {
    const c = await openTts(s.url);
    c.send(startMsg(s.apiKey, 'bad', { word_timestamps: 'yes' }));
    const err = await c.next((f) => f.stream_id === 'bad' && f.error_type !== undefined);
    expect(err.error_type).toBe('invalid_request');
    expect(String(err.error_message)).toMatch(/word_timestamps/);
    await c.next((f) => f.stream_id === 'bad' && f.terminated === true);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.close();
  });
});

function post(pathname: string, body: unknown, key?: string | null): Promise<Response> {
  return s.request(pathname, {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /tts/with-timestamps', () => {
  for (const [model, voice] of VOICES) {
    it(`answers ${model} ${voice} audio that decodes and covers its words`, async () => {
      const res = await post('/tts/with-timestamps', { model, language: 'en', voice, audio_format: 'wav', text: TEXT });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const body = (await res.json()) as { audio_base64: string; audio_format: string; words: Word[] };
      expect(Object.keys(body).sort()).toEqual(['audio_base64', 'audio_format', 'words']);
      expect(body.audio_format).toBe('wav');
      const wav = Buffer.from(body.audio_base64, 'base64');
      // The whole file is known: its sizes are exact.
      expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
      const audio = await probeAudio(wav, 'wav', 0);
      expect(audio.seconds * 1000).toBeGreaterThanOrEqual(body.words.at(-1)!.end_ms - 1);
      expectWellFormed(body.words, audio.seconds * 1000);
    });
  }

  it('keeps the words within the audio when reduce_silence trims it', async () => {
    const body = { model: 'parlance-tts-espeak-v1', language: 'en', voice: 'Maya', audio_format: 'pcm_s16le', sample_rate: RATE, text: TEXT };
    const [trimmed, full] = await Promise.all(
      [true, false].map(async (reduce_silence) => {
        const res = await post('/tts/with-timestamps', { ...body, reduce_silence });
        expect(res.status).toBe(200);
        const b = (await res.json()) as { audio_base64: string; words: Word[] };
        return { ms: (Buffer.from(b.audio_base64, 'base64').length / 2 / RATE) * 1000, words: b.words };
      }),
    );
    expect(trimmed!.ms).toBeLessThan(full!.ms);
    expectWellFormed(trimmed!.words, trimmed!.ms);
    // The leading silence is gone: the first word starts sooner.
    expect(trimmed!.words[0]!.start_ms).toBeLessThanOrEqual(full!.words[0]!.start_ms);
  });

  for (const [model, voice] of [VOICES[0]!, VOICES[1]!]) {
    it(`times the words of SSML with a break on ${model} ${voice}, the break between them`, async () => {
      const text = '<speak>Hello there, <break time="800ms"/> my <prosody rate="slow">dear</prosody> friend.</speak>';
      const res = await post('/tts/with-timestamps', { model, language: 'en', voice, audio_format: 'pcm_s16le', sample_rate: RATE, text, text_format: 'ssml' });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { audio_base64: string; words: Word[] };
      expect(body.words.map((w) => w.text)).toEqual(['Hello', 'there', 'my', 'dear', 'friend']);
      let prev = 0;
      for (const w of body.words) {
        expect(w.start_ms).toBeGreaterThanOrEqual(prev);
        prev = w.end_ms;
      }
      expect(prev).toBeLessThanOrEqual((Buffer.from(body.audio_base64, 'base64').length / 2 / RATE) * 1000 + 1);
      // The 800 ms break lies between "there" and "my".
      expect(body.words[2]!.start_ms - body.words[1]!.end_ms).toBeGreaterThanOrEqual(700);
    });
  }

  it('answers a compressed format too', async () => {
    const res = await post('/tts/with-timestamps', { model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'mp3', text: TEXT });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { audio_base64: string; audio_format: string; words: Word[] };
    expect(body.audio_format).toBe('mp3');
    const audio = await probeAudio(Buffer.from(body.audio_base64, 'base64'), 'mp3', 0);
    expect(audio.codec).toBe('mp3');
    expect(audio.seconds * 1000).toBeGreaterThanOrEqual(body.words.at(-1)!.end_ms - 1);
  });

  const good = { model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'wav', text: TEXT };
  const bad: [string, unknown, string | null | undefined][] = [
    ['malformed JSON', '{"model":', undefined],
    ['a missing voice', { ...good, voice: undefined }, undefined],
    ['a speed out of range', { ...good, speed: 5 }, undefined],
    ['an unknown model', { ...good, model: 'nope-v9' }, undefined],
    ['an unknown voice', { ...good, voice: 'Nobody' }, undefined],
    ['text without words', { ...good, text: '...' }, undefined],
    ['no key', good, null],
    ['a wrong key', good, 'not-a-key'],
  ];
  for (const [what, body, key] of bad) {
    it(`refuses ${what} as POST /tts does`, async () => {
      const [a, b] = await Promise.all([post('/tts', body, key), post('/tts/with-timestamps', body, key)]);
      expect(b.status).toBe(a.status);
      expect(b.status).toBeGreaterThanOrEqual(400);
      const [ea, eb] = (await Promise.all([a.json(), b.json()])) as Record<string, unknown>[];
      expect(Object.keys(eb!).sort()).toEqual(Object.keys(ea!).sort());
      expect(eb!.error_type).toBe(ea!.error_type);
      expect(eb!.error_message).toBe(ea!.error_message);
    });
  }

  it('is described in /openapi.json with its response', async () => {
    const doc = (await (await s.request('/openapi.json')).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const op = doc.paths['/tts/with-timestamps']!.post!;
    expect(JSON.stringify(op.responses['200'])).toMatch(/audio_base64.*words|words.*audio_base64/s);
  });
});
