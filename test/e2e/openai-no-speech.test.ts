// verbose_json segments' `no_speech_prob` end to end (issue 36): the share of the segment the voice activity detector
// hears no speech in, not a constant. Real recordings (Asterisk's prompts, Allison Smith) cut to their speech and
// laid out with silences of known length: one fluent sentence, then "Thank you" and "Goodbye" with a 450 ms pause
// between them (too short to split the segment). Each segment's value is checked against the silence it was built
// to hold, through the official `openai` SDK, for transcriptions and translations alike.
import { createReadStream, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import type { TranscriptionSegment } from 'openai/resources/audio/transcriptions';
import type { TranslationVerbose } from 'openai/resources/audio/translations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFile, trimToSpeech, wavBytes } from '../diarization-corpus.js';
import { type Parlance, startParlance, tempDir } from '../harness.js';
import { ASTERISK_EN } from '../real-speech.js';

const CLIPS = ['conf-muted', 'auth-thankyou', 'vm-goodbye'].map((n) => `${ASTERISK_EN}/${n}.wav`); // "You are now muted", "Thank you", "Goodbye"
const GAP_MS = 450;
const work = tempDir('parlance-openai-no-speech-');
let s: Parlance;
let client: OpenAI;
let file: string;
/** Where the built audio is silent, ms. */
let silences: [number, number][];

beforeAll(async () => {
  if (!CLIPS.every((c) => existsSync(c))) return;
  const [muted, thanks, goodbye] = CLIPS.map((c) => trimToSpeech(decodeFile(c)));
  const silence = (ms: number) => new Int16Array(ms * 16);
  const parts = [silence(500), muted!, silence(1500), thanks!, silence(GAP_MS), goodbye!, silence(1000)];
  const pcm = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  silences = [];
  let at = 0;
  for (const p of parts) {
    pcm.set(p, at);
    if (p.every((v) => v === 0)) silences.push([at / 16, (at + p.length) / 16]);
    at += p.length;
  }
  file = path.join(work, 'pauses.wav');
  writeFileSync(file, wavBytes(pcm));
  s = await startParlance();
  client = new OpenAI({ apiKey: s.apiKey, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 300_000 });
}, 60_000);
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The share of [start, end] s the layout made silent. */
function builtSilence(seg: TranscriptionSegment): number {
  const [from, to] = [seg.start * 1000, seg.end * 1000];
  const silent = silences.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, to) - Math.max(a, from)), 0);
  return silent / (to - from);
}

describe.skipIf(!CLIPS.every((c) => existsSync(c)))('verbose_json no_speech_prob', () => {
  it("is the share of each segment the detector hears no speech in: near the pause it was built with, the fluent one's near none", async () => {
    const verbose = (granularities: ('segment' | 'word')[]) =>
      client.audio.transcriptions.create({
        file: createReadStream(file),
        model: 'whisper-1',
        response_format: 'verbose_json',
        timestamp_granularities: granularities,
      });
    const [transcription, translation, wordsOnly] = await Promise.all([
      verbose(['segment', 'word']),
      client.audio.translations.create({ file: createReadStream(file), model: 'whisper-1', response_format: 'verbose_json' }),
      verbose(['word']),
    ]);
    for (const [what, segments] of [
      ['transcription', transcription.segments!],
      ['translation', (translation as TranslationVerbose).segments!],
    ] as const) {
      const show = JSON.stringify(segments.map((x) => [x.start, x.end, x.text, x.no_speech_prob]));
      console.info(`${what}: ${show}`);
      expect(segments.length, show).toBe(2);
      const [fluent, paused] = segments as [TranscriptionSegment, TranscriptionSegment];
      // The pause lies inside the second segment: about a fifth of it.
      const gapStart = silences[2]![0] / 1000;
      expect(paused.start < gapStart && paused.end > gapStart + GAP_MS / 1000, show).toBe(true);
      expect(builtSilence(paused), show).toBeGreaterThan(0.15);
      for (const seg of segments) {
        expect(seg.no_speech_prob, `${what} ${show}`).toBeGreaterThanOrEqual(0);
        expect(seg.no_speech_prob, `${what} ${show}`).toBeLessThanOrEqual(1);
        // The detector holds speech a few frames into a pause and may miss a quiet syllable: within 0.12 of the layout.
        expect(Math.abs(seg.no_speech_prob - builtSilence(seg)), `${what} ${show}`).toBeLessThan(0.12);
      }
      expect(paused.no_speech_prob, `${what} ${show}`).toBeGreaterThan(fluent.no_speech_prob + 0.05);
    }
    // Words only: no segments, and nothing to measure.
    expect(wordsOnly.segments).toBeUndefined();
    expect(wordsOnly.words!.length).toBeGreaterThan(3);
  }, 420_000);
});
