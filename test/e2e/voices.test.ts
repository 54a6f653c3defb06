// Cloned voices end to end: a real server, real flite/ffmpeg clips, the real job queue and TTS engines.
// Covers every /v1/voices endpoint and error, the per-model status transitions (processing → ready | failed,
// not_computed → processing by recompute, failed is terminal), the clip limits at their boundaries, the
// voice_* errors of TTS over HTTP and WebSocket, and preparation surviving a kill -9.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeToBuffer } from '../../src/audio/decode.js';
import { pcmToFloat, voiceProfile } from '../../src/audio/features.js';
import { createPgDatabase, errorBody, makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { openTts, startMsg, streamAudio } from './tts-helpers.js';

const execFileP = promisify(execFile);
const ESPEAK = 'parlance-tts-espeak-v1';
const FLITE = 'parlance-tts-flite-v1';
const FESTIVAL = 'parlance-tts-festival-v1';
/** The default clip limit (docs/wire-compat.md, "REST conventions": the SDK caps voice clips at 10 MiB). */
const CLIP_LIMIT = 10 * 1024 * 1024;
/** Built-in voice profiles are the same for every server: computed once, shared by the test servers. */
const PROFILE_CACHE = path.join(tmpdir(), 'parlance-test-voice-profiles');
const TEXT = 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. It is easy to tell the depth of a well.';

interface ModelStatus {
  model: string;
  status: string;
  error_type: string | null;
  error_message: string | null;
  base_voice: string | null;
}
interface VoiceRecord {
  id: string;
  name: string;
  filename: string;
  size: number;
  created_at: string;
  models: ModelStatus[];
}

let s: Parlance;
let work: string;
let femaleClip: Buffer;
const env = {
  PARLANCE_TTS_MODELS: ESPEAK,
  PARLANCE_VOICE_PROFILE_CACHE_DIR: PROFILE_CACHE,
  PARLANCE_JOB_LEASE_SECONDS: '2',
};

beforeAll(async () => {
  work = tempDir('parlance-voices-');
  const [server, clip] = await Promise.all([startParlance({ env }), makeSpeech(path.join(work, 'female.wav'), TEXT, { voice: 'slt' })]);
  s = server;
  femaleClip = readFileSync(clip);
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function form(fields: { name?: string; file?: Buffer; filename?: string }): FormData {
  const fd = new FormData();
  if (fields.name !== undefined) fd.append('name', fields.name);
  if (fields.file) fd.append('file', new Blob([new Uint8Array(fields.file)]), fields.filename ?? 'reference.wav');
  return fd;
}

function create(server: Parlance, fields: { name?: string; file?: Buffer; filename?: string }, key?: string): Promise<Response> {
  return server.request('/v1/voices', { method: 'POST', body: form(fields), key });
}

async function createOk(server: Parlance, name: string, file: Buffer, key?: string): Promise<VoiceRecord> {
  const res = await create(server, { name, file }, key);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as VoiceRecord;
}

async function getVoice(server: Parlance, id: string, key?: string): Promise<VoiceRecord> {
  const res = await server.request(`/v1/voices/${id}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as VoiceRecord;
}

const statusOf = (v: VoiceRecord, model: string) => v.models.find((m) => m.model === model);

/** Poll until no model of the voice (among `models`) is processing. */
function settled(server: Parlance, id: string, models = [ESPEAK], timeoutMs = 120_000): Promise<VoiceRecord> {
  return waitFor(
    () => getVoice(server, id),
    (v) => models.every((m) => statusOf(v, m)?.status !== 'processing'),
    timeoutMs,
    250,
  );
}

function speak(server: Parlance, voice: string, model = 'tts-rt-v2', key?: string): Promise<Response> {
  return server.request('/tts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, language: 'en', voice, audio_format: 'wav', text: TEXT }),
    key,
  });
}

async function ttsError(res: Response): Promise<{ error_code: number; error_type: string }> {
  const body = (await res.json()) as { error_code: number; error_type: string };
  expect(body.error_code).toBe(res.status);
  return body;
}

async function profileOf(audio: Buffer) {
  const file = path.join(work, `${randomUUID()}.bin`);
  writeFileSync(file, audio);
  return voiceProfile(pcmToFloat(await decodeToBuffer(file)));
}

const semitones = (a: number, b: number) => Math.abs(12 * Math.log2(a / b));

/** `seconds` of the female clip repeated (speech throughout), as mono 8 kHz 16-bit WAV. */
async function longClip(seconds: number): Promise<Buffer> {
  const out = path.join(work, `long-${seconds}.wav`);
  await execFileP('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-stream_loop',
    '-1',
    '-i',
    path.join(work, 'female.wav'),
    '-t',
    String(seconds),
    '-ar',
    '8000',
    '-ac',
    '1',
    '-f',
    'wav',
    '-y',
    out,
  ]);
  return readFileSync(out);
}

describe('creating, reading, listing, counting and deleting voices', () => {
  let voice: VoiceRecord;

  it('POST /v1/voices returns 201 at once with every model processing, then each model becomes ready', async () => {
    voice = await createOk(s, 'Narrator', femaleClip);
    expect(voice.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(voice.name).toBe('Narrator');
    expect(voice.filename).toBe('reference.wav');
    expect(voice.size).toBe(femaleClip.length);
    expect(Date.parse(voice.created_at)).not.toBeNaN();
    // The catalog model and its aliases (tts-rt-v1, tts-rt-v2) all start processing.
    expect(voice.models.map((m) => m.model).sort()).toEqual([ESPEAK, 'tts-rt-v1', 'tts-rt-v2']);
    for (const m of voice.models) expect(m).toEqual({ model: m.model, status: 'processing', error_type: null, error_message: null, base_voice: null });

    const ready = await settled(s, voice.id);
    for (const m of ready.models) expect(m.status).toBe('ready');
    // A female reference is matched to a female built-in voice.
    const models = (await (await s.request('/v1/tts-models')).json()) as { models: { id: string; voices: { id: string; gender: string }[] }[] };
    const base = statusOf(ready, ESPEAK)!.base_voice!;
    expect(models.models.find((m) => m.id === ESPEAK)!.voices.find((v) => v.id === base)?.gender).toBe('female');
    expect(statusOf(ready, 'tts-rt-v2')!.base_voice).toBe(base);
  }, 180_000);

  it('a second voice with the same name in the project is 409 voice_name_conflict; nothing is stored', async () => {
    const before = (await (await s.request('/v1/voices/count')).json()) as { total: number };
    const res = await create(s, { name: 'Narrator', file: femaleClip });
    expect(res.status).toBe(409);
    expect((await errorBody(res)).error_type).toBe('voice_name_conflict');
    expect(await (await s.request('/v1/voices/count')).json()).toEqual(before);
  });

  it('lists newest first in a `voices` wrapper with cursor paging, and counts', async () => {
    const second = await createOk(s, 'Second', femaleClip);
    const page1 = (await (await s.request('/v1/voices?limit=1')).json()) as { voices: VoiceRecord[]; next_page_cursor: string | null };
    expect(page1.voices.map((v) => v.id)).toEqual([second.id]);
    expect(page1.next_page_cursor).toEqual(expect.any(String));
    const page2 = (await (await s.request(`/v1/voices?limit=1&cursor=${encodeURIComponent(page1.next_page_cursor!)}`)).json()) as typeof page1;
    expect(page2.voices.map((v) => v.id)).toEqual([voice.id]);
    const all = (await (await s.request('/v1/voices')).json()) as typeof page1;
    expect(all.next_page_cursor).toBeNull();
    expect(all.voices.map((v) => v.id)).toContain(second.id);
    const count = (await (await s.request('/v1/voices/count')).json()) as { total: number };
    expect(count.total).toBe(all.voices.length);
    const bad = await s.request('/v1/voices?cursor=garbage');
    expect(bad.status).toBe(400);
    expect((await errorBody(bad)).error_type).toBe('invalid_cursor');
  });

  it('GET and DELETE of an unknown or malformed id are 404 voice_not_found; DELETE is permanent', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await s.request(`/v1/voices/${id}`);
      expect(res.status).toBe(404);
      expect((await errorBody(res)).error_type).toBe('voice_not_found');
      const del = await s.request(`/v1/voices/${id}`, { method: 'DELETE' });
      expect(del.status).toBe(404);
      expect((await errorBody(del)).error_type).toBe('voice_not_found');
    }
    const doomed = await createOk(s, 'Doomed', femaleClip);
    const del = await s.request(`/v1/voices/${doomed.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect((await s.request(`/v1/voices/${doomed.id}`)).status).toBe(404);
    // The name is free again, and the clip is gone from the blob store.
    const again = await createOk(s, 'Doomed', femaleClip);
    expect(again.id).not.toBe(doomed.id);
    const speech = await speak(s, doomed.id);
    expect(speech.status).toBe(404);
    expect((await ttsError(speech)).error_type).toBe('voice_not_found');
  });

  it('another project sees none of these voices, and may use the same name', async () => {
    const project = await s.admin<{ id: string }>('create-project', '--name', 'other');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', project.id)).api_key;
    const res = await s.request(`/v1/voices/${voice.id}`, { key });
    expect(res.status).toBe(404);
    expect((await errorBody(res)).error_type).toBe('voice_not_found');
    expect(await (await s.request('/v1/voices/count', { key })).json()).toEqual({ total: 0 });
    expect(((await (await s.request('/v1/voices', { key })).json()) as { voices: unknown[] }).voices).toEqual([]);
    expect((await s.request(`/v1/voices/${voice.id}`, { method: 'DELETE', key })).status).toBe(404);
    expect(
      (await s.request(`/v1/voices/${voice.id}/recompute`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: '{}' })).status,
    ).toBe(404);
    // Using it for speech from the other project: not found, as if it did not exist.
    const speech = await speak(s, voice.id, 'tts-rt-v2', key);
    expect(speech.status).toBe(404);
    expect((await ttsError(speech)).error_type).toBe('voice_not_found');
    expect((await create(s, { name: 'Narrator', file: femaleClip }, key)).status).toBe(201);
  });

  it('speaks with the cloned voice over HTTP: the output pitch follows the reference speaker', async () => {
    const ref = voiceProfile(pcmToFloat(await decodeToBuffer(path.join(work, 'female.wav'))));
    const res = await speak(s, voice.id);
    expect(res.status).toBe(200);
    const audio = Buffer.from(await res.arrayBuffer());
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
    const out = await profileOf(audio);
    expect(semitones(out.pitchMedianHz, ref.pitchMedianHz)).toBeLessThan(2);
    // Upper-case uuid resolves to the same voice.
    expect((await speak(s, voice.id.toUpperCase())).status).toBe(200);
  });

  it('speaks with the cloned voice in a WebSocket stream next to a built-in voice stream', async () => {
    const ws = await openTts(s.url);
    try {
      ws.send(startMsg(s.apiKey, 'cloned', { voice: voice.id }));
      ws.send(startMsg(s.apiKey, 'builtin'));
      for (const id of ['cloned', 'builtin']) {
        ws.send({ stream_id: id, text: 'Hello from a cloned voice.' });
        ws.send({ stream_id: id, text_end: true });
      }
      await ws.next((f) => f.stream_id === 'cloned' && f.terminated === true, 30_000);
      await ws.next((f) => f.stream_id === 'builtin' && f.terminated === true, 30_000);
      expect(ws.frames.some((f) => f.error_type)).toBe(false);
      expect(streamAudio(ws.frames, 'cloned').length).toBeGreaterThan(16000);
    } finally {
      ws.close();
    }
  });
});

describe('bad creation requests', () => {
  it('refuses a missing, empty or over-long name and a missing file with 400 invalid_request', async () => {
    const cases: [Parameters<typeof create>[1], string][] = [
      [{ file: femaleClip }, 'name'],
      [{ name: '   ', file: femaleClip }, 'name'],
      [{ name: 'x'.repeat(129), file: femaleClip }, 'name'],
      [{ name: 'no file' }, 'file'],
    ];
    for (const [fields, location] of cases) {
      const res = await create(s, fields);
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.error_type).toBe('invalid_request');
      expect(body.validation_errors[0]?.location).toBe(location);
    }
    expect((await create(s, { name: 'y'.repeat(128), file: femaleClip })).status).toBe(201);
  });

  it('refuses a JSON body, and a key without voices permission', async () => {
    const res = await s.request('/v1/voices', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).error_type).toBe('invalid_request');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'tts_rt:write')).api_key;
    const denied = await create(s, { name: 'denied', file: femaleClip }, key);
    expect(denied.status).toBe(403);
    expect((await errorBody(denied)).error_type).toBe('permission_denied');
  });

  it('enforces the clip size limit at its boundary: exactly the limit is accepted, one byte more is 400', async () => {
    const atLimit = Buffer.alloc(CLIP_LIMIT, 7);
    const ok = await create(s, { name: 'at-limit', file: atLimit });
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as VoiceRecord).size).toBe(CLIP_LIMIT);
    const over = await create(s, { name: 'over-limit', file: Buffer.alloc(CLIP_LIMIT + 1, 7) });
    expect(over.status).toBe(400);
    const body = await errorBody(over);
    expect(body.error_type).toBe('invalid_request');
    expect(body.validation_errors[0]).toMatchObject({ location: 'file', error_type: 'file_too_large' });
    expect(((await s.request('/v1/voices?limit=1000').then((r) => r.json())) as { voices: VoiceRecord[] }).voices.some((v) => v.name === 'over-limit')).toBe(
      false,
    );
  });
});

describe('preparation failures', () => {
  it('corrupt, empty and speechless clips fail with voice_invalid_audio; TTS then gives 503 voice_failed; recompute does not recover', async () => {
    const silence = path.join(work, 'silence.wav');
    await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '3', '-y', silence]);
    const clips: [string, Buffer][] = [
      ['corrupt', Buffer.from('this is not audio at all, just some bytes '.repeat(50))],
      ['empty', Buffer.alloc(0)],
      ['silence', readFileSync(silence)],
    ];
    const voices = await Promise.all(clips.map(([name, file]) => createOk(s, name, file)));
    for (const v of voices) {
      const done = await settled(s, v.id);
      const m = statusOf(done, ESPEAK)!;
      expect(m.status).toBe('failed');
      expect(m.error_type).toBe('voice_invalid_audio');
      expect(m.error_message).toEqual(expect.any(String));
      // What failed in words: no ffmpeg heap addresses or server paths (issue 22 D6).
      expect(m.error_message).not.toMatch(/0x[0-9a-f]{4,}|@|\/var\/|\/tmp\//);
      expect(statusOf(done, 'tts-rt-v2')).toMatchObject({ status: 'failed', error_type: 'voice_invalid_audio' });
    }
    const res = await speak(s, voices[0]!.id);
    expect(res.status).toBe(503);
    expect((await ttsError(res)).error_type).toBe('voice_failed');
    const ws = await openTts(s.url);
    try {
      ws.send(startMsg(s.apiKey, 'failed', { voice: voices[1]!.id }));
      expect(await ws.next((f) => f.stream_id === 'failed' && typeof f.error_type === 'string')).toMatchObject({ error_code: 503, error_type: 'voice_failed' });
    } finally {
      ws.close();
    }
    const again = await s.request(`/v1/voices/${voices[0]!.id}/recompute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(again.status).toBe(200);
    expect(statusOf((await again.json()) as VoiceRecord, ESPEAK)!.status).toBe('failed');
  }, 120_000);

  it('a clip of 2 min 1 s fails with voice_audio_too_long (checked while processing, not at upload); 2 min exactly is ready', async () => {
    const [tooLong, exact] = await Promise.all([longClip(121), longClip(120)]);
    expect(tooLong.length).toBeLessThan(CLIP_LIMIT);
    const long = await createOk(s, 'too long', tooLong);
    const ok = await createOk(s, 'two minutes', exact);
    expect(statusOf(long, ESPEAK)!.status).toBe('processing');
    const failed = statusOf(await settled(s, long.id), ESPEAK)!;
    expect(failed).toMatchObject({ status: 'failed', error_type: 'voice_audio_too_long' });
    expect(statusOf(await settled(s, ok.id), ESPEAK)!.status).toBe('ready');
  }, 180_000);

  it('a voice still processing gives 503 voice_not_ready over HTTP and WebSocket', async () => {
    const v = await createOk(s, 'fresh', await longClip(100));
    const res = await speak(s, v.id);
    expect(res.status).toBe(503);
    expect((await ttsError(res)).error_type).toBe('voice_not_ready');
    const ws = await openTts(s.url);
    try {
      ws.send(startMsg(s.apiKey, 'early', { voice: v.id }));
      const err = await ws.next((f) => f.stream_id === 'early' && typeof f.error_type === 'string');
      expect(err).toMatchObject({ error_code: 503, error_type: 'voice_not_ready' });
      // Unknown uuid on the same connection: 404 voice_not_found for that stream only.
      ws.send(startMsg(s.apiKey, 'ghost', { voice: randomUUID() }));
      expect(await ws.next((f) => f.stream_id === 'ghost' && typeof f.error_type === 'string')).toMatchObject({
        error_code: 404,
        error_type: 'voice_not_found',
      });
    } finally {
      ws.close();
    }
    expect(statusOf(await settled(s, v.id), ESPEAK)!.status).toBe('ready');
  }, 180_000);
});

describe('models added later, recompute and restarts', () => {
  it('a model enabled after creation is not_computed (TTS: 409 voice_not_prepared) until recompute prepares it', async () => {
    const dataDir = tempDir('parlance-voices-models-');
    let a: Parlance | undefined = await startParlance({ env, dataDir });
    try {
      const v = await createOk(a, 'Before flite', femaleClip);
      expect(v.models.map((m) => m.model)).not.toContain(FLITE);
      await settled(a, v.id);
      await a.stop();
      a = await startParlance({ env: { ...env, PARLANCE_TTS_MODELS: `${ESPEAK},${FLITE}` }, dataDir });
      const later = await getVoice(a, v.id);
      expect(statusOf(later, ESPEAK)!.status).toBe('ready');
      expect(statusOf(later, FLITE)).toEqual({ model: FLITE, status: 'not_computed', error_type: null, error_message: null, base_voice: null });
      const res = await speak(a, v.id, FLITE);
      expect(res.status).toBe(409);
      expect((await ttsError(res)).error_type).toBe('voice_not_prepared');
      const ws = await openTts(a.url);
      try {
        ws.send(startMsg(a.apiKey, 'np', { voice: v.id, model: FLITE }));
        expect(await ws.next((f) => f.stream_id === 'np' && typeof f.error_type === 'string')).toMatchObject({
          error_code: 409,
          error_type: 'voice_not_prepared',
        });
      } finally {
        ws.close();
      }
      // Recompute for an unknown model: 400; for the new model: not_computed → processing → ready.
      const unknown = await a.request(`/v1/voices/${v.id}/recompute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model":"no-such-model"}',
      });
      expect(unknown.status).toBe(400);
      expect((await errorBody(unknown)).error_type).toBe('model_not_available');
      const rc = await a.request(`/v1/voices/${v.id}/recompute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: FLITE }),
      });
      expect(rc.status).toBe(200);
      const moved = (await rc.json()) as VoiceRecord;
      expect(statusOf(moved, FLITE)!.status).toBe('processing');
      expect(statusOf(moved, ESPEAK)!.status).toBe('ready');
      expect(statusOf(await settled(a, v.id, [FLITE]), FLITE)!.status).toBe('ready');
      expect((await speak(a, v.id, FLITE)).status).toBe(200);
      // A second model enabled later: a bodyless recompute (no model) prepares every not_computed model.
      await a.stop();
      a = await startParlance({ env: { ...env, PARLANCE_TTS_MODELS: `${ESPEAK},${FLITE},${FESTIVAL}` }, dataDir });
      expect(statusOf(await getVoice(a, v.id), FESTIVAL)!.status).toBe('not_computed');
      const all = await a.request(`/v1/voices/${v.id}/recompute`, { method: 'POST' });
      expect(all.status).toBe(200);
      const after = (await all.json()) as VoiceRecord;
      expect(statusOf(after, FESTIVAL)!.status).toBe('processing');
      expect(statusOf(after, FLITE)!.status).toBe('ready');
      const festivalReady = await settled(a, v.id, [FESTIVAL], 180_000);
      expect(statusOf(festivalReady, FESTIVAL)!.status).toBe('ready');
      expect(['Adrian', 'Keith', 'Sarah']).toContain(statusOf(festivalReady, FESTIVAL)!.base_voice);
      // Festival voices speak one language each and the cloned voice's base is an English one: it speaks
      // English there, and another of festival's languages is refused before audio.
      expect((await speak(a, v.id, FESTIVAL)).status).toBe(200);
      const cs = await a.request('/tts', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: FESTIVAL, language: 'cs', voice: v.id, audio_format: 'wav', text: 'Dobrý den.' }),
      });
      expect(cs.status).toBe(400);
      expect((await ttsError(cs)).error_type).toBe('invalid_request');
    } finally {
      await a?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 420_000);

  it('preparation interrupted by kill -9 resumes after restart and finishes', async () => {
    const dataDir = tempDir('parlance-voices-crash-');
    let a: Parlance | undefined = await startParlance({ env, dataDir });
    try {
      const v = await createOk(a, 'Crash', await longClip(60));
      // Let the job start (the clip is measured first), then crash the server.
      await new Promise((r) => setTimeout(r, 700));
      await a.kill9();
      a = await startParlance({ env, dataDir });
      expect(statusOf(await getVoice(a, v.id), ESPEAK)!.status).toBe('processing');
      expect(statusOf(await settled(a, v.id), ESPEAK)!.status).toBe('ready');
      expect((await speak(a, v.id)).status).toBe(200);
    } finally {
      await a?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('on PostgreSQL with the pg-boss job queue', () => {
  it('prepares a voice, refuses a duplicate name (unique index) with 409, and speaks with it', async () => {
    const pgdb = await createPgDatabase();
    const dataDir = tempDir('parlance-voices-pg-');
    let a: Parlance | undefined;
    try {
      a = await startParlance({ env: { ...env, DATABASE_URL: pgdb.url, PARLANCE_JOB_QUEUE: 'pg-boss' }, dataDir });
      const v = await createOk(a, 'Postgres voice', femaleClip);
      const dup = await create(a, { name: 'Postgres voice', file: femaleClip });
      expect(dup.status).toBe(409);
      expect((await errorBody(dup)).error_type).toBe('voice_name_conflict');
      expect(statusOf(await settled(a, v.id), ESPEAK)!.status).toBe('ready');
      expect((await speak(a, v.id)).status).toBe(200);
      expect(await (await a.request('/v1/voices/count')).json()).toEqual({ total: 1 });
    } finally {
      await a?.stop();
      await pgdb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
