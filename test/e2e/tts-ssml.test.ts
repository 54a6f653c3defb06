// SSML (`text_format: "ssml"`) against a real server and real engines: a <break time="700ms"/> between two words is
// 650–800 ms of silence measured in the returned audio on every engine (espeak-ng natively, flite and festival
// through the translator, the routed default model both ways), prosody rate, pitch and volume move the audio the
// right way, say-as characters spells, breaks survive reduce_silence, invalid SSML is 400 invalid_request naming
// the line and column, caps count the spoken text, and the same document over the TTS WebSocket (sent in pieces)
// and Wyoming `synthesize`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, type Parlance } from '../harness.js';
import { openTts, streamAudio } from './tts-helpers.js';
import { freePort, WyomingClient } from './wyoming-helpers.js';

const RATE = 16000;
/** Samples quieter than this count as silence (about -38 dBFS). */
const QUIET = 400;

let s: Parlance;
let small: Parlance;
let wyomingPort: number;
beforeAll(async () => {
  wyomingPort = await freePort();
  [s, small] = await Promise.all([
    startParlance({ env: { PARLANCE_WYOMING_PORT: String(wyomingPort) } }),
    startParlance({ env: { PARLANCE_TTS_MAX_TEXT_CHARS: '40' } }),
  ]);
}, 120_000);
afterAll(async () => Promise.all([s?.stop(), small?.stop()]));

/** Each engine path: model, voice, language. */
const ENGINES = [
  { name: 'espeak-ng (native SSML)', model: 'parlance-tts-espeak-v1', voice: 'Adrian', language: 'en' },
  { name: 'flite (translator)', model: 'parlance-tts-flite-v1', voice: 'Adrian', language: 'en' },
  { name: 'festival diphone (translator)', model: 'parlance-tts-festival-v1', voice: 'Kal', language: 'en' },
  { name: 'festival HTS (translator)', model: 'parlance-tts-festival-v1', voice: 'Sarah', language: 'en' },
  { name: 'routed model, English by flite', model: 'tts-rt-v2', voice: 'Maya', language: 'en' },
  { name: 'routed model, German by espeak-ng', model: 'tts-rt-v2', voice: 'Maya', language: 'de' },
];

async function speak(body: Record<string, unknown>, server = s): Promise<Response> {
  return server.request('/tts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ audio_format: 'pcm_s16le', sample_rate: RATE, text_format: 'ssml', ...body }),
  });
}

async function pcmOf(body: Record<string, unknown>): Promise<Buffer> {
  const res = await speak(body);
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

/** The longest run of near-silent samples, in seconds. */
function longestSilence(pcm: Buffer, rate = RATE): number {
  let best = 0;
  let run = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    run = Math.abs(pcm.readInt16LE(i)) < QUIET ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best / rate;
}

const seconds = (pcm: Buffer, rate = RATE) => pcm.length / 2 / rate;

/** Seconds from the first to the last sound (the engines' leading and trailing silence left out). */
function spokenSeconds(pcm: Buffer): number {
  const n = pcm.length >> 1;
  let first = 0;
  let last = n - 1;
  while (first < n && Math.abs(pcm.readInt16LE(first * 2)) < QUIET) first++;
  while (last > first && Math.abs(pcm.readInt16LE(last * 2)) < QUIET) last--;
  return (last - first) / RATE;
}

function rms(pcm: Buffer): number {
  let sum = 0;
  const n = pcm.length >> 1;
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return Math.sqrt(sum / Math.max(1, n));
}

/** Median fundamental frequency of the loud 40 ms frames (autocorrelation, 60-400 Hz), in Hz. */
function medianPitch(pcm: Buffer): number {
  const x = Array.from({ length: pcm.length >> 1 }, (_, i) => pcm.readInt16LE(i * 2));
  const w = Math.round(RATE * 0.04);
  const found: number[] = [];
  for (let k = 0; k + w <= x.length; k += w) {
    let energy = 0;
    for (let j = k; j < k + w; j++) energy += x[j]! ** 2;
    if (energy / w < 1000 ** 2) continue;
    let best = 0;
    let lag = 0;
    for (let l = Math.floor(RATE / 400); l < RATE / 60; l++) {
      let c = 0;
      for (let j = k; j + l < k + w; j++) c += x[j]! * x[j + l]!;
      if (c > best) [best, lag] = [c, l];
    }
    if (lag) found.push(RATE / lag);
  }
  found.sort((a, b) => a - b);
  return found[found.length >> 1] ?? 0;
}

const WORDS: Record<string, [string, string]> = { en: ['Hello', 'world'], de: ['Hallo', 'Welt'] };

describe('SSML on every engine', () => {
  for (const e of ENGINES) {
    const [a, b] = WORDS[e.language]!;
    const voice = { model: e.model, voice: e.voice, language: e.language };

    it(`${e.name}: a 700 ms break between two words is 650-800 ms of silence`, async () => {
      const plain = await pcmOf({ ...voice, text: `<speak>${a} ${b}</speak>` });
      const withBreak = await pcmOf({ ...voice, text: `<speak>${a} <break time="700ms"/> ${b}</speak>` });
      expect(longestSilence(plain)).toBeLessThan(0.5);
      const gap = longestSilence(withBreak);
      expect(gap).toBeGreaterThanOrEqual(0.65);
      expect(gap).toBeLessThanOrEqual(0.8);
    });

    it(`${e.name}: a 1.5 s break after a sentence end, and prosody rate slows and speeds`, async () => {
      const sentences = await pcmOf({ ...voice, text: `<speak>${a}. <break time="1.5s"/> ${b}.</speak>` });
      const gap = longestSilence(sentences);
      expect(gap).toBeGreaterThanOrEqual(1.45);
      expect(gap).toBeLessThanOrEqual(1.6);
      const text = `${a} ${b}, ${a} ${b}, ${a} ${b}`;
      const [slow, normal, fast] = await Promise.all(
        ['x-slow', 'medium', 'x-fast'].map((rate) => pcmOf({ ...voice, text: `<speak><prosody rate="${rate}">${text}</prosody></speak>` })),
      );
      expect(seconds(slow!)).toBeGreaterThan(seconds(normal!) * 1.3);
      expect(seconds(fast!)).toBeLessThan(seconds(normal!) * 0.8);
    });

    it(`${e.name}: prosody pitch raises and lowers the voice`, async () => {
      const text = `${a} ${b}, ${a} ${b}, ${a} ${b}`;
      const [low, medium, high] = await Promise.all(
        ['x-low', 'medium', 'x-high'].map(async (pitch) =>
          medianPitch(await pcmOf({ ...voice, text: `<speak><prosody pitch="${pitch}">${text}</prosody></speak>` })),
        ),
      );
      // x-high and x-low are 4 semitones (26 %, 21 %) away; espeak-ng's own control moves less.
      expect(high! / medium!).toBeGreaterThan(1.08);
      expect(low! / medium!).toBeLessThan(0.93);
    });

    it(`${e.name}: prosody volume scales the audio`, async () => {
      const [loud, soft] = await Promise.all(
        ['medium', 'x-soft'].map((volume) => pcmOf({ ...voice, text: `<speak><prosody volume="${volume}">${a} ${b}</prosody></speak>` })),
      );
      // x-soft is -12 dB: a quarter of the amplitude.
      expect(rms(soft!) / rms(loud!)).toBeGreaterThan(0.15);
      expect(rms(soft!) / rms(loud!)).toBeLessThan(0.4);
    });
  }

  it('say-as characters spells the word out (flite, festival, espeak-ng)', async () => {
    for (const e of ENGINES.slice(0, 3)) {
      const voice = { model: e.model, voice: e.voice, language: e.language };
      const [word, spelled] = await Promise.all([
        pcmOf({ ...voice, text: '<speak>cat</speak>' }),
        pcmOf({ ...voice, text: '<speak><say-as interpret-as="characters">cat</say-as></speak>' }),
      ]);
      expect(spokenSeconds(spelled), e.name).toBeGreaterThan(spokenSeconds(word) * 1.6);
    }
  });
});

describe('SSML requests', () => {
  const voice = { model: 'tts-rt-v2', voice: 'Adrian', language: 'en' };

  it('refuses invalid SSML with 400 invalid_request naming the line and column', async () => {
    const cases: [string, RegExp][] = [
      ['<speak>\n  Hello <prosody rate="fast">world</speak>', /line 2, column 35: <\/speak> where <\/prosody> was expected/],
      ['<speak>Hello <emphasis>world</emphasis></speak>', /line 1, column 14: unknown element <emphasis>/],
      ['<speak>Hello <break time="soon"/></speak>', /line 1, column 21: time="soon" is not a duration/],
      ['Hello <speak>world</speak>', /line 1, column 1: text outside <speak>/],
      ['<speak>Hello world', /line 1, column 1: <speak> is never closed/],
    ];
    for (const [text, message] of cases) {
      const res = await speak({ ...voice, text });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error_type: string; error_message: string };
      expect(body.error_type).toBe('invalid_request');
      expect(body.error_message).toMatch(/text: is not valid SSML at /);
      expect(body.error_message).toMatch(message);
    }
    // Without text_format the markup is plain text, spoken as written.
    const plain = await s.request('/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...voice, audio_format: 'pcm_s16le', text: '<speak>Hello <emphasis>world</speak>' }),
    });
    expect(plain.status).toBe(200);
    await plain.arrayBuffer();
    const bad = await speak({ ...voice, text_format: 'html', text: 'Hello' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error_message: string }).error_message).toMatch(/text_format/);
  });

  it('keeps breaks whole with reduce_silence', async () => {
    for (const model of ['parlance-tts-espeak-v1', 'parlance-tts-flite-v1']) {
      const pcm = await pcmOf({ model, voice: 'Adrian', language: 'en', reduce_silence: true, text: '<speak>Hello <break time="700ms"/> world</speak>' });
      const gap = longestSilence(pcm);
      expect(gap, model).toBeGreaterThanOrEqual(0.65);
      expect(gap, model).toBeLessThanOrEqual(0.8);
    }
  });

  it('caps the spoken text, not the markup', async () => {
    // 35 spoken characters in a document of 150: within a cap of 40.
    const within = `<speak><prosody rate="slow" volume="soft">Hello there</prosody> <break time="200ms"/> <sub alias="World Wide Web">WWW</sub> again</speak>`;
    expect(within.length).toBeGreaterThan(40);
    const ok = await speak({ ...voice, text: within }, small);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    const over = await speak({ ...voice, text: `<speak>${'word '.repeat(9)}</speak>` }, small);
    expect(over.status).toBe(400);
    expect(((await over.json()) as { error_message: string }).error_message).toMatch(/40 characters of spoken text/);
  });

  it('the TTS WebSocket speaks an SSML document sent in pieces once its text ends', async () => {
    const c = await openTts(s.url);
    const start = { api_key: s.apiKey, ...voice, audio_format: 'pcm_s16le', sample_rate: RATE, text_format: 'ssml' };
    c.send({ ...start, stream_id: 'ok' });
    // The document is cut inside a tag: nothing is parsed before text_end.
    c.send({ stream_id: 'ok', text: '<speak>Hello <brea', text_end: false });
    c.send({ stream_id: 'ok', text: 'k time="700ms"/> world</speak>', text_end: true });
    await c.next((f) => f.stream_id === 'ok' && f.terminated === true);
    expect(c.frames.some((f) => f.stream_id === 'ok' && f.audio_end === true)).toBe(true);
    const gap = longestSilence(streamAudio(c.frames, 'ok'));
    expect(gap).toBeGreaterThanOrEqual(0.65);
    expect(gap).toBeLessThanOrEqual(0.8);

    c.send({ ...start, stream_id: 'bad' });
    c.send({ stream_id: 'bad', text: '<speak>Hello <prosody rate="fast">world', text_end: true });
    const err = await c.next((f) => f.stream_id === 'bad' && typeof f.error_message === 'string');
    expect(err.error_type).toBe('invalid_request');
    expect(err.error_message).toMatch(/line 1, column 14: <prosody> is never closed/);
    await c.next((f) => f.stream_id === 'bad' && f.terminated === true);
    expect(c.frames.some((f) => f.stream_id === 'bad' && typeof f.audio === 'string')).toBe(false);
    c.close();
  });

  it('Wyoming synthesize reads a <speak> document as SSML', async () => {
    const c = await WyomingClient.open(wyomingPort);
    const voiceName = { name: 'parlance-tts-espeak-v1/Adrian' };
    c.write('synthesize', { text: '<speak>Hello <break time="700ms"/> world</speak>', voice: voiceName });
    let events = await c.readUntil('audio-stop', 'error');
    expect(events.at(-1)!.type).toBe('audio-stop');
    const rate = (events[0]!.data as { rate: number }).rate;
    const pcm = Buffer.concat(events.filter((e) => e.type === 'audio-chunk').map((e) => e.payload ?? Buffer.alloc(0)));
    const gap = longestSilence(pcm, rate);
    expect(gap).toBeGreaterThanOrEqual(0.65);
    expect(gap).toBeLessThanOrEqual(0.8);
    // text_format "ssml" with an invalid document: an error event naming the position.
    c.write('synthesize', { text: '<speak>Hello <foo/></speak>', text_format: 'ssml', voice: voiceName });
    events = await c.readUntil('audio-stop', 'error');
    expect(events.at(-1)).toMatchObject({ type: 'error', data: { code: 'invalid_request' } });
    expect((events.at(-1)!.data as { text: string }).text).toMatch(/line 1, column 14: unknown element <foo>/);
    c.close();
  });

  it('documents text_format in /openapi.json', async () => {
    const spec = (await (await s.request('/openapi.json')).json()) as Record<string, unknown>;
    const body = (spec.paths as Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }>)[
      '/tts'
    ]!.post.requestBody.content['application/json']!.schema;
    expect(JSON.stringify(body.properties.text_format)).toMatch(/"ssml"/);
  });
});
