// POST /v1/audio/speech end to end with the official `openai` npm SDK: a real server and real engines, every
// response_format decoded by ffmpeg, OpenAI voice names and native voice ids, speed, the sse stream format, errors
// raised as the SDK's classes, and that the work is a native TTS request (metered like POST /tts).
import OpenAI, { AuthenticationError, BadRequestError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, waitFor, type Parlance } from '../harness.js';
import { probeAudio } from './tts-helpers.js';

let s: Parlance;
let client: OpenAI;
const TEXT = 'The birch canoe slid on the smooth planks.';

beforeAll(async () => {
  s = await startParlance();
  client = new OpenAI({ apiKey: s.apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 120_000 });
}, 60_000);
afterAll(async () => s?.stop());

type Format = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';
const CONTENT_TYPE: Record<Format, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

async function speak(params: Partial<OpenAI.Audio.SpeechCreateParams>): Promise<{ bytes: Buffer; type: string | null; requestId: string | null }> {
  const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT, ...params });
  return { bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type'), requestId: res.headers.get('x-request-id') };
}

describe('POST /v1/audio/speech', () => {
  it("every response_format decodes to audio of plausible length, with OpenAI's Content-Type (pcm: raw 24 kHz s16le)", async () => {
    const seconds: Record<string, number> = {};
    for (const format of ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const) {
      const { bytes, type } = await speak({ response_format: format });
      expect(type, format).toBe(CONTENT_TYPE[format]);
      if (format === 'pcm') {
        expect(bytes.length % 2).toBe(0);
        seconds[format] = bytes.length / 48000;
        const probed = await probeAudio(bytes, 'pcm_s16le', 24000);
        expect(Math.abs(probed.seconds - seconds[format])).toBeLessThan(0.01);
      } else {
        const a = await probeAudio(bytes, format, 0);
        expect(a.sampleRate, format).toBe(format === 'opus' ? 48000 : 24000);
        seconds[format] = a.seconds;
      }
      expect(seconds[format], format).toBeGreaterThan(1.2);
      expect(seconds[format], format).toBeLessThan(8);
    }
    // Codec padding aside, every format carries the same speech.
    for (const v of Object.values(seconds)) expect(Math.abs(v - seconds.pcm!)).toBeLessThan(0.3);
  }, 120_000);

  it('the default format is mp3; an OpenAI voice name, a native voice id, a voice object and a native model id all work', async () => {
    const mp3 = await speak({});
    expect(mp3.type).toBe('audio/mpeg');
    expect((await probeAudio(mp3.bytes, 'mp3', 0)).codec).toBe('mp3');
    for (const params of [
      { voice: 'nova' },
      { voice: 'Adrian' },
      { voice: { id: 'Maya' } },
      { model: 'gpt-4o-mini-tts', voice: 'onyx' },
      { model: 'parlance-tts-espeak-v1', voice: 'Clara' },
    ]) {
      const { bytes } = await speak({ ...params, response_format: 'wav' } as Partial<OpenAI.Audio.SpeechCreateParams>);
      expect((await probeAudio(bytes, 'wav', 0)).seconds, JSON.stringify(params)).toBeGreaterThan(1.2);
    }
    // A man's and a woman's OpenAI voice are different built-in voices.
    const [onyx, nova] = await Promise.all([speak({ voice: 'onyx', response_format: 'pcm' }), speak({ voice: 'nova', response_format: 'pcm' })]);
    expect(onyx.bytes.equals(nova.bytes)).toBe(false);
  }, 120_000);

  it("speed: faster is shorter, slower is longer (clamped into the engines' range)", async () => {
    const len = async (speed: number) => (await speak({ speed, response_format: 'pcm' })).bytes.length / 48000;
    const [slow, normal, fast] = [await len(0.25), await len(1), await len(4)];
    expect(slow).toBeGreaterThan(normal * 1.1);
    expect(fast).toBeLessThan(normal * 0.9);
  }, 120_000);

  it('stream_format sse: speech.audio.delta events whose base64 audio concatenates to a decodable stream, then speech.audio.done with usage', async () => {
    const res = await client.audio.speech.create({
      model: 'gpt-4o-mini-tts',
      voice: 'coral',
      input: TEXT,
      response_format: 'mp3',
      stream_format: 'sse',
      instructions: 'Speak cheerfully.',
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text())
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map(
        (b) =>
          JSON.parse(b.slice('data: '.length)) as {
            type: string;
            audio?: string;
            usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
          },
      );
    const deltas = events.filter((e) => e.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(events.at(-1)?.type).toBe('speech.audio.done');
    const usage = events.at(-1)!.usage!;
    expect(usage.input_tokens).toBe(TEXT.length);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    const audio = await probeAudio(Buffer.concat(deltas.map((d) => Buffer.from(d.audio!, 'base64'))), 'mp3', 0);
    expect(audio.seconds).toBeGreaterThan(1.2);
    expect(Math.abs(usage.output_tokens / 50 - audio.seconds)).toBeLessThan(0.3);
  }, 60_000);

  it('is metered as a native TTS request: characters in, generated seconds out, under the request id', async () => {
    const { bytes, requestId } = await speak({ response_format: 'pcm' });
    expect(requestId).toBeTruthy();
    const window = `start_time=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&end_time=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`;
    type Log = { request_id: string; model: string; input_text_tokens: number; output_audio_duration_ms: number };
    const logs = await waitFor(
      async () => ((await (await s.request(`/v1/usage-logs?${window}&limit=1000`)).json()) as { usage_logs: Log[] }).usage_logs,
      (l) => l.some((x) => x.request_id === requestId),
      10_000,
    );
    const log = logs.find((x) => x.request_id === requestId)!;
    expect(log).toMatchObject({ model: 'parlance-tts-v1', input_text_tokens: TEXT.length });
    expect(Math.abs(log.output_audio_duration_ms - (bytes.length / 48000) * 1000)).toBeLessThan(30);
  }, 60_000);

  it("errors in OpenAI's body, raised as the SDK's classes", async () => {
    const long = await speak({ input: 'a'.repeat(4097) }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(BadRequestError);
    expect((long as BadRequestError).param).toBe('input');

    const voice = await speak({ voice: 'nobody' }).catch((e: unknown) => e);
    expect(voice).toBeInstanceOf(BadRequestError);
    expect((voice as BadRequestError).param).toBe('voice');
    expect((voice as BadRequestError).message).toMatch(/nobody/);

    const speed = await speak({ speed: 5 }).catch((e: unknown) => e);
    expect(speed).toBeInstanceOf(BadRequestError);
    expect((speed as BadRequestError).param).toBe('speed');

    const model = await speak({ model: 'no-such-model' }).catch((e: unknown) => e);
    expect(model).toBeInstanceOf(BadRequestError);
    expect((model as BadRequestError).param).toBe('model');

    const missing = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy' } as OpenAI.Audio.SpeechCreateParams).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(BadRequestError);
    expect((missing as BadRequestError).param).toBe('input');

    const get = await s.request('/v1/audio/speech');
    expect(get.status).toBe(405);
    expect(((await get.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');

    const bad = new OpenAI({ apiKey: 'sk-not-a-key', baseURL: `${s.url}/v1`, maxRetries: 0 });
    const auth = await bad.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT }).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect((auth as AuthenticationError).code).toBe('invalid_api_key');
  }, 60_000);

  it('is listed in /openapi.json', async () => {
    const doc = (await (await s.request('/openapi.json')).json()) as { paths: Record<string, { post?: { requestBody?: unknown } }> };
    expect(doc.paths['/v1/audio/speech']?.post?.requestBody).toBeDefined();
  });
});
