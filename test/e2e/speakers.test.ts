// Enrolled speakers end to end: a real server, real recordings of different people (Debian's Asterisk prompts,
// test/diarization-corpus.ts), the real job queue, ffmpeg and diarizer. Covers every /v1/speakers endpoint and error,
// profile states (no_samples → processing → ready | failed with speaker_audio_too_short / speaker_invalid_audio),
// samples from a part or an uploaded file, metering, the caps and the sample size limit at their boundaries, deletion
// removing the audio, and recognition: async transcriptions and real-time sessions naming enrolled voices while a voice
// that was not enrolled keeps a number.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConversation, type Conversation, type CorpusSpeaker, decodeFile, realSpeakers, trimToSpeech, wavBytes } from '../diarization-corpus.js';
import { errorBody, type Parlance, startParlance, streamRealtime, tempDir, uploadFile, waitFor } from '../harness.js';

interface Speaker {
  id: string;
  name: string;
  metadata: Record<string, unknown> | null;
  status: string;
  error_type: string | null;
  error_message: string | null;
  num_samples: number;
  speech_ms: number | null;
}
interface Sample {
  id: string;
  speaker_id: string;
  filename: string;
  size: number;
  speech_ms: number | null;
}
interface Tok {
  text: string;
  start_ms: number;
  end_ms: number;
  speaker?: string;
  is_final?: boolean;
}

const json = { 'content-type': 'application/json' };
/** The caps server's limits. */
const MAX_SPEAKERS = 2;
const MAX_SAMPLES = 3;
const MAX_BYTES = 100_000;

let s: Parlance;
let capped: Parlance;
let work: string;
let pools: Map<string, CorpusSpeaker>;
/** Enrolment audio (clips from the end of each speaker's list) and the test conversation (clips from the rest). */
let enrolAllison: Buffer;
let enrolJune: Buffer;
let conv: Conversation;
let convFile: string;

/** WAV of `clips` trimmed to speech and joined with 300 ms pauses. */
function joined(clips: string[]): Buffer {
  const pieces = clips.map((c) => trimToSpeech(decodeFile(c)));
  const gap = new Int16Array(4800);
  const total = pieces.reduce((n, p) => n + p.length + gap.length, 0);
  const pcm = new Int16Array(total);
  let at = 0;
  for (const p of pieces) {
    pcm.set(p, at);
    at += p.length + gap.length;
  }
  return wavBytes(pcm);
}

beforeAll(async () => {
  work = tempDir('parlance-speakers-');
  pools = new Map(realSpeakers().map((p) => [p.name, p]));
  const enrolClips = (name: string) => pools.get(name)!.clips.slice(-8);
  const testPool = (name: string): CorpusSpeaker => ({ ...pools.get(name)!, clips: pools.get(name)!.clips.slice(0, -8) });
  enrolAllison = joined(enrolClips('allison'));
  enrolJune = joined(enrolClips('june'));
  // Pauses long enough for the real-time endpoint to close each turn's utterance.
  conv = buildConversation([testPool('allison'), testPool('june'), testPool('ivrvoice-ru')], { turns: 6, seed: 5, pauseMs: [900, 1200] });
  convFile = path.join(work, 'three-speakers.wav');
  writeFileSync(convFile, wavBytes(conv.pcm));
  // One after the other: two starts at once on a loaded machine can each miss the harness's start timeout.
  s = await startParlance();
  capped = await startParlance({
    env: {
      PARLANCE_SPEAKERS_MAX_PER_PROJECT: String(MAX_SPEAKERS),
      PARLANCE_SPEAKER_SAMPLES_MAX_PER_PROJECT: String(MAX_SAMPLES),
      PARLANCE_SPEAKER_MAX_FILE_SIZE_BYTES: String(MAX_BYTES),
    },
  });
}, 120_000);

afterAll(async () => {
  await Promise.all([s?.stop(), capped?.stop()]);
  if (work) rmSync(work, { recursive: true, force: true });
});

function createSpeaker(server: Parlance, body: unknown, key?: string): Promise<Response> {
  return server.request('/v1/speakers', { method: 'POST', headers: json, body: JSON.stringify(body), key });
}

async function createOk(server: Parlance, name: string, metadata?: unknown): Promise<Speaker> {
  const res = await createSpeaker(server, metadata === undefined ? { name } : { name, metadata });
  if (res.status !== 201) throw new Error(`create speaker: ${res.status} ${await res.text()}`);
  return (await res.json()) as Speaker;
}

function addAudio(server: Parlance, id: string, audio: Buffer, filename = 'sample.wav', key?: string): Promise<Response> {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(audio)]), filename);
  return server.request(`/v1/speakers/${id}/audio`, { method: 'POST', body: fd, key });
}

async function getSpeaker(server: Parlance, id: string): Promise<Speaker> {
  return (await (await server.request(`/v1/speakers/${id}`)).json()) as Speaker;
}

const settled = (server: Parlance, id: string) =>
  waitFor(
    () => getSpeaker(server, id),
    (r) => r.status !== 'processing',
    180_000,
    250,
  );

/** Speakers enrolled once for the recognition tests (ready). */
let allison: Speaker;
let june: Speaker;

describe('enrolment', () => {
  it('creates a speaker with no samples; the name is unique per project (409), metadata is kept', async () => {
    const a = await createOk(s, 'allison', { team: 'support', level: 2 });
    expect(a).toMatchObject({
      name: 'allison',
      metadata: { team: 'support', level: 2 },
      status: 'no_samples',
      num_samples: 0,
      speech_ms: null,
      error_type: null,
    });
    const dup = await createSpeaker(s, { name: 'allison' });
    const body = await errorBody(dup);
    expect([dup.status, body.error_type]).toEqual([409, 'speaker_name_conflict']);
    allison = a;
  });

  it('computes a profile from a multipart sample: processing, then ready with its speech measured; metered', async () => {
    const res = await addAudio(s, allison.id, enrolAllison, 'allison.wav');
    expect(res.status, await res.clone().text()).toBe(201);
    const sample = (await res.json()) as Sample;
    expect(sample).toMatchObject({ speaker_id: allison.id, filename: 'allison.wav', size: enrolAllison.length });
    expect((await getSpeaker(s, allison.id)).status).toBe('processing');
    const done = await settled(s, allison.id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: 'ready', num_samples: 1, error_type: null });
    expect(done.speech_ms).toBeGreaterThanOrEqual(10_000);
    const measured = (await (await s.request(`/v1/speakers/${allison.id}/audio/${sample.id}`)).json()) as Sample;
    expect(measured.speech_ms).toBe(done.speech_ms);
    // One usage record for the sample's measurement, with its audio duration.
    const t = new Date(Date.now() - 3_600_000).toISOString();
    const logs = (await (await s.request(`/v1/usage-logs?start_time=${t}&end_time=${new Date(Date.now() + 60_000).toISOString()}`)).json()) as {
      usage_logs: { model: string; input_audio_duration_ms: number }[];
    };
    const enrolment = logs.usage_logs.filter((l) => l.model === 'parlance-speaker-features-v1');
    expect(enrolment).toHaveLength(1);
    expect(enrolment[0]!.input_audio_duration_ms).toBeGreaterThan(done.speech_ms!);
  }, 200_000);

  it('takes a sample from an uploaded file (file_id), which may be deleted afterwards', async () => {
    june = await createOk(s, 'june');
    const file = path.join(work, 'june.wav');
    writeFileSync(file, enrolJune);
    const fileId = await uploadFile(s, file);
    const res = await s.request(`/v1/speakers/${june.id}/audio`, { method: 'POST', headers: json, body: JSON.stringify({ file_id: fileId }) });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as Sample).filename).toBe('june.wav');
    expect((await s.request(`/v1/files/${fileId}`, { method: 'DELETE' })).status).toBe(204);
    expect(await settled(s, june.id)).toMatchObject({ status: 'ready' });
  }, 200_000);

  it('fails with speaker_audio_too_short when the samples hold too little speech, and recovers when more is added', async () => {
    const sp = await createOk(s, 'short');
    const short = joined(pools.get('allison')!.clips.slice(0, 1));
    expect((await addAudio(s, sp.id, short)).status).toBe(201);
    const failed = await settled(s, sp.id);
    expect(failed).toMatchObject({ status: 'failed', error_type: 'speaker_audio_too_short' });
    expect(failed.error_message).toMatch(/at least 10\.0 s/);
    // The shortfall is made up by another sample: the profile is computed again from both.
    expect((await addAudio(s, sp.id, enrolAllison)).status).toBe(201);
    expect(await settled(s, sp.id)).toMatchObject({ status: 'ready', num_samples: 2 });
    expect((await s.request(`/v1/speakers/${sp.id}`, { method: 'DELETE' })).status).toBe(204);
  }, 300_000);

  it('fails with speaker_invalid_audio naming the sample that is not audio; deleting it leaves no_samples', async () => {
    const sp = await createOk(s, 'noise');
    const res = await addAudio(s, sp.id, Buffer.from('this is not audio at all'.repeat(100)), 'notes.txt');
    const sample = (await res.json()) as Sample;
    const failed = await settled(s, sp.id);
    expect(failed).toMatchObject({ status: 'failed', error_type: 'speaker_invalid_audio' });
    expect(failed.error_message).toContain(sample.id);
    expect((await s.request(`/v1/speakers/${sp.id}/audio/${sample.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await getSpeaker(s, sp.id)).toMatchObject({ status: 'no_samples', num_samples: 0, error_type: null });
    expect((await s.request(`/v1/speakers/${sp.id}`, { method: 'DELETE' })).status).toBe(204);
  }, 200_000);

  it('lists speakers and samples with cursors', async () => {
    const page1 = (await (await s.request('/v1/speakers?limit=1')).json()) as { speakers: Speaker[]; next_page_cursor: string | null };
    expect(page1.speakers).toHaveLength(1);
    expect(page1.next_page_cursor).not.toBeNull();
    const page2 = (await (await s.request(`/v1/speakers?limit=1&cursor=${encodeURIComponent(page1.next_page_cursor!)}`)).json()) as { speakers: Speaker[] };
    expect(new Set([page1.speakers[0]!.id, page2.speakers[0]!.id])).toEqual(new Set([allison.id, june.id]));
    const samples = (await (await s.request(`/v1/speakers/${allison.id}/audio`)).json()) as { samples: Sample[]; next_page_cursor: string | null };
    expect(samples.samples.map((x) => x.speaker_id)).toEqual([allison.id]);
    expect(samples.next_page_cursor).toBeNull();
    await expectError(await s.request('/v1/speakers?cursor=garbage'), 400, 'invalid_cursor');
  });
});

async function expectError(res: Response, status: number, type: string): Promise<string> {
  const body = await errorBody(res);
  expect([res.status, body.error_type], body.message).toEqual([status, type]);
  return body.message;
}

describe('bad requests', () => {
  it('refuses bad names and metadata with invalid_request', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: '42' },
      { name: 'x'.repeat(129) },
      { name: 'a', metadata: 'text' },
      { name: 'a', metadata: { big: 'x'.repeat(5000) } },
      { name: 'a', extra: 1 },
    ])
      await expectError(await createSpeaker(s, body), 400, 'invalid_request');
    // A name of exactly 128 characters is fine.
    const long = await createOk(s, 'y'.repeat(128));
    expect((await s.request(`/v1/speakers/${long.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it("unknown, malformed and other projects' ids are speaker_not_found", async () => {
    const other = await s.admin<{ id: string }>('create-project', '--name', 'other');
    const key = (await s.admin<{ api_key: string }>('create-key', '--project', other.id)).api_key;
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope'])
      for (const [method, p] of [
        ['GET', `/v1/speakers/${id}`],
        ['DELETE', `/v1/speakers/${id}`],
        ['GET', `/v1/speakers/${id}/audio`],
      ] as const)
        await expectError(await s.request(p, { method }), 404, 'speaker_not_found');
    await expectError(await s.request(`/v1/speakers/${allison.id}`, { key }), 404, 'speaker_not_found');
    await expectError(await addAudio(s, allison.id, enrolAllison, 'x.wav', key), 404, 'speaker_not_found');
    await expectError(await s.request(`/v1/speakers/${allison.id}/audio/00000000-0000-4000-8000-000000000000`), 404, 'speaker_sample_not_found');
  });

  it('enrolment audio: a body that is neither multipart nor {file_id}, and an unknown file', async () => {
    await expectError(await s.request(`/v1/speakers/${june.id}/audio`, { method: 'POST', headers: json, body: '{}' }), 400, 'invalid_request');
    await expectError(await s.request(`/v1/speakers/${june.id}/audio`, { method: 'POST', headers: json, body: '[1]' }), 400, 'invalid_request');
    await expectError(
      await s.request(`/v1/speakers/${june.id}/audio`, { method: 'POST', headers: json, body: JSON.stringify({ file_id: 'missing' }) }),
      404,
      'file_not_found',
    );
  });

  it('needs speakers:read to read and speakers:write to change', async () => {
    const ro = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'speakers:read')).api_key;
    const none = (await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'files:write')).api_key;
    expect((await s.request('/v1/speakers', { key: ro })).status).toBe(200);
    await expectError(await createSpeaker(s, { name: 'ro' }, ro), 403, 'permission_denied');
    await expectError(await s.request(`/v1/speakers/${allison.id}`, { method: 'DELETE', key: ro }), 403, 'permission_denied');
    await expectError(await s.request('/v1/speakers', { key: none }), 403, 'permission_denied');
  });
});

describe('limits', () => {
  it('speakers per project: the cap-th is created, the next gets 429 limit_exceeded naming the cap', async () => {
    const made: Speaker[] = [];
    for (let i = 0; i < MAX_SPEAKERS; i++) made.push(await createOk(capped, `s${i}`));
    const msg = await expectError(await createSpeaker(capped, { name: 'over' }), 429, 'limit_exceeded');
    expect(msg).toContain('speakers_per_project');
    expect(msg).toContain(String(MAX_SPEAKERS));
    // Deleting one makes room again.
    expect((await capped.request(`/v1/speakers/${made[1]!.id}`, { method: 'DELETE' })).status).toBe(204);
    made[1] = await createOk(capped, 'again');
    for (const sp of made) expect((await capped.request(`/v1/speakers/${sp.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('sample size: exactly the limit is accepted, one byte more is 400; samples per project are capped (429)', async () => {
    const sp = await createOk(capped, 'sizes');
    const atLimit = Buffer.alloc(MAX_BYTES, 1);
    expect((await addAudio(capped, sp.id, atLimit)).status).toBe(201);
    const over = await addAudio(capped, sp.id, Buffer.alloc(MAX_BYTES + 1, 1));
    const overMsg = await expectError(over, 400, 'invalid_request');
    expect(overMsg).toContain(String(MAX_BYTES));
    for (let i = 1; i < MAX_SAMPLES; i++) expect((await addAudio(capped, sp.id, Buffer.alloc(1000, 1))).status).toBe(201);
    const msg = await expectError(await addAudio(capped, sp.id, Buffer.alloc(1000, 1)), 429, 'limit_exceeded');
    expect(msg).toContain('speaker_samples_per_project');
    // Deleting the speaker removes its samples' rows and audio: the cap has room again and the blobs are gone.
    const dir = path.join(capped.dataDir, 'blobs', 'speakers', capped.projectId, sp.id);
    expect(existsSync(dir)).toBe(true);
    expect((await capped.request(`/v1/speakers/${sp.id}`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await capped.request(`/v1/speakers/${sp.id}`), 404, 'speaker_not_found');
    const left = (await capped.request(`/v1/speakers`).then((r) => r.json())) as { speakers: Speaker[] };
    expect(left.speakers).toHaveLength(0);
    const files = existsSync(dir) ? (await import('node:fs')).readdirSync(dir) : [];
    expect(files).toEqual([]);
    const next = await createOk(capped, 'room');
    expect((await addAudio(capped, next.id, Buffer.alloc(1000, 1))).status).toBe(201);
  });
});

/** The share of each reference speaker's tokens (by count) under each label. */
function labelsBySpeaker(tokens: Tok[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const t of tokens) {
    const mid = (t.start_ms + t.end_ms) / 2;
    const turn = conv.turns.find((r) => r.startMs - 200 <= mid && mid <= r.endMs + 200);
    if (!turn) continue;
    const m = out.get(turn.speaker) ?? new Map<string, number>();
    m.set(t.speaker ?? '(none)', (m.get(t.speaker ?? '(none)') ?? 0) + 1);
    out.set(turn.speaker, m);
  }
  return out;
}

const share = (m: Map<string, number> | undefined, label: (l: string) => boolean) => {
  const all = [...(m ?? new Map<string, number>()).values()].reduce((a, b) => a + b, 0);
  const hit = [...(m ?? new Map<string, number>())].filter(([l]) => label(l)).reduce((a, [, n]) => a + n, 0);
  return all ? hit / all : 0;
};

/** Labels per reference speaker, for failure messages. */
const show = (by: Map<string, Map<string, number>>) => JSON.stringify([...by].map(([k, m]) => [k, Object.fromEntries(m)]));

describe('recognition', () => {
  // Three real women's voices, which the diarizer under the naming often merges: the async naming judges each turn
  // on its own (voice-print.ts identifyTurns), so a merged speaker is split by what its turns sound like.
  /** The conversation transcribed with `speakers` asked for: the record and the transcript's tokens. */
  async function transcribeWithSpeakers(): Promise<{ rec: { id: string; speakers: string[] }; tokens: Tok[] }> {
    const fileId = await uploadFile(s, convFile);
    const res = await s.request('/v1/transcriptions', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ model: 'stt-async-v4', file_id: fileId, enable_speaker_diarization: true, speakers: [allison.id, june.id.toUpperCase()] }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const rec = (await res.json()) as { id: string; speakers: string[] };
    const done = await waitFor(
      async () => (await (await s.request(`/v1/transcriptions/${rec.id}`)).json()) as { status: string; error_message?: string },
      (r) => r.status === 'completed' || r.status === 'error',
      420_000,
      500,
    );
    expect(done.status, done.error_message).toBe('completed');
    const { tokens } = (await (await s.request(`/v1/transcriptions/${rec.id}/transcript`)).json()) as { tokens: Tok[] };
    return { rec, tokens };
  }

  it('async: a transcription with speakers completes; its record lists them and every label is an enrolled name or a number', async () => {
    const { rec, tokens } = await transcribeWithSpeakers();
    expect(rec.speakers).toEqual([allison.id, june.id]);
    expect(tokens.length).toBeGreaterThan(5);
    for (const t of tokens) expect(t.speaker ?? '', t.text).toMatch(/^(allison|june|\d+)$/);
  }, 480_000);

  it('async: enrolled voices carry their names, the voice not enrolled keeps a number', async () => {
    const { tokens } = await transcribeWithSpeakers();
    const by = labelsBySpeaker(tokens);
    expect(
      share(by.get('allison'), (l) => l === 'allison'),
      show(by),
    ).toBeGreaterThanOrEqual(0.8);
    expect(
      share(by.get('june'), (l) => l === 'june'),
      show(by),
    ).toBeGreaterThanOrEqual(0.8);
    expect(
      share(by.get('ivrvoice-ru'), (l) => /^\d+$/.test(l)),
      show(by),
    ).toBeGreaterThanOrEqual(0.8);
  }, 480_000);

  it('async: speakers without diarization, unknown, repeated or not ready are refused at creation', async () => {
    const fileId = await uploadFile(s, convFile);
    const create = (body: Record<string, unknown>) =>
      s.request('/v1/transcriptions', { method: 'POST', headers: json, body: JSON.stringify({ model: 'stt-async-v4', file_id: fileId, ...body }) });
    await expectError(await create({ speakers: [allison.id] }), 400, 'invalid_request');
    await expectError(await create({ enable_speaker_diarization: true, speakers: [allison.id, allison.id] }), 400, 'invalid_request');
    await expectError(await create({ enable_speaker_diarization: true, speakers: Array.from({ length: 33 }, () => allison.id) }), 400, 'invalid_request');
    await expectError(await create({ enable_speaker_diarization: true, speakers: ['00000000-0000-4000-8000-000000000000'] }), 404, 'speaker_not_found');
    const empty = await createOk(s, 'empty');
    const msg = await expectError(await create({ enable_speaker_diarization: true, speakers: [empty.id] }), 409, 'speaker_not_ready');
    expect(msg).toContain('no_samples');
    expect((await s.request(`/v1/speakers/${empty.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  // Live tokens are named by the clustered window they fall in (live-identifier.ts): the online clusterer merges
  // these voices, so a name per live speaker would give both one name or none.
  it('real-time: enrolled voices get their names once heard; the voice not enrolled never gets one', async () => {
    const pcm = Buffer.from(conv.pcm.buffer, conv.pcm.byteOffset, conv.pcm.byteLength);
    const frames = await streamRealtime(s, pcm, { enable_speaker_diarization: true, speakers: [allison.id, june.id] });
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    const finals = frames.flatMap((f) => f.tokens).filter((t) => t.is_final && t.text.trim());
    const by = labelsBySpeaker(finals as Tok[]);
    console.log(`speakers: live labels by reference voice ${show(by)}`);
    // A window is judged once it holds 1 s of speech: a token final before that may go out under a number.
    expect(
      share(by.get('ivrvoice-ru'), (l) => l === 'allison' || l === 'june'),
      show(by),
    ).toBeLessThanOrEqual(0.2);
    expect(
      share(by.get('allison'), (l) => l === 'allison'),
      show(by),
    ).toBeGreaterThanOrEqual(0.5);
    expect(
      share(by.get('june'), (l) => l === 'june'),
      show(by),
    ).toBeGreaterThanOrEqual(0.5);
  }, 400_000);

  it('real-time: an unknown speaker is an error frame; speakers without diarization is invalid_request', async () => {
    const pcm = Buffer.alloc(3200);
    const unknown = await streamRealtime(s, pcm, { enable_speaker_diarization: true, speakers: ['00000000-0000-4000-8000-000000000000'] });
    expect(unknown.at(-1)).toMatchObject({ error_type: 'speaker_not_found' });
    const noDiar = await streamRealtime(s, pcm, { speakers: [allison.id] });
    expect(noDiar.at(-1)).toMatchObject({ error_type: 'invalid_request' });
  });

  it('OpenAPI documents the speakers endpoints and the speakers field', async () => {
    const doc = (await (await s.request('/openapi.json', { key: null })).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const p of ['/v1/speakers', '/v1/speakers/{speaker_id}', '/v1/speakers/{speaker_id}/audio', '/v1/speakers/{speaker_id}/audio/{sample_id}'])
      expect(doc.paths[p], p).toBeDefined();
    expect(JSON.stringify(doc.paths['/v1/transcriptions'])).toContain('speakers');
  });
});
