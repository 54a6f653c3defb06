// Multichannel transcription (`enable_multichannel`), black-box: a real server on SQLite and on PostgreSQL, real
// ffmpeg and pocketsphinx, and a stereo "call" built at test time from two real mono recordings (Debian's
// pocketsphinx-testdata): the agent on the left channel, the customer on the right, one answering the other. Async
// jobs and real-time sessions (raw PCM and an Ogg Opus container) alike.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import {
  createPgDatabase,
  errorBody,
  type RealtimeFrame,
  settledTranscription,
  startParlance,
  streamRealtime,
  tempDir,
  uploadFile,
  waitFor,
  type Parlance,
} from '../harness.js';
import { testdataClips } from '../real-speech.js';

const work = tempDir('parlance-multichannel-e2e-');
const clips = testdataClips().filter((c) => c.set === 'librivox');
/** The agent (left) speaks first; the customer (right) answers after the agent's last word. */
const AGENT = clips.find((c) => c.file.endsWith('-0880.wav'))!;
const CUSTOMER = clips.find((c) => c.file.endsWith('-0930.wav'))!;
const CUSTOMER_FROM_MS = 3500;
/** Long enough after the customer's last word for a pause to end that utterance too. */
const CALL_MS = 8500;
let call: string;
/** The call as raw 16 kHz stereo s16le, and as Ogg Opus. */
let callPcm: Buffer;
let callOgg: Buffer;

interface Token {
  text: string;
  start_ms: number;
  end_ms: number;
  speaker?: string;
  channel?: number;
}

beforeAll(() => {
  call = path.join(work, 'call.wav');
  execFileSync('ffmpeg', [
    ...['-nostdin', '-v', 'error', '-y', '-i', AGENT.file, '-i', CUSTOMER.file],
    '-filter_complex',
    `[0]apad=whole_dur=${CALL_MS / 1000}[l];[1]adelay=${CUSTOMER_FROM_MS},apad=whole_dur=${CALL_MS / 1000}[r];[l][r]join=inputs=2:channel_layout=stereo`,
    call,
  ]);
  callPcm = execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-i', call, '-f', 's16le', '-ac', '2', '-ar', '16000', '-']);
  callOgg = execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-i', call, '-c:a', 'libopus', '-b:a', '96k', '-f', 'ogg', '-']);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * A client sending a whole call at once gets ahead of a loaded machine's decoders; real-time final words wait for
 * their second pass here (as in realtime.test.ts), so what is checked is each channel's recognition, not the load.
 */
const SERVER_ENV = { PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000' };
/** No forced finalization (which keeps the streaming words) within an utterance of the call. */
const LIVE = { max_non_final_tokens_duration_ms: 6000 };

/** A server on each storage engine the transcriptions are kept in. */
const SERVERS: [name: string, start: () => Promise<{ s: Parlance; stop(): Promise<void> }>][] = [
  [
    'SQLite',
    async () => {
      const s = await startParlance({ env: SERVER_ENV });
      return { s, stop: () => s.stop() };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const db = await createPgDatabase();
      const s = await startParlance({ env: { ...SERVER_ENV, DATABASE_URL: db.url } });
      return {
        s,
        stop: async () => {
          await s.stop();
          await db.drop();
        },
      };
    },
  ],
];

const create = (s: Parlance, body: Record<string, unknown>) =>
  s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const words = (tokens: Token[]) => tokens.map((t) => t.text).join(' ');

/** The final word tokens of a session's frames (no <end>/<fin> marks). */
const finalWords = (frames: RealtimeFrame[]) =>
  frames.flatMap((f) => f.tokens).filter((t) => t.is_final && !t.text.startsWith('<')) as (Token & { is_final: boolean })[];

/** Usage records of the server since the year 2020, by client_reference_id. */
async function usageOf(s: Parlance, ref: string): Promise<{ input_audio_duration_ms: number }> {
  const log = await waitFor(
    async () => {
      const end = encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString());
      const page = (await (await s.request(`/v1/usage-logs?start_time=2020-01-01T00:00:00Z&end_time=${end}`)).json()) as {
        usage_logs: { client_reference_id: string | null; input_audio_duration_ms: number }[];
      };
      return page.usage_logs.find((l) => l.client_reference_id === ref);
    },
    (l) => l !== undefined,
    20_000,
  );
  return log!;
}

/** Each side of the call on its own channel: closer to its own recording's reference than to the other's. */
function expectCallChannels(left: Token[], right: Token[]): void {
  expect(wordErrorRate(AGENT.reference, words(left)).wer).toBeLessThan(0.5);
  expect(wordErrorRate(CUSTOMER.reference, words(right)).wer).toBeLessThan(0.5);
  expect(wordErrorRate(AGENT.reference, words(right)).wer).toBeGreaterThan(0.8);
  // ... at their own times: the customer answers after the agent.
  expect(Math.min(...right.map((t) => t.start_ms))).toBeGreaterThanOrEqual(CUSTOMER_FROM_MS - 100);
  expect(Math.max(...left.map((t) => t.end_ms))).toBeLessThan(CUSTOMER_FROM_MS);
}

describe.each(SERVERS)('multichannel on %s', (_name, start) => {
  let s: Parlance;
  let stop: () => Promise<void>;
  beforeAll(async () => ({ s, stop } = await start()), 120_000);
  afterAll(async () => stop?.());

  it('recognises each channel on its own: channel on every token, speakers within it, usage once per channel, exports', async () => {
    const fileId = await uploadFile(s, call);
    const res = await create(s, {
      model: 'stt-async-v4',
      file_id: fileId,
      enable_multichannel: true,
      enable_speaker_diarization: true,
      client_reference_id: 'stereo-call',
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; enable_multichannel?: boolean };
    expect(created.enable_multichannel).toBe(true);
    const rec = await settledTranscription(s, created.id, 240_000);
    expect(rec).toMatchObject({ status: 'completed', audio_duration_ms: CALL_MS });
    const transcript = (await (await s.request(`/v1/transcriptions/${created.id}/transcript`)).json()) as { text: string; tokens: Token[] };

    const left = transcript.tokens.filter((t) => t.channel === 0);
    const right = transcript.tokens.filter((t) => t.channel === 1);
    expect(left.length + right.length).toBe(transcript.tokens.length);
    expectCallChannels(left, right);
    // Merged in time order; each channel's text is its tokens joined (its first token bare).
    const starts = transcript.tokens.map((t) => t.start_ms);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(right[0]!.text).not.toMatch(/^\s/);
    expect(transcript.text).toBe(`${left.map((t) => t.text).join('')} ${right.map((t) => t.text).join('')}`);
    // Diarized within each channel: one voice on each side is speaker "1" there.
    expect(new Set(left.map((t) => t.speaker))).toEqual(new Set(['1']));
    expect(new Set(right.map((t) => t.speaker))).toEqual(new Set(['1']));

    const srt = await (await s.request(`/v1/transcriptions/${created.id}/transcript?format=srt`)).text();
    expect(srt).toMatch(/Channel 0, Speaker 1: /);
    expect(srt).toMatch(/Channel 1, Speaker 1: /);

    // Usage: the audio once per channel.
    expect((await usageOf(s, 'stereo-call')).input_audio_duration_ms).toBe(2 * CALL_MS);
  }, 300_000);

  it('real time, raw PCM: one engine stream per channel, channel on every token, speakers within it, usage once per channel', async () => {
    const frames = await streamRealtime(s, callPcm, {
      ...LIVE,
      num_channels: 2,
      enable_multichannel: true,
      enable_speaker_diarization: true,
      enable_endpoint_detection: true,
      client_reference_id: 'live-call',
    });
    expect(frames.at(-1)).toMatchObject({ finished: true, total_audio_proc_ms: CALL_MS });
    const tokens = frames.flatMap((f) => f.tokens);
    expect(tokens.filter((t) => t.text !== '<fin>').every((t) => t.channel === 0 || t.channel === 1)).toBe(true);
    const final = finalWords(frames);
    const left = final.filter((t) => t.channel === 0);
    const right = final.filter((t) => t.channel === 1);
    expectCallChannels(left, right);
    // Each channel's text is its tokens joined: its first word bare.
    expect(left[0]!.text).not.toMatch(/^\s/);
    expect(right[0]!.text).not.toMatch(/^\s/);
    expect(new Set(left.map((t) => t.speaker))).toEqual(new Set(['1']));
    expect(new Set(right.map((t) => t.speaker))).toEqual(new Set(['1']));
    // An utterance's <end> carries its channel.
    expect(tokens.filter((t) => t.text === '<end>').map((t) => t.channel)).toEqual(expect.arrayContaining([0, 1]));
    expect((await usageOf(s, 'live-call')).input_audio_duration_ms).toBe(2 * CALL_MS);
  }, 120_000);

  it('real time, a stereo Ogg Opus stream: the channels come from its header', async () => {
    const frames = await streamRealtime(s, callOgg, { ...LIVE, audio_format: 'auto', enable_multichannel: true });
    expect(frames.at(-1)).toMatchObject({ finished: true });
    const final = finalWords(frames);
    expectCallChannels(
      final.filter((t) => t.channel === 0),
      final.filter((t) => t.channel === 1),
    );
  }, 120_000);

  it('real time refuses enable_multichannel on mono audio with invalid_request naming the field', async () => {
    const raw = await streamRealtime(s, callPcm.subarray(0, 3200), { num_channels: 1, enable_multichannel: true });
    expect(raw).toEqual([
      expect.objectContaining({
        error_type: 'invalid_request',
        error_message: 'Invalid request: enable_multichannel: needs audio with two or more channels; num_channels is 1',
      }),
    ]);
    const mono = execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-i', AGENT.file, '-c:a', 'libopus', '-f', 'ogg', '-']);
    const container = await streamRealtime(s, mono, { audio_format: 'ogg', enable_multichannel: true });
    expect(container.at(-1)).toMatchObject({
      error_type: 'invalid_request',
      error_message: 'Invalid request: enable_multichannel needs audio with two or more channels; this audio has one channel.',
    });
  }, 60_000);

  it('fails a job whose audio has one channel with invalid_audio_file naming the reason', async () => {
    const fileId = await uploadFile(s, AGENT.file);
    const res = await create(s, { model: 'stt-async-v4', file_id: fileId, enable_multichannel: true });
    expect(res.status).toBe(201);
    const rec = await settledTranscription(s, ((await res.json()) as { id: string }).id);
    expect(rec.status).toBe('failed');
    expect(rec.error_type).toBe('invalid_audio_file');
    expect(rec.error_message).toMatch(/enable_multichannel needs audio with two or more channels/);
  }, 120_000);

  it('validates enable_multichannel like every other field', async () => {
    const fileId = await uploadFile(s, call);
    const res = await create(s, { model: 'stt-async-v4', file_id: fileId, enable_multichannel: 'yes' });
    expect(res.status).toBe(400);
    const body = await errorBody(res);
    expect(body.error_type).toBe('invalid_request');
    expect(body.validation_errors.map((e) => e.location)).toEqual(['enable_multichannel']);
  });
});
