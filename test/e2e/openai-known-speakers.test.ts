// OpenAI's known speakers end to end (issue 36): `known_speaker_names[]` with `known_speaker_references[]` (audio
// clips as data URLs) on a diarized_json transcription, through the official `openai` SDK. Real recordings of
// different people (Debian's Asterisk prompts, test/diarization-corpus.ts): a conversation of three voices, and
// reference clips of two of them cut from recordings the conversation does not use. Their segments carry the names,
// the third voice a letter. The clips serve that request only: no speaker is enrolled, no file kept, and the prints
// leave the transcription's row when its job ends. Bad names and clips are refused naming the field.
import { rmSync, writeFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import OpenAI, { BadRequestError } from 'openai';
import type { TranscriptionCreateParamsNonStreaming, TranscriptionDiarized } from 'openai/resources/audio/transcriptions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REFERENCE_CHARS } from '../../src/modules/openai/schemas.js';
import { buildConversation, type Conversation, decodeFile, realSpeakers, trimToSpeech, wavBytes } from '../diarization-corpus.js';
import { type Parlance, startParlance, tempDir } from '../harness.js';

const work = tempDir('parlance-openai-known-');
const speakers = new Map(realSpeakers().map((p) => [p.name, p]));
const available = ['allison', 'june', 'ivrvoice-ru'].every((n) => speakers.has(n));
let s: Parlance;
let client: OpenAI;
let conv: Conversation;
let convFile: string;
/** 16 kHz mono WAV of one speaker's speech from recordings the conversation does not use, and its samples. */
let allisonClip: Buffer;
let allisonPcm: Int16Array;
let juneClip: Buffer;

/** The speaker's last recordings, cut to their speech and joined with 300 ms pauses, up to `seconds`. */
function referenceSpeech(name: string, seconds: number): Int16Array {
  const pieces: Int16Array[] = [];
  let samples = 0;
  for (const clip of speakers.get(name)!.clips.slice(-8).reverse()) {
    const speech = trimToSpeech(decodeFile(clip));
    if (samples + speech.length + 4800 > seconds * 16_000) continue;
    pieces.push(speech, new Int16Array(4800));
    samples += speech.length + 4800;
  }
  const pcm = new Int16Array(samples);
  let at = 0;
  for (const p of pieces) {
    pcm.set(p, at);
    at += p.length;
  }
  return pcm;
}

const dataUrl = (audio: Buffer, type = 'audio/wav') => `data:${type};base64,${audio.toString('base64')}`;
const silence = (seconds: number) => wavBytes(new Int16Array(seconds * 16_000));

beforeAll(async () => {
  if (!available) return;
  const conversationPool = (name: string) => ({ ...speakers.get(name)!, clips: speakers.get(name)!.clips.slice(0, -8) });
  conv = buildConversation([conversationPool('allison'), conversationPool('june'), conversationPool('ivrvoice-ru')], {
    turns: 6,
    seed: 5,
    pauseMs: [900, 1200],
  });
  convFile = path.join(work, 'three-speakers.wav');
  writeFileSync(convFile, wavBytes(conv.pcm));
  allisonPcm = referenceSpeech('allison', 10);
  allisonClip = wavBytes(allisonPcm);
  juneClip = wavBytes(referenceSpeech('june', 10));
  s = await startParlance();
  client = new OpenAI({ apiKey: s.apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 420_000 });
}, 120_000);
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

function transcribe(fields: Partial<TranscriptionCreateParamsNonStreaming>) {
  return client.audio.transcriptions
    .create({
      file: createReadStream(convFile),
      model: 'gpt-4o-transcribe-diarize',
      response_format: 'diarized_json',
      ...fields,
    } as TranscriptionCreateParamsNonStreaming)
    .withResponse();
}

async function badRequest(fields: Partial<TranscriptionCreateParamsNonStreaming>): Promise<BadRequestError> {
  const err = await transcribe(fields).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BadRequestError);
  return err as BadRequestError;
}

/** The reference speaker of a segment: the turn it overlaps most. */
function voiceOf(seg: { start: number; end: number }): string {
  let best = '';
  let most = -Infinity;
  for (const t of conv.turns) {
    const o = Math.min(seg.end * 1000, t.endMs) - Math.max(seg.start * 1000, t.startMs);
    if (o > most) [most, best] = [o, t.speaker];
  }
  return best;
}

describe.skipIf(!available)('known speakers', () => {
  it('diarized_json: segments of the referenced voices carry their names, the other voice a letter; nothing is kept', async () => {
    const { data, response } = await transcribe({
      known_speaker_names: ['agent', 'customer'],
      known_speaker_references: [dataUrl(allisonClip), dataUrl(juneClip)],
    });
    const segments = (data as TranscriptionDiarized).segments;
    // Speech time of each reference voice under each label.
    const byVoice = new Map<string, Map<string, number>>();
    for (const seg of segments) {
      const labels = byVoice.get(voiceOf(seg)) ?? new Map<string, number>();
      labels.set(seg.speaker, (labels.get(seg.speaker) ?? 0) + seg.end - seg.start);
      byVoice.set(voiceOf(seg), labels);
    }
    const show = JSON.stringify([...byVoice].map(([v, l]) => [v, [...l]]));
    console.info(`known speakers: labels by reference voice ${show}`);
    const time = (voice: string, ok: (label: string) => boolean) => [...(byVoice.get(voice) ?? [])].reduce((n, [l, t]) => n + (ok(l) ? t : 0), 0);
    const all = (voice: string) => time(voice, () => true);
    const named = (l: string) => l === 'agent' || l === 'customer';
    // Ten seconds of reference speech name about two thirds of a voice's speech on these features (docs/benchmarks.md,
    // enrolled speakers): each name is heard on its voice and never on another, the third voice keeps a letter.
    expect(
      time('allison', (l) => l === 'agent'),
      show,
    ).toBeGreaterThan(0);
    expect(
      time('june', (l) => l === 'customer'),
      show,
    ).toBeGreaterThan(0);
    expect((time('allison', (l) => l === 'agent') + time('june', (l) => l === 'customer')) / (all('allison') + all('june')), show).toBeGreaterThanOrEqual(0.5);
    expect(time('allison', (l) => l === 'customer') + time('june', (l) => l === 'agent'), show).toBe(0);
    expect(time('ivrvoice-ru', named) / all('ivrvoice-ru'), show).toBeLessThanOrEqual(0.2);
    for (const seg of segments) expect(seg.speaker, show).toMatch(/^(agent|customer|[A-Z])$/);

    // For this request only: no enrolled speaker, no file, and no print left on the finished transcription.
    const id = response.headers.get('x-parlance-transcription-id')!;
    expect(((await (await s.request('/v1/speakers')).json()) as { speakers: unknown[] }).speakers).toEqual([]);
    expect(((await (await s.request('/v1/files/count')).json()) as { total: number }).total).toBe(0);
    const record = (await (await s.request(`/v1/transcriptions/${id}`)).json()) as Record<string, unknown>;
    expect(record).toMatchObject({ status: 'completed', enable_speaker_diarization: true });
    expect(JSON.stringify(record)).not.toMatch(/agent|customer/);
    const db = new Database(path.join(s.dataDir, 'parlance.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT known_speakers FROM transcriptions WHERE id = ?').get(id)).toEqual({ known_speakers: null });
    } finally {
      db.close();
    }
  }, 480_000);

  it('unpaired, too many, repeated or numeric names, another format, and clips that are no data URL are refused naming the field', async () => {
    const one = dataUrl(allisonClip);
    const cases: [Partial<TranscriptionCreateParamsNonStreaming>, string, RegExp][] = [
      [{ known_speaker_names: ['agent'] }, 'known_speaker_references', /one clip per name \(got 1 names, 0 clips\)/],
      [{ known_speaker_references: [one] }, 'known_speaker_names', /one clip per name/],
      [{ known_speaker_names: ['a', 'b', 'c', 'd', 'e'], known_speaker_references: [one, one, one, one, one] }, 'known_speaker_names', /more than 4 items/],
      [{ known_speaker_names: ['agent', 'agent'], known_speaker_references: [one, one] }, 'known_speaker_names', /repeats "agent"/],
      [{ known_speaker_names: ['42'], known_speaker_references: [one] }, 'known_speaker_names', /digits only/],
      [{ known_speaker_names: ['agent'], known_speaker_references: [one], response_format: 'json' }, 'response_format', /must be diarized_json/],
      [{ known_speaker_names: ['agent'], known_speaker_references: ['https://example.com/a.wav'] }, 'known_speaker_references', /base64 data URL/],
      [{ known_speaker_names: ['agent'], known_speaker_references: ['data:audio/wav;base64,%%%'] }, 'known_speaker_references', /not valid base64/],
      [{ known_speaker_names: ['agent'], known_speaker_references: ['x'.repeat(MAX_REFERENCE_CHARS + 1)] }, 'known_speaker_references', /longer than/],
    ];
    for (const [fields, param, message] of cases) {
      const err = await badRequest(fields);
      expect([err.param, err.message], JSON.stringify(Object.keys(fields))).toEqual([param, expect.stringMatching(message)]);
    }
    expect(((await (await s.request('/v1/files/count')).json()) as { total: number }).total).toBe(0);
  }, 120_000);

  it('clips that are not usable audio, too short, too long or without speech are refused naming the clip', async () => {
    const long = new Int16Array(allisonPcm.length * 2);
    long.set(allisonPcm);
    long.set(allisonPcm, allisonPcm.length);
    const cases: [Buffer, RegExp][] = [
      [Buffer.from('this is not audio at all '.repeat(40)), /known_speaker_references\.0: is not usable audio/],
      [wavBytes(allisonPcm.subarray(0, 16_000)), /known_speaker_references\.0: is 1\.0 s long; at least 1\.5 s are needed/],
      [wavBytes(long), /known_speaker_references\.0: is longer than 10\.5 seconds/],
      [silence(3), /known_speaker_references\.0: holds 0\.0 s of speech; at least 1\.0 s of the speaker's voice are needed/],
    ];
    for (const [clip, message] of cases) {
      const err = await badRequest({ known_speaker_names: ['agent'], known_speaker_references: [dataUrl(clip)] });
      expect([err.param, err.message]).toEqual(['known_speaker_references', expect.stringMatching(message)]);
    }
    // The second clip named in its message.
    const second = await badRequest({ known_speaker_names: ['agent', 'customer'], known_speaker_references: [dataUrl(juneClip), dataUrl(silence(3))] });
    expect(second.message).toMatch(/known_speaker_references\.1: holds 0\.0 s of speech/);
    expect(((await (await s.request('/v1/files/count')).json()) as { total: number }).total).toBe(0);
    expect(((await (await s.request('/v1/transcriptions')).json()) as { transcriptions: unknown[] }).transcriptions.length).toBeLessThanOrEqual(1);
  }, 180_000);
});
