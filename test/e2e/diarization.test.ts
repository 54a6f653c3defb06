// Speaker diarization end to end: a real server, a two-speaker recording (flite's male kal and female slt voices,
// alternating turns with known boundaries), async transcription, the raw real-time WebSocket and @soniox/node.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type RealtimeToken, SonioxNodeClient } from '@soniox/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildConversation, type Conversation, wavBytes } from '../diarization-corpus.js';
import { startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { twoSpeakerShare } from '../speaker-labels.js';
import type { SttReceivedFrame } from '../../src/wire/stt-frames.js';

const SENTENCES = [
  'The birch canoe slid on the smooth planks.',
  'Glue the sheet to the dark blue background.',
  'These days a chicken leg is a rare dish.',
  'Rice is often served in round bowls.',
];

let s: Parlance;
let work: string;
let conv: Conversation;
let wavFile: string;

interface Tok {
  text: string;
  start_ms?: number;
  end_ms?: number;
  speaker?: string;
  is_final?: boolean;
}

/** Every token labelled, two distinct labels "1" and "2", and each voice's tokens mostly under its own label. */
function expectTwoSpeakers(tokens: Tok[]): void {
  expect(twoSpeakerShare(tokens, conv.turns)).toBeGreaterThanOrEqual(0.8);
}

beforeAll(async () => {
  work = tempDir('parlance-diar-e2e-');
  const voice = (v: string) => ({
    name: v,
    source: 'flite',
    clips: SENTENCES.map((text, i) => {
      const file = path.join(work, `${v}-${i}.wav`);
      execFileSync('flite', ['-voice', v, '-t', text, '-o', file]);
      return file;
    }),
  });
  // Pauses long enough for the real-time endpoint (600 ms) to close each turn's utterance.
  conv = buildConversation([voice('kal'), voice('slt')], { turns: 6, seed: 4, pauseMs: [900, 1200] });
  wavFile = path.join(work, 'two-speakers.wav');
  writeFileSync(wavFile, wavBytes(conv.pcm));
  s = await startParlance();
}, 60_000);

afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function transcribe(diarize: boolean | undefined, extra: Record<string, unknown> = {}): Promise<Tok[]> {
  const form = new FormData();
  form.set('file', new Blob([readFileSync(wavFile)]), 'two-speakers.wav');
  const up = await s.request('/v1/files', { method: 'POST', body: form });
  expect(up.status).toBe(201);
  const fileId = ((await up.json()) as { id: string }).id;
  const body: Record<string, unknown> = { model: 'stt-async-v4', file_id: fileId, ...extra };
  if (diarize !== undefined) body.enable_speaker_diarization = diarize;
  const created = await s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(created.status).toBe(201);
  const rec = (await created.json()) as { id: string; enable_speaker_diarization: boolean };
  expect(rec.enable_speaker_diarization).toBe(diarize === true);
  const done = await waitFor(
    async () => (await (await s.request(`/v1/transcriptions/${rec.id}`)).json()) as { status: string; error_message?: string },
    (r) => r.status !== 'queued' && r.status !== 'processing' && r.status !== 'transcribing' && r.status !== 'downloading',
    300_000,
  );
  expect(done.status, done.error_message).toBe('completed');
  const transcript = (await (await s.request(`/v1/transcriptions/${rec.id}/transcript`)).json()) as { tokens: Tok[] };
  return transcript.tokens;
}

describe('async transcription', () => {
  it('enable_speaker_diarization: every token has a speaker, two speakers at the right times', async () => {
    expectTwoSpeakers(await transcribe(true));
  }, 360_000);

  it('without diarization (off or absent) no token has a speaker field', async () => {
    for (const flag of [false, undefined]) {
      const tokens = await transcribe(flag);
      expect(tokens.length).toBeGreaterThan(10);
      expect(tokens.some((t) => 'speaker' in t)).toBe(false);
    }
  }, 600_000);

  it('num_speakers: exactly that many labels, for one and for the two voices that speak', async () => {
    const labels = (tokens: Tok[]) => new Set(tokens.map((t) => t.speaker));
    expect(labels(await transcribe(true, { num_speakers: 1 }))).toEqual(new Set(['1']));
    const two = await transcribe(true, { num_speakers: 2 });
    expect(labels(two)).toEqual(new Set(['1', '2']));
    expectTwoSpeakers(two);
  }, 600_000);

  it('refuses speaker counts without diarization, out of range, min above max, or both forms at once', async () => {
    for (const [body, location] of [
      [{ num_speakers: 2 }, 'num_speakers'],
      [{ enable_speaker_diarization: true, num_speakers: 33 }, 'num_speakers'],
      [{ enable_speaker_diarization: true, min_speakers: 3, max_speakers: 2 }, 'min_speakers'],
      [{ enable_speaker_diarization: true, num_speakers: 2, max_speakers: 2 }, 'num_speakers'],
    ] as const) {
      const res = await s.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'stt-async-v4', audio_url: 'https://example.com/a.wav', ...body }),
      });
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error_type: string; validation_errors: { location: string }[] };
      expect(err.error_type).toBe('invalid_request');
      expect(err.validation_errors.map((v) => v.location)).toContain(location);
    }
  });

  it('/v1/models says every model supports diarization', async () => {
    const models = ((await (await s.request('/v1/models')).json()) as { models: { supports_speaker_diarization: boolean }[] }).models;
    expect(models.length).toBeGreaterThan(0);
    expect(models.every((m) => m.supports_speaker_diarization)).toBe(true);
  });
});

/** Stream the conversation over the raw WebSocket (fast: 100 ms of audio every 20 ms) and collect every token. */
async function streamRaw(extra: Record<string, unknown>): Promise<Tok[]> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const tokens: Tok[] = [];
  let errorFrame: unknown;
  const finished = new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as SttReceivedFrame;
      if (f.error_code !== undefined) errorFrame = f;
      tokens.push(...f.tokens);
      if (f.finished || f.error_code !== undefined) resolve();
    });
    ws.on('close', () => resolve());
  });
  await new Promise<void>((r, j) => ws.once('open', () => r()).once('error', j));
  ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1, ...extra }));
  const pcm = Buffer.from(conv.pcm.buffer, conv.pcm.byteOffset, conv.pcm.byteLength);
  for (let i = 0; i < pcm.length; i += 3200) {
    ws.send(pcm.subarray(i, i + 3200));
    await new Promise((r) => setTimeout(r, 20));
  }
  ws.send('');
  await finished;
  ws.close();
  expect(errorFrame).toBeUndefined();
  return tokens.filter((t) => !t.text.startsWith('<'));
}

describe('real-time transcription', () => {
  it('raw WebSocket with enable_speaker_diarization: final tokens carry the speaker, two speakers at the right times', async () => {
    const tokens = await streamRaw({ enable_speaker_diarization: true });
    expectTwoSpeakers(tokens.filter((t) => t.is_final));
    // Non-final tokens carry a provisional speaker too.
    const partial = tokens.filter((t) => !t.is_final);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.every((t) => typeof t.speaker === 'string')).toBe(true);
  }, 60_000);

  it('max_speakers: a live stream never gives more labels than asked for', async () => {
    const tokens = await streamRaw({ enable_speaker_diarization: true, max_speakers: 1 });
    expect(tokens.length).toBeGreaterThan(10);
    expect(new Set(tokens.filter((t) => t.is_final).map((t) => t.speaker))).toEqual(new Set(['1']));
  }, 180_000);

  it('raw WebSocket without diarization: no speaker field', async () => {
    const tokens = await streamRaw({});
    expect(tokens.length).toBeGreaterThan(10);
    expect(tokens.some((t) => 'speaker' in t)).toBe(false);
  }, 60_000);

  it('@soniox/node with enable_speaker_diarization: RealtimeToken.speaker on every final token', async () => {
    (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
    const client = new SonioxNodeClient({
      api_key: s.apiKey,
      base_url: s.url,
      realtime: { ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket` },
    });
    const session = client.realtime.stt({
      model: 'stt-rt-v4',
      audio_format: 'pcm_s16le',
      sample_rate: 16000,
      num_channels: 1,
      enable_speaker_diarization: true,
    });
    const tokens: RealtimeToken[] = [];
    const errors: Error[] = [];
    session.on('result', (r) => tokens.push(...r.tokens));
    session.on('error', (e) => errors.push(e));
    await session.connect();
    const pcm = Buffer.from(conv.pcm.buffer, conv.pcm.byteOffset, conv.pcm.byteLength);
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let i = 0; i < pcm.length; i += 3200) yield pcm.subarray(i, i + 3200);
    }
    await session.sendStream(chunks(), { pace_ms: 20, finish: true });
    expect(errors).toEqual([]);
    expectTwoSpeakers(tokens.filter((t) => t.is_final));
  }, 60_000);
});
