// The OpenAI-compatible audio surface end to end with the official `openai` npm SDK: a real server, flite speech and
// pocketsphinx, every response format, both timestamp granularities (bracketed and repeated fields), streaming,
// Open WebUI's discovery calls, errors in OpenAI's body raised as the SDK's classes, and that the work is a native
// async transcription (listed, metered under the key's project, its upload removed afterwards).
import { createReadStream, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import OpenAI, { AuthenticationError, BadRequestError, NotFoundError } from 'openai';
import type { TranscriptionDiarized } from 'openai/resources/audio/transcriptions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { twoSpeakerWav } from './openai-helpers.js';

const work = tempDir('parlance-openai-e2e-');
let s: Parlance;
let client: OpenAI;
let speech: string;
let conversation: string;

beforeAll(async () => {
  speech = await makeSpeech(path.join(work, 'speech.wav'), 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.', {
    padSeconds: 1,
  });
  conversation = twoSpeakerWav(work);
  s = await startParlance();
  client = new OpenAI({ apiKey: s.apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 120_000 });
}, 60_000);
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

const file = () => createReadStream(speech);
const SAID = /dark blue background/i;

async function filesTotal(): Promise<number> {
  return ((await (await s.request('/v1/files/count')).json()) as { total: number }).total;
}

describe('POST /v1/audio/transcriptions', () => {
  it("json with each OpenAI model name: the text, as a native transcription of the key's project, metered; the upload is removed", async () => {
    const ids: string[] = [];
    for (const model of ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe']) {
      const { data, response } = await client.audio.transcriptions
        .create({ file: file(), model, temperature: 0.2, prompt: 'birch canoe, planks' })
        .withResponse();
      expect(data.text, model).toMatch(SAID);
      expect(data.usage).toEqual({ type: 'duration', seconds: 6 });
      ids.push(response.headers.get('x-parlance-transcription-id')!);
    }
    const { transcriptions } = (await (await s.request('/v1/transcriptions')).json()) as {
      transcriptions: { id: string; model: string; status: string; context: unknown }[];
    };
    expect(transcriptions.map((r) => [r.id, r.model, r.status, r.context]).sort()).toEqual(
      [
        [ids[0], 'whisper-1', 'completed', 'birch canoe, planks'],
        [ids[1], 'gpt-4o-transcribe', 'completed', 'birch canoe, planks'],
        [ids[2], 'gpt-4o-mini-transcribe', 'completed', 'birch canoe, planks'],
      ].sort(),
    );
    expect(await filesTotal()).toBe(0);
    const window = `start_time=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&end_time=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`;
    const { usage_logs } = (await (await s.request(`/v1/usage-logs?${window}`)).json()) as { usage_logs: { uuid: string; model: string }[] };
    for (const id of ids) expect(usage_logs).toContainEqual(expect.objectContaining({ uuid: id, model: 'parlance-async-en-v1' }));
  }, 180_000);

  it('text, srt and vtt come back as text built from the same segments as verbose_json', async () => {
    const text = await client.audio.transcriptions.create({ file: file(), model: 'whisper-1', response_format: 'text' });
    expect(text).toMatch(SAID);
    expect(text.endsWith('\n')).toBe(true);
    const verbose = await client.audio.transcriptions.create({ file: file(), model: 'whisper-1', response_format: 'verbose_json' });
    const segments = verbose.segments!;
    const srt = await client.audio.transcriptions.create({ file: file(), model: 'whisper-1', response_format: 'srt' });
    const cues = srt
      .trim()
      .split(/\n\n/)
      .map((c) => c.split('\n'));
    expect(cues.length).toBe(segments.length);
    const clock = (t: string) => {
      const [h, m, rest] = t.split(':');
      return Number(h) * 3600 + Number(m) * 60 + Number(rest!.replace(',', '.'));
    };
    cues.forEach(([n, times, line], i) => {
      expect(n).toBe(String(i + 1));
      const [from, to] = times!.split(' --> ');
      expect(clock(from!)).toBeCloseTo(segments[i]!.start, 3);
      expect(clock(to!)).toBeCloseTo(segments[i]!.end, 3);
      expect(line).toBe(segments[i]!.text.trim());
    });
    const vtt = await client.audio.transcriptions.create({ file: file(), model: 'whisper-1', response_format: 'vtt' });
    expect(vtt.startsWith('WEBVTT\n\n')).toBe(true);
    expect(vtt).toContain(`${srt.split('\n')[1]!.replace(/,/g, '.')}\n`);
  }, 120_000);

  it("verbose_json: language, duration, segments in OpenAI's shape and real word times (bracketed granularities)", async () => {
    const v = await client.audio.transcriptions.create({
      file: file(),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(v.language).toBe('english');
    expect(v.duration).toBeGreaterThan(5);
    expect(v.duration).toBeLessThan(8);
    expect(v.text).toMatch(SAID);
    expect(v.segments!.length).toBeGreaterThan(0);
    for (const [i, seg] of v.segments!.entries()) {
      expect(Object.keys(seg).sort()).toEqual([
        'avg_logprob',
        'compression_ratio',
        'end',
        'id',
        'no_speech_prob',
        'seek',
        'start',
        'temperature',
        'text',
        'tokens',
      ]);
      expect(seg).toMatchObject({ id: i, tokens: [], temperature: 0 });
      // Fluent speech: little of a segment is not speech (openai-no-speech.test.ts checks the values).
      expect(seg.no_speech_prob).toBeGreaterThanOrEqual(0);
      expect(seg.no_speech_prob).toBeLessThan(0.5);
      expect(seg.end).toBeGreaterThan(seg.start);
      expect(seg.avg_logprob).toBeLessThanOrEqual(0);
    }
    const words = v.words!;
    expect(words.length).toBeGreaterThanOrEqual(10);
    expect(words.map((w) => w.word).join(' ')).toMatch(/dark blue background/i);
    let last = 0;
    for (const w of words) {
      expect(w.start).toBeGreaterThanOrEqual(last);
      expect(w.end).toBeGreaterThan(w.start);
      expect(w.end).toBeLessThanOrEqual(v.duration);
      last = w.start;
    }
    expect(words[0]!.start).toBeGreaterThanOrEqual(v.segments![0]!.start);
    expect(words.at(-1)!.end).toBeLessThanOrEqual(v.segments!.at(-1)!.end);
  }, 60_000);

  it('the repeated (unbracketed) form of timestamp_granularities, and segment-only by default', async () => {
    const send = async (granularities: string[]) => {
      const form = new FormData();
      form.set('file', new Blob([readFileSync(speech)]), 'speech.wav');
      form.set('model', 'whisper-1');
      form.set('response_format', 'verbose_json');
      for (const g of granularities) form.append('timestamp_granularities', g);
      const res = await s.request('/v1/audio/transcriptions', { method: 'POST', body: form });
      expect(res.status).toBe(200);
      return (await res.json()) as { words?: unknown[]; segments?: unknown[] };
    };
    const both = await send(['word', 'segment']);
    expect(both.words?.length).toBeGreaterThan(5);
    expect(both.segments?.length).toBeGreaterThan(0);
    const wordsOnly = await send(['word']);
    expect(wordsOnly.words?.length).toBeGreaterThan(5);
    expect(wordsOnly.segments).toBeUndefined();
    const plain = await send([]);
    expect(plain.words).toBeUndefined();
    expect(plain.segments?.length).toBeGreaterThan(0);
  }, 90_000);

  it("stream=true through the SDK's streaming API: text deltas, then done with the whole text", async () => {
    const stream = await client.audio.transcriptions.create({ file: file(), model: 'gpt-4o-transcribe', stream: true });
    const deltas: string[] = [];
    let done: string | undefined;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas.push(event.delta);
      else if (event.type === 'transcript.text.done') done = event.text;
    }
    expect(deltas.length).toBeGreaterThan(5);
    expect(done).toMatch(SAID);
    expect(deltas.join('').trim()).toBe(done);
  }, 60_000);

  it('diarized_json on a two-speaker recording: segments labelled A and B; streamed, segment events after their deltas', async () => {
    const d = (await client.audio.transcriptions.create({
      file: createReadStream(conversation),
      model: 'gpt-4o-transcribe',
      response_format: 'diarized_json',
    })) as unknown as TranscriptionDiarized;
    expect(d.task).toBe('transcribe');
    expect(d.text).toMatch(SAID);
    expect(new Set(d.segments.map((seg) => seg.speaker))).toEqual(new Set(['A', 'B']));
    expect(d.segments[0]!.speaker).toBe('A');
    for (const seg of d.segments) {
      expect(seg).toMatchObject({ type: 'transcript.text.segment', id: expect.stringMatching(/^seg_\d+$/) });
      expect(seg.end).toBeGreaterThan(seg.start);
      expect(seg.end).toBeLessThanOrEqual(d.duration);
    }
    const stream = await client.audio.transcriptions.create({
      file: createReadStream(conversation),
      model: 'gpt-4o-transcribe',
      response_format: 'diarized_json' as never,
      stream: true,
    });
    const segments: string[] = [];
    let deltas = 0;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas++;
      if (event.type === 'transcript.text.segment') segments.push(event.speaker);
    }
    expect(deltas).toBeGreaterThan(segments.length);
    expect(segments).toEqual(d.segments.map((seg) => seg.speaker));
  }, 120_000);

  it("logprobs on request (include[]), from the tokens' confidences", async () => {
    const t = await client.audio.transcriptions.create({ file: file(), model: 'gpt-4o-transcribe', include: ['logprobs'] });
    expect(t.logprobs!.length).toBeGreaterThan(5);
    expect(
      t
        .logprobs!.map((l) => l.token)
        .join('')
        .trim(),
    ).toBe(t.text);
    expect(t.logprobs!.every((l) => l.logprob! <= 0 && Array.isArray(l.bytes))).toBe(true);
  }, 60_000);
});

describe("errors in OpenAI's body, raised as the SDK's classes", () => {
  it('a bad key: AuthenticationError (401)', async () => {
    const bad = new OpenAI({ apiKey: 'prl_not-a-key', baseURL: `${s.url}/v1`, maxRetries: 0 });
    const err = await bad.audio.transcriptions.create({ file: file(), model: 'whisper-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    const e = err as AuthenticationError;
    expect(e.status).toBe(401);
    expect(Object.keys(e.error as object).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(e.code).toBe('invalid_api_key');
    expect(e.requestID).toMatch(/^req_/);
  });

  it('no file: BadRequestError naming param file; an unknown model: param model; a bad field: named', async () => {
    const noFile = await client.audio.transcriptions.create({ model: 'whisper-1' } as never).catch((e: unknown) => e);
    expect(noFile).toBeInstanceOf(BadRequestError);
    expect((noFile as BadRequestError).param).toBe('file');
    const unknown = await client.audio.transcriptions.create({ file: file(), model: 'whisper-9' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect(unknown).toMatchObject({ param: 'model', code: 'model_not_found', type: 'invalid_request_error' });
    const format = await client.audio.transcriptions.create({ file: file(), model: 'whisper-1', response_format: 'xml' as never }).catch((e: unknown) => e);
    expect(format).toMatchObject({ status: 400, param: 'response_format' });
    expect((format as BadRequestError).message).toMatch(/json, text, srt, verbose_json, vtt, diarized_json/);
    // Nothing was kept for refused requests.
    expect(await filesTotal()).toBe(0);
  });

  it('an unknown path under /v1/audio: NotFoundError; a wrong method: 405 with Allow', async () => {
    await expect(client.get('/audio/nothing')).rejects.toBeInstanceOf(NotFoundError);
    const res = await s.request('/v1/audio/transcriptions');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });
});

describe('a client that leaves', () => {
  it('stops waiting: its job does not stay waiting and its upload is removed', async () => {
    const count = async () => ((await (await s.request('/v1/transcriptions/count')).json()) as { total: number }).total;
    const before = await count();
    const ac = new AbortController();
    const pending = client.audio.transcriptions.create({ file: file(), model: 'whisper-1' }, { signal: ac.signal }).catch((e: unknown) => e);
    await waitFor(count, (n) => n > before, 30_000, 10);
    ac.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitFor(filesTotal, (n) => n === 0, 30_000);
    // Deleted if it had not started transcribing, else finished: none is left queued.
    const states = await waitFor(
      async () => ((await (await s.request('/v1/transcriptions')).json()) as { transcriptions: { status: string }[] }).transcriptions.map((t) => t.status),
      (st) => st.every((x) => x === 'completed'),
      60_000,
    );
    expect(states.length).toBeGreaterThanOrEqual(before);
  }, 90_000);
});

describe('discovery as Open WebUI calls it', () => {
  it('GET /v1/audio/models lists transcription and speech model ids, the OpenAI aliases included', async () => {
    const res = await s.request('/v1/audio/models');
    expect(res.status).toBe(200);
    const { models } = (await res.json()) as { models: { id: string; type: string }[] };
    expect(models).toEqual(
      expect.arrayContaining([
        { id: 'whisper-1', type: 'stt' },
        { id: 'parlance-async-en-v1', type: 'stt' },
      ]),
    );
    expect(models.some((m) => m.type === 'tts')).toBe(true);
    expect(models.some((m) => m.id === 'parlance-rt-en-v1')).toBe(false);
  });

  it('GET /v1/audio/voices lists {id, name} of the default TTS model, or of ?model=', async () => {
    const { voices } = (await (await s.request('/v1/audio/voices')).json()) as { voices: { id: string; name: string }[] };
    expect(voices.length).toBeGreaterThan(0);
    expect(voices.every((v) => typeof v.id === 'string' && v.name.startsWith(v.id))).toBe(true);
    const tts = (await (await s.request('/v1/tts-models')).json()) as { models: { id: string; voices: { id: string }[] }[] };
    const model = tts.models[0]!;
    const byModel = (await (await s.request(`/v1/audio/voices?model=${model.id}`)).json()) as { voices: { id: string }[] };
    expect(byModel.voices.map((v) => v.id)).toEqual(model.voices.map((v) => v.id));
    const unknown = await s.request('/v1/audio/voices?model=nope');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe('model');
  });

  it('/openapi.json documents the audio endpoints and their multipart fields', async () => {
    const doc = (await (await s.request('/openapi.json', { key: null })).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    for (const p of ['/v1/audio/transcriptions', '/v1/audio/translations', '/v1/audio/models', '/v1/audio/voices']) expect(doc.paths, p).toHaveProperty(p);
    const body = JSON.stringify(doc.paths['/v1/audio/transcriptions']!.post!.requestBody);
    for (const field of [
      'multipart/form-data',
      'timestamp_granularities',
      'diarized_json',
      'binary',
      'keywords',
      'known_speaker_names',
      'known_speaker_references',
    ])
      expect(body).toContain(field);
  });
});
