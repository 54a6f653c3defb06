// TTS voices from a model users bring (sherpa-onnx), end to end: a tiny Piper VITS model built at test time (every
// phoneme id is 40 ms of tone, speaker 1 pitched higher: test/fixtures/sherpa-models.ts) in the models directory is
// listed in GET /v1/tts-models with its voices, takes over the public id tts-rt-v2, and speaks over POST /tts and
// /tts-websocket; a model sherpa-onnx cannot use is left out with its reason logged while the server goes on. A tiny
// Kitten model (test/fixtures/sherpa-kitten-model.ts: one tone a token, each voice its own pitch) speaks too, its
// voices listed with the gender their names give.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TONE_VITS, writeToneVitsModel, writeVitsModelWithoutMetadata } from '../fixtures/sherpa-models.js';
import { KITTEN_TONE, writeToneKittenModel } from '../fixtures/sherpa-kitten-model.js';
import { type Parlance, runCli, startParlance, tempDir } from '../harness.js';
import { openTts, probeAudio, startMsg, streamAudio } from './tts-helpers.js';

const MODEL = 'tone-vits-v1';
/** The model speaks at 16 kHz: audio asked at 16 kHz comes out sample for sample, so lengths are exact. */
const RATE = 16000;
const SLOT = (RATE * TONE_VITS.idMs) / 1000;

const root = tempDir('parlance-tts-sherpa-');
const dataDir = path.join(root, 'data');
let s: Parlance;

function modelFolder(name: string, manifest: Record<string, unknown>, write: (dir: string) => void): void {
  const dir = path.join(dataDir, 'models', name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  writeFileSync(
    path.join(dir, 'parlance-model.json'),
    JSON.stringify({
      family: 'tts',
      type: 'vits',
      files: { model: 'model.onnx', tokens: 'tokens.txt', data_dir: 'espeak-ng-data' },
      languages: ['en'],
      ...manifest,
    }),
  );
}

beforeAll(async () => {
  modelFolder('tone', { id: MODEL, name: 'Tone test voices', voices: { Low: 0, High: 1 }, aliases: ['tts-rt-v2'], sample_rate: RATE }, (d) =>
    writeToneVitsModel(d, { sampleRate: RATE, numSpeakers: 2 }),
  );
  modelFolder('broken', { id: 'broken-tts-v1', aliases: ['tts-rt-v1'] }, (d) => writeVitsModelWithoutMetadata(d));
  modelFolder(
    'kitten',
    {
      id: 'tone-kitten-v1',
      name: 'Kitten test voices',
      type: 'kitten',
      files: { model: 'model.onnx', voices: 'voices.bin', tokens: 'tokens.txt', data_dir: 'espeak-ng-data' },
      voices: Object.fromEntries(KITTEN_TONE.voices.map((v, i) => [v, i])),
    },
    (d) => writeToneKittenModel(d),
  );
  s = await startParlance({ dataDir, keepDataDir: true, env: { PARLANCE_LOG_LEVEL: 'info' } });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(root, { recursive: true, force: true });
});

function tts(body: Record<string, unknown>): Promise<Response> {
  return s.request('/tts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const base = { model: MODEL, language: 'en', voice: 'Low', audio_format: 'pcm_s16le', sample_rate: RATE };

/** The whole body of a POST /tts that must succeed. */
async function speak(body: Record<string, unknown>): Promise<Buffer> {
  const res = await tts({ ...base, ...body });
  expect(
    res.status,
    await res
      .clone()
      .text()
      .catch(() => ''),
  ).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

function zeroCrossings(pcm: Buffer): number {
  let n = 0;
  for (let i = 2; i < pcm.length; i += 2) if (pcm.readInt16LE(i - 2) < 0 !== pcm.readInt16LE(i) < 0) n++;
  return n;
}

describe('a TTS model in the models directory', () => {
  it('is listed with its voices and the alias it claimed; the broken model is not, and says why in the log', async () => {
    const { models } = (await (await s.request('/v1/tts-models')).json()) as { models: Record<string, unknown>[] };
    const mine = models.find((m) => m.id === MODEL);
    expect(mine).toEqual({
      id: MODEL,
      aliased_model_id: null,
      name: 'Tone test voices',
      languages: [{ code: 'en', name: 'English' }],
      voices: [
        { id: 'Low', description: 'Tone test voices: speaker 0 (vits model)', gender: 'neutral' },
        { id: 'High', description: 'Tone test voices: speaker 1 (vits model)', gender: 'neutral' },
      ],
      supports_timestamps: true,
      supports_speed_adjustment: true,
      speed_min: 0.7,
      speed_max: 1.3,
      supports_silence_reduction: true,
    });
    expect(models.find((m) => m.id === 'tts-rt-v2')).toMatchObject({ aliased_model_id: MODEL, voices: mine!.voices });
    // tts-rt-v1 was claimed by the broken model only: it stays with the built-in model.
    expect(models.find((m) => m.id === 'tts-rt-v1')?.aliased_model_id).toBe('parlance-tts-v1');
    expect(models.some((m) => m.id === 'broken-tts-v1')).toBe(false);
    expect(s.stderr()).toMatch(/broken-tts-v1 .*could not be loaded by sherpa-onnx \(exit 255\): 'sample_rate' does not exist in the metadata/);

    // `parlance models list` shows the same TTS models, the broken one left out with its reason.
    const cli = await runCli(['models', 'list', '--data-dir', dataDir, '--json']);
    expect(cli.code).toBe(0);
    const listed = (JSON.parse(cli.stdout) as { tts_models: Record<string, unknown>[] }).tts_models;
    expect(listed).toEqual(models);
    expect(cli.stderr).toMatch(/broken-tts-v1/);
    const text = await runCli(['models', 'list', '--data-dir', dataDir]);
    expect(text.stdout).toMatch(new RegExp(`^tts-rt-v2 +tts +→ ${MODEL}$`, 'm'));
    const voices = (await (await s.request('/v1/tts-voices?model=tts-rt-v2&gender=neutral')).json()) as { voices: Record<string, unknown>[] };
    expect(voices.voices).toEqual([
      {
        id: 'High',
        description: 'Tone test voices: speaker 1 (vits model)',
        gender: 'neutral',
        age: 'middle_aged',
        accent: 'english',
        use_case: ['general'],
        style: ['neural'],
      },
      {
        id: 'Low',
        description: 'Tone test voices: speaker 0 (vits model)',
        gender: 'neutral',
        age: 'middle_aged',
        accent: 'english',
        use_case: ['general'],
        style: ['neural'],
      },
    ]);
  }, 60_000);

  it('speaks over POST /tts by its id and through tts-rt-v2: longer text is longer audio, each voice its own pitch', async () => {
    const short = await speak({ text: 'Hi.' });
    const long = await speak({ text: 'Hi. Hello world, this is a longer sentence. Goodbye for now.' });
    for (const pcm of [short, long]) expect((pcm.length / 2) % SLOT).toBe(0);
    expect(long.length).toBeGreaterThan(5 * short.length);
    // Sentence by sentence, in order: the long text starts with the short one's audio.
    expect(long.subarray(0, short.length).equals(short)).toBe(true);
    // The alias is the same model; voice names are matched regardless of case.
    expect((await speak({ model: 'tts-rt-v2', voice: 'low', text: 'Hi.' })).equals(short)).toBe(true);
    const high = await speak({ model: 'tts-rt-v2', voice: 'High', text: 'Hi.' });
    expect(high.length).toBe(short.length);
    expect(zeroCrossings(high)).toBeGreaterThan(zeroCrossings(short) * 1.1);

    // speed is the model's length scale: 0.7 is 1.3/0.7 times as long as 1.3.
    const slow = await speak({ text: 'Hello world, this is a longer sentence.', speed: 0.7 });
    const fast = await speak({ text: 'Hello world, this is a longer sentence.', speed: 1.3 });
    expect(slow.length / fast.length).toBeCloseTo(1.3 / 0.7, 1);

    // Other formats and rates are converted from the model's 16 kHz.
    const wav = await speak({ audio_format: 'wav', sample_rate: 24000, text: 'Hi.' });
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    const probed = await probeAudio(wav, 'wav', 0);
    expect(probed.sampleRate).toBe(24000);
    expect(probed.seconds).toBeCloseTo(short.length / 2 / RATE, 1);
  }, 60_000);

  it('validates the voice and language against the model before any audio', async () => {
    const unknownVoice = await tts({ ...base, voice: 'Adrian', text: 'Hi.' });
    expect(unknownVoice.status).toBe(404);
    expect(((await unknownVoice.json()) as { error_type: string }).error_type).toBe('voice_not_found');
    const otherLanguage = await tts({ ...base, model: 'tts-rt-v2', language: 'fr', text: 'Bonjour.' });
    expect(otherLanguage.status).toBe(400);
    expect(((await otherLanguage.json()) as { error_message: string }).error_message).toMatch(/language: "fr" is not supported by model tts-rt-v2/);
  });

  it('speaks over /tts-websocket: streamed text, audio frames with timestamps, audio_end, terminated', async () => {
    const c = await openTts(s.url);
    try {
      c.send(startMsg(s.apiKey, 'a', { model: 'tts-rt-v2', voice: 'High', sample_rate: RATE, return_timestamps: true }));
      c.send({ text: 'Hi. Hello world, this', text_end: false, stream_id: 'a' });
      c.send({ text: ' is a longer sentence.', text_end: true, stream_id: 'a' });
      await c.next((f) => f.stream_id === 'a' && f.terminated === true, 30_000);
      const frames = c.frames.filter((f) => f.stream_id === 'a');
      expect(frames.find((f) => f.error_type !== undefined)).toBeUndefined();
      expect(frames.at(-2)).toMatchObject({ audio_end: true });
      const chars = frames.flatMap((f) => (f.timestamps as { characters: string[] } | undefined)?.characters ?? []);
      expect(chars.join('')).toBe('Hi. Hello world, this is a longer sentence.');
      const audio = streamAudio(c.frames, 'a');
      expect(audio.equals(await speak({ voice: 'High', text: 'Hi. Hello world, this is a longer sentence.' }))).toBe(true);
    } finally {
      c.close();
    }
  }, 60_000);

  it('times its words from the audio over POST /tts/with-timestamps: the text, in order, within the audio', async () => {
    const text = 'Hi. Hello world, this is a longer sentence.';
    const res = await s.request('/tts/with-timestamps', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, text }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { audio_base64: string; words: { text: string; start_ms: number; end_ms: number }[] };
    const ms = (Buffer.from(body.audio_base64, 'base64').length / 2 / RATE) * 1000;
    expect(body.words.map((w) => w.text)).toEqual(['Hi', 'Hello', 'world', 'this', 'is', 'a', 'longer', 'sentence']);
    let prev = 0;
    for (const w of body.words) {
      expect(w.start_ms).toBeGreaterThanOrEqual(prev);
      expect(w.end_ms).toBeGreaterThan(w.start_ms);
      prev = w.end_ms;
    }
    expect(prev).toBeLessThanOrEqual(ms);
    // "Hi." is its own segment: "Hello" starts after its audio.
    expect(body.words[1]!.start_ms).toBeGreaterThanOrEqual(Buffer.from(await speak({ text: 'Hi.' })).length / 2 / (RATE / 1000) - 1);
  });
});

describe('a Kitten TTS model in the models directory', () => {
  const KITTEN_RATE = KITTEN_TONE.sampleRate;
  const slot = (KITTEN_RATE * KITTEN_TONE.idMs) / 1000;

  it('is listed with its voices and their gender, and speaks over POST /tts in each voice at its pitch', async () => {
    const { models } = (await (await s.request('/v1/tts-models')).json()) as { models: { id: string; voices: Record<string, unknown>[] }[] };
    const kitten = models.find((m) => m.id === 'tone-kitten-v1');
    expect(kitten?.voices.map((v) => [v.id, v.gender])).toEqual([
      ['expr-voice-2-m', 'male'],
      ['expr-voice-2-f', 'female'],
    ]);
    const female = (await (await s.request('/v1/tts-voices?model=tone-kitten-v1&gender=female')).json()) as { voices: { id: string }[] };
    expect(female.voices.map((v) => v.id)).toEqual(['expr-voice-2-f']);

    const kittenBase = { model: 'tone-kitten-v1', language: 'en', audio_format: 'pcm_s16le', sample_rate: KITTEN_RATE };
    const male = await speak({ ...kittenBase, voice: 'expr-voice-2-m', text: 'Hi.' });
    const high = await speak({ ...kittenBase, voice: 'expr-voice-2-f', text: 'Hi.' });
    const long = await speak({ ...kittenBase, voice: 'expr-voice-2-m', text: 'Hi. Hello world, this is a longer sentence.' });
    expect(male.length).toBeGreaterThan(0);
    for (const pcm of [male, high, long]) expect((pcm.length / 2) % slot).toBe(0);
    expect(high.length).toBe(male.length);
    expect(long.length).toBeGreaterThan(5 * male.length);
    // Each voice at its own pitch: zero crossings a second are twice the tone's frequency.
    const hz = (pcm: Buffer) => zeroCrossings(pcm) / 2 / (pcm.length / 2 / KITTEN_RATE);
    expect(hz(male)).toBeCloseTo(KITTEN_TONE.voiceHz[0], -1);
    expect(hz(high)).toBeCloseTo(KITTEN_TONE.voiceHz[1], -1);
  }, 60_000);
});

describe('SSML on a model users bring (through the translator)', () => {
  /** The longest run of samples under -38 dBFS, in seconds. */
  function longestSilence(pcm: Buffer): number {
    let best = 0;
    let run = 0;
    for (let i = 0; i + 1 < pcm.length; i += 2) {
      run = Math.abs(pcm.readInt16LE(i)) < 400 ? run + 1 : 0;
      best = Math.max(best, run);
    }
    return best / RATE;
  }

  it('a 700 ms break between two words is 650-800 ms of silence, and rate changes the length', async () => {
    const ssml = (text: string) => speak({ text_format: 'ssml', text: `<speak>${text}</speak>` });
    expect(longestSilence(await ssml('Hello world'))).toBeLessThan(0.5);
    const gap = longestSilence(await ssml('Hello <break time="700ms"/> world'));
    expect(gap).toBeGreaterThanOrEqual(0.65);
    expect(gap).toBeLessThanOrEqual(0.8);
    const [slow, fast] = await Promise.all([ssml('<prosody rate="x-slow">Hello world</prosody>'), ssml('<prosody rate="x-fast">Hello world</prosody>')]);
    expect(slow.length).toBeGreaterThan(fast.length * 2);
  });
});
