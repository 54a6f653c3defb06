// A speaker-embedding model from the models directory, end to end: a tiny sherpa-onnx model built at test time
// (test/fixtures/sherpa-models.ts: the embedding is the average spectrum, which tells flite's male kal from its
// female slt) makes async transcriptions' speakers and chooses cloned voices' base voices; without it the BIC
// diarizer does, as before; a model sherpa-onnx cannot use fails the diarized jobs with internal_error while the
// server goes on. Enrolled speakers' profiles and their recognition use the model's embeddings (synthetic flite voices:
// a functional test of the path, not a measure of accuracy).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConversation, type Conversation, wavBytes } from '../diarization-corpus.js';
import { writeEmbeddingModelWithoutFramework, writeSpectrumEmbeddingModel } from '../fixtures/sherpa-models.js';
import { logLines, makeSpeech, type Parlance, startParlance, streamRealtime, tempDir, uploadFile, waitFor } from '../harness.js';
import { twoSpeakerShare } from '../speaker-labels.js';

const FLITE = 'parlance-tts-flite-v1';
const SENTENCES = [
  'The birch canoe slid on the smooth planks.',
  'Glue the sheet to the dark blue background.',
  'These days a chicken leg is a rare dish.',
  'Rice is often served in round bowls.',
];

interface Tok {
  text: string;
  start_ms: number;
  end_ms: number;
  speaker?: string;
  is_final?: boolean;
}

let work: string;
let conv: Conversation;
let wavFile: string;

beforeAll(() => {
  work = tempDir('parlance-diar-emb-');
  const voice = (v: string) => ({
    name: v,
    source: 'flite',
    clips: SENTENCES.map((text, i) => {
      const file = path.join(work, `${v}-${i}.wav`);
      execFileSync('flite', ['-voice', v, '-t', text, '-o', file]);
      return file;
    }),
  });
  conv = buildConversation([voice('kal'), voice('slt')], { turns: 6, seed: 4, pauseMs: [900, 1200] });
  wavFile = path.join(work, 'two-speakers.wav');
  writeFileSync(wavFile, wavBytes(conv.pcm));
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A data directory whose models directory holds one speaker-embedding model folder written by `write`. */
function dataDirWith(name: string, write: (dir: string) => void): string {
  const dataDir = path.join(work, `data-${name}`);
  const dir = path.join(dataDir, 'models', name);
  mkdirSync(dir, { recursive: true });
  write(dir);
  const manifest = {
    id: `${name}-v1`,
    name: 'Test speaker embeddings',
    family: 'speaker-embedding',
    type: 'embedding',
    files: { model: 'model.onnx' },
    languages: ['en'],
  };
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
  return dataDir;
}

async function transcribe(s: Parlance, diarize: boolean, speakers?: string[]) {
  const fileId = await uploadFile(s, wavFile);
  const body = { model: 'stt-async-v4', file_id: fileId, enable_speaker_diarization: diarize, ...(speakers ? { speakers } : {}) };
  const created = await s.request('/v1/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const job = await waitFor(
    async () => (await (await s.request(`/v1/transcriptions/${id}`)).json()) as { status: string; error_type: string | null; error_message: string | null },
    (r) => r.status === 'completed' || r.status === 'failed',
    120_000,
    200,
  );
  const tokens = job.status === 'completed' ? ((await (await s.request(`/v1/transcriptions/${id}/transcript`)).json()) as { tokens: Tok[] }).tokens : [];
  return { job, tokens };
}

describe('with a speaker-embedding model installed', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({
      dataDir: dataDirWith('spectrum', (d) => writeSpectrumEmbeddingModel(d)),
      env: { PARLANCE_LOG_LEVEL: 'info', PARLANCE_TTS_MODELS: FLITE },
    });
  }, 60_000);
  afterAll(async () => s?.stop());

  it('async transcription with enable_speaker_diarization: two speakers at the right times, from the embeddings', async () => {
    const { job, tokens } = await transcribe(s, true);
    expect(job.status, job.error_message ?? '').toBe('completed');
    expect(twoSpeakerShare(tokens, conv.turns)).toBeGreaterThanOrEqual(0.9);
    expect(logLines(s).find((l) => l.msg === 'speaker diarization of files with speaker embeddings')).toMatchObject({ model: 'spectrum-v1' });
    // Not an STT model: the catalog does not offer it.
    const { models } = (await (await s.request('/v1/models')).json()) as { models: { id: string }[] };
    expect(models.some((m) => m.id === 'spectrum-v1')).toBe(false);
  }, 180_000);

  it('a cloned voice gets the built-in voice whose embedding is the most similar as its base', async () => {
    // flite's slt and rms, saying what the built-in voices do not say for their embeddings.
    for (const [engineVoice, base] of [
      ['slt', 'Maya'],
      ['rms', 'Adrian'],
    ] as const) {
      const clip = await makeSpeech(
        path.join(work, `clone-${engineVoice}.wav`),
        'Four hours of steady work faced us. A large size in stockings is hard to sell.',
        { voice: engineVoice },
      );
      const fd = new FormData();
      fd.append('name', `Like ${engineVoice}`);
      fd.append('file', new Blob([new Uint8Array(readFileSync(clip))]), 'reference.wav');
      const created = await s.request('/v1/voices', { method: 'POST', body: fd });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      type Voice = { models: { model: string; status: string; base_voice: string | null; error_message: string | null }[] };
      const voice = await waitFor(
        async () => (await (await s.request(`/v1/voices/${id}`)).json()) as Voice,
        (v) => v.models.every((m) => m.status !== 'processing'),
        120_000,
        250,
      );
      const flite = voice.models.find((m) => m.model === FLITE)!;
      expect(flite.status, flite.error_message ?? '').toBe('ready');
      expect(flite.base_voice).toBe(base);
      const ready = logLines(s).find((l) => l.msg === 'cloned voice ready' && l.voice_id === id && l.model === FLITE);
      expect(ready?.similarity).toBeGreaterThan(0.8);
    }
  }, 240_000);

  it('enrolled speakers: profiles from the embeddings; a transcription names the enrolled voice, the other keeps a number', async () => {
    // Enrolment speech: sentences the conversation does not use, over 10 s per voice.
    const enrolText = [
      'Four hours of steady work faced us.',
      'A large size in stockings is hard to sell.',
      'The boy was there when the sun rose.',
      'A rod is used to catch pink salmon.',
      'The source of the huge river is the clear spring.',
      'Kick the ball straight and follow through.',
      'Help the woman get back to her feet.',
    ].join(' ');
    const enrol = async (voice: string) => {
      const created = await s.request('/v1/speakers', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: voice }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const fd = new FormData();
      fd.append('file', new Blob([new Uint8Array(readFileSync(await makeSpeech(path.join(work, `enrol-${voice}.wav`), enrolText, { voice })))]), 'enrol.wav');
      expect((await s.request(`/v1/speakers/${id}/audio`, { method: 'POST', body: fd })).status).toBe(201);
      const ready = await waitFor(
        async () => (await (await s.request(`/v1/speakers/${id}`)).json()) as { status: string; error_message: string | null },
        (r) => r.status !== 'processing',
        120_000,
        250,
      );
      expect(ready.status, ready.error_message ?? '').toBe('ready');
      expect(logLines(s).find((l) => l.msg === 'speaker profile ready' && l.speaker_id === id)).toMatchObject({ embedding: 'spectrum-v1' });
      return id;
    };
    const kal = await enrol('kal');
    const slt = await enrol('slt');
    const byVoice = (tokens: Tok[]) => {
      const out = new Map<string, string[]>();
      for (const t of tokens) {
        const mid = (t.start_ms + t.end_ms) / 2;
        const turn = conv.turns.find((r) => r.startMs - 200 <= mid && mid <= r.endMs + 200);
        if (turn) out.set(turn.speaker, [...(out.get(turn.speaker) ?? []), t.speaker ?? '']);
      }
      return out;
    };
    const shareOf = (labels: string[] | undefined, ok: (l: string) => boolean) => (labels ?? []).filter(ok).length / Math.max(1, labels?.length ?? 0);
    // Both enrolled: each voice carries its own name.
    const both = byVoice((await transcribe(s, true, [kal, slt])).tokens);
    expect(
      shareOf(both.get('kal'), (l) => l === 'kal'),
      JSON.stringify([...both]),
    ).toBeGreaterThanOrEqual(0.8);
    expect(
      shareOf(both.get('slt'), (l) => l === 'slt'),
      JSON.stringify([...both]),
    ).toBeGreaterThanOrEqual(0.8);
    // Only slt enrolled: kal is not named (neither as slt nor otherwise).
    const one = byVoice((await transcribe(s, true, [slt])).tokens);
    expect(
      shareOf(one.get('kal'), (l) => /^\d+$/.test(l)),
      JSON.stringify([...one]),
    ).toBeGreaterThanOrEqual(0.8);
    expect(
      shareOf(one.get('slt'), (l) => l === 'slt'),
      JSON.stringify([...one]),
    ).toBeGreaterThanOrEqual(0.8);
  }, 400_000);

  it('real-time diarization goes on with the online clusterer: every final token has a speaker', async () => {
    const frames = await streamRealtime(s, Buffer.from(conv.pcm.buffer, conv.pcm.byteOffset, conv.pcm.byteLength), { enable_speaker_diarization: true });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    const finals = frames.flatMap((f) => f.tokens).filter((t) => t.is_final && !t.text.startsWith('<'));
    expect(finals.length).toBeGreaterThan(10);
    expect(finals.every((t) => typeof t.speaker === 'string')).toBe(true);
  }, 90_000);
});

describe('without one', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_LOG_LEVEL: 'info' } });
  }, 60_000);
  afterAll(async () => s?.stop());

  it('the same transcription is diarized by BIC, as before', async () => {
    const { job, tokens } = await transcribe(s, true);
    expect(job.status, job.error_message ?? '').toBe('completed');
    expect(twoSpeakerShare(tokens, conv.turns)).toBeGreaterThanOrEqual(0.8);
    expect(logLines(s).some((l) => l.msg === 'speaker diarization of files with speaker embeddings')).toBe(false);
  }, 180_000);
});

describe('with a speaker-embedding model sherpa-onnx cannot use', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ dataDir: dataDirWith('broken', (d) => writeEmbeddingModelWithoutFramework(d)) });
  }, 60_000);
  afterAll(async () => s?.stop());

  it('fails diarized jobs with internal_error and the cause in the log; other jobs and the server go on', async () => {
    const { job } = await transcribe(s, true);
    expect(job).toMatchObject({ status: 'failed', error_type: 'internal_error' });
    expect(job.error_message).not.toMatch(/0x[0-9a-f]{6,}|\/tmp\/|sherpa/);
    expect(s.stderr()).toMatch(/speaker embedding model broken-v1 .*could not be loaded by sherpa-onnx \(SIGSEGV\): No model_type in the metadata/);
    expect((await s.request('/health', { key: null })).status).toBe(200);
    const plain = await transcribe(s, false);
    expect(plain.job.status).toBe('completed');
    expect(plain.tokens.length).toBeGreaterThan(10);
  }, 240_000);
});
