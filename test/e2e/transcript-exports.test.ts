// Native transcript exports, GET /v1/transcriptions/{id}/transcript?format=srt|vtt|txt, end to end: flite speech
// through pocketsphinx, once plain and once a two-speaker conversation with diarization on (speaker labels), the
// default JSON unchanged.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, makeSpeech, startParlance, tempDir, transcribeFile, type Parlance } from '../harness.js';
import { twoSpeakerWav } from './openai-helpers.js';

const work = tempDir('parlance-exports-e2e-');
let s: Parlance;
let plain: { id: string; text: string; tokens: { text: string; start_ms: number; end_ms: number; speaker?: string }[] };
let diarized: typeof plain;

beforeAll(async () => {
  s = await startParlance();
  const speech = await makeSpeech(path.join(work, 'speech.wav'), 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.', {
    padSeconds: 1,
  });
  const conversation = twoSpeakerWav(work);
  plain = (await transcribeFile(s, speech)) as unknown as typeof plain;
  diarized = (await transcribeFile(s, conversation, { enable_speaker_diarization: true })) as unknown as typeof plain;
}, 240_000);
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function exported(id: string, format: string): Promise<{ type: string | null; body: string }> {
  const res = await s.request(`/v1/transcriptions/${id}/transcript?format=${format}`);
  expect(res.status).toBe(200);
  return { type: res.headers.get('content-type'), body: await res.text() };
}

const words = (text: string) => text.replace(/\s+/g, ' ').trim();
const ms = (t: string) => {
  const [h, m, sec] = t.replace(',', '.').split(':');
  return Math.round((Number(h) * 3600 + Number(m) * 60 + Number(sec)) * 1000);
};

/** SRT cues: index, times, text lines. */
function srtCues(body: string) {
  return body
    .trim()
    .split(/\n\n/)
    .map((block) => {
      const [n, times, ...lines] = block.split('\n');
      const [from, to] = times!.split(' --> ');
      return { n: Number(n), start: ms(from!), end: ms(to!), text: lines.join('\n') };
    });
}

describe('transcript exports', () => {
  it('the default and ?format=json are the JSON transcript, unchanged', async () => {
    const res = await s.request(`/v1/transcriptions/${plain.id}/transcript?format=json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(plain);
  });

  it('srt: numbered cues over the words, times from the tokens, in order', async () => {
    const { type, body } = await exported(plain.id, 'srt');
    expect(type).toMatch(/^application\/x-subrip/);
    const cues = srtCues(body);
    expect(cues.map((c) => c.n)).toEqual(cues.map((_, i) => i + 1));
    expect(words(cues.map((c) => c.text).join(' '))).toBe(words(plain.text));
    expect(cues[0]!.start).toBe(plain.tokens[0]!.start_ms);
    expect(cues.at(-1)!.end).toBe(plain.tokens.at(-1)!.end_ms);
    for (const [i, c] of cues.entries()) {
      expect(c.end).toBeGreaterThan(c.start);
      if (i) expect(c.start).toBeGreaterThanOrEqual(cues[i - 1]!.end);
    }
    expect(body).not.toContain('Speaker');
  });

  it('vtt: the same cues in WebVTT; txt: one line per cue', async () => {
    const srt = srtCues((await exported(plain.id, 'srt')).body);
    const vtt = await exported(plain.id, 'vtt');
    expect(vtt.type).toMatch(/^text\/vtt/);
    expect(vtt.body.startsWith('WEBVTT\n\n')).toBe(true);
    const times = [...vtt.body.matchAll(/^(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})$/gm)].map((m) => [ms(m[1]!), ms(m[2]!)]);
    expect(times).toEqual(srt.map((c) => [c.start, c.end]));
    const txt = await exported(plain.id, 'txt');
    expect(txt.type).toMatch(/^text\/plain/);
    expect(txt.body.trim().split('\n')).toEqual(srt.map((c) => c.text));
  });

  it('with diarization: speaker labels in each format', async () => {
    expect(new Set(diarized.tokens.map((t) => t.speaker))).toEqual(new Set(['1', '2']));
    const srt = srtCues((await exported(diarized.id, 'srt')).body);
    expect(srt.every((c) => /^Speaker [12]: /.test(c.text))).toBe(true);
    expect(new Set(srt.map((c) => c.text.slice(0, 9)))).toEqual(new Set(['Speaker 1', 'Speaker 2']));
    const vtt = (await exported(diarized.id, 'vtt')).body;
    expect(vtt).toContain('<v Speaker 1>');
    expect(vtt).toContain('<v Speaker 2>');
    const txt = (await exported(diarized.id, 'txt')).body.trim().split('\n\n');
    expect(txt.length).toBeGreaterThanOrEqual(2);
    expect(txt.every((p) => /^Speaker [12]: \S/.test(p))).toBe(true);
    // Consecutive paragraphs are different speakers' turns.
    for (let i = 1; i < txt.length; i++) expect(txt[i]!.slice(0, 9)).not.toBe(txt[i - 1]!.slice(0, 9));
  });

  it('an unknown format is refused naming format', async () => {
    const res = await s.request(`/v1/transcriptions/${plain.id}/transcript?format=docx`);
    expect(res.status).toBe(400);
    expect((await errorBody(res)).validation_errors).toEqual([expect.objectContaining({ location: 'format' })]);
  });
});
