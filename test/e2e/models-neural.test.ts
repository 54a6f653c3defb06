// The real neural streaming model (test/real-model.ts), imported with `parlance models import` and served end to end:
// async transcription of uploaded files (speech segments decoded as fast as the CPU allows), real-time sessions over
// /transcribe-websocket with a finalize after each utterance (as Pipecat sends them) and without, the OpenAI
// transcription endpoint, and the model list. Word error rates on real recordings, with margin: the model makes about
// 13 % on these clips decoded whole; the live finals must carry the words the async path gives.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SttReceivedFrame } from '../../src/wire/stt-frames.js';
import { type Parlance, streamRealtime, type TranscriptBody, transcribeFile } from '../harness.js';
import { hasRealModel, pcm16k as pcm, realSpeechClips, serveRealModel } from '../real-model.js';
import { asteriskEnClips, werOf } from '../real-speech.js';

const MODEL = 'gigaspeech-kws-3m-v1';
const clips = hasRealModel ? realSpeechClips() : [];
/** Silence between utterances of a conversation, 16 kHz s16le. */
const GAP = Buffer.alloc(16_000 * 2);

const words = (tokens: { text: string; is_final?: boolean }[]) =>
  tokens
    .filter((t) => !t.text.startsWith('<'))
    .map((t) => t.text)
    .join('');

let s: Parlance;
let audio: Buffer[];
/** Async transcript of each clip (the reference the live path is held to). */
let asyncText: string[];
let asyncTokens: TranscriptBody['tokens'][];

beforeAll(async () => {
  if (!hasRealModel) return;
  s = await serveRealModel(MODEL, { args: ['--alias', 'stt-rt-v4', 'stt-async-v4'] });
  audio = clips.map((c) => pcm(c.file));
}, 120_000);

afterAll(() => s?.stop());

/**
 * One session over /transcribe-websocket: each clip after a second of silence, then `{"type":"finalize"}` when
 * `finalize` is set; resolves with every frame once the finished frame came, and where each clip starts (ms).
 */
async function converse(clipAudio: Buffer[], config: Record<string, unknown>, finalize: boolean): Promise<{ frames: SttReceivedFrame[]; starts: number[] }> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: SttReceivedFrame[] = [];
  const done = new Promise<void>((resolve) =>
    ws.on('message', (m: Buffer) => {
      const f = JSON.parse(m.toString()) as SttReceivedFrame;
      frames.push(f);
      if (f.finished || f.error_type) resolve();
    }),
  );
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ api_key: s.apiKey, model: MODEL, audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1, ...config }));
  const starts: number[] = [];
  let sentMs = 0;
  for (const a of clipAudio) {
    const utterance = Buffer.concat([GAP, a]);
    starts.push(sentMs + GAP.length / 32);
    for (let off = 0; off < utterance.length; off += 3200) ws.send(utterance.subarray(off, off + 3200));
    sentMs += utterance.length / 32;
    if (finalize) ws.send(JSON.stringify({ type: 'finalize' }));
  }
  ws.send('');
  await done;
  ws.close();
  return { frames, starts };
}

/** The final words of each clip: the final tokens that start inside its span of the session (its gap before it excluded). */
function perClip(frames: SttReceivedFrame[], starts: number[]): string[] {
  const finals = frames.flatMap((f) => f.tokens).filter((t) => t.is_final && t.start_ms !== undefined && !t.text.startsWith('<'));
  return starts.map((start, i) =>
    words(finals.filter((t) => t.start_ms! >= start - 300 && t.start_ms! < (starts[i + 1] ?? Infinity) - 300))
      .trim()
      .toLowerCase(),
  );
}

describe.skipIf(!hasRealModel)('the real neural streaming model', () => {
  it('is offered for async and real time under its id, and under the aliases it claimed in their own mode', async () => {
    const { models } = (await (await s.request('/v1/models')).json()) as {
      models: { id: string; transcription_mode: string; aliased_model_id: string | null }[];
    };
    const modes = (id: string) => models.filter((m) => m.id === id).map((m) => `${m.transcription_mode}:${m.aliased_model_id}`);
    expect(modes(MODEL).sort()).toEqual(['async:null', 'real_time:null']);
    expect(modes('stt-rt-v4')).toEqual([`real_time:${MODEL}`]);
    expect(modes('stt-async-v4')).toEqual([`async:${MODEL}`]);
  });

  it('transcribes uploaded files: real speech within 20 % word errors, each word timed inside its clip with a confidence', async () => {
    asyncText = [];
    asyncTokens = [];
    const confidences = new Set<number>();
    for (const [i, c] of clips.entries()) {
      const t = await transcribeFile(s, c.file, { model: 'stt-async-v4' });
      asyncText.push(t.text);
      asyncTokens.push(t.tokens);
      const durationMs = audio[i]!.length / 32;
      for (const tk of t.tokens) {
        expect(tk.start_ms).toBeGreaterThanOrEqual(0);
        expect(tk.end_ms).toBeLessThanOrEqual(durationMs + 1);
        expect(tk.confidence).toBeGreaterThan(0);
        expect(tk.confidence).toBeLessThanOrEqual(1);
        confidences.add(tk.confidence);
      }
    }
    // Scores, not a constant: the model is surer of some words than others.
    expect(confidences.size).toBeGreaterThan(10);
    const wer = werOf(clips.map((c, i) => ({ reference: c.reference, text: asyncText[i]! })));
    console.log(`async WER ${(wer.wer * 100).toFixed(1)} % (${wer.errors}/${wer.words})`);
    expect(wer.wer).toBeLessThanOrEqual(0.2);
  }, 300_000);

  it('gives the async words as final tokens live, with a finalize after each utterance: one <fin> each, nothing lost', async () => {
    expect(asyncText).toHaveLength(clips.length);
    const { frames, starts } = await converse(audio, {}, true);
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    expect(frames.flatMap((f) => f.tokens).filter((t) => t.text === '<fin>')).toHaveLength(clips.length);
    const live = perClip(frames, starts);
    const liveWer = werOf(clips.map((c, i) => ({ reference: c.reference, text: live[i]! })));
    const asyncWer = werOf(clips.map((c, i) => ({ reference: c.reference, text: asyncText[i]! })));
    const apart = werOf(clips.map((_, i) => ({ reference: asyncText[i]!, text: live[i]! })));
    console.log(`live WER ${(liveWer.wer * 100).toFixed(1)} %, async ${(asyncWer.wer * 100).toFixed(1)} %, live vs async ${(apart.wer * 100).toFixed(1)} %`);
    expect(liveWer.wer).toBeLessThanOrEqual(asyncWer.wer + 0.03);
    // The formatted words of both paths differ in a few places only (the encoder carries context across utterances).
    expect(apart.wer).toBeLessThanOrEqual(0.1);
  }, 300_000);

  it('makes the last words final at the end of the stream without a finalize, and forms no word from the silence', async () => {
    const i = clips.findIndex((c) => c.set === 'gigaspeech-test-wavs');
    const frames = await streamRealtime(s, Buffer.concat([audio[i]!, GAP]), { model: MODEL });
    expect(frames.at(-1)?.finished).toBe(true);
    const finals = frames.flatMap((f) => f.tokens).filter((t) => t.is_final && !t.text.startsWith('<'));
    // Words well behind the audio turn final while the utterance goes on: non-final words still come after the first final.
    const firstFinal = frames.findIndex((f) => f.tokens.some((t) => t.is_final));
    expect(frames.slice(firstFinal + 1).some((f) => f.tokens.some((t) => !t.is_final))).toBe(true);
    // The last word is there, where the async path has it, and nothing follows it in the silence.
    expect(Math.abs(finals.at(-1)!.start_ms! - asyncTokens[i]!.at(-1)!.start_ms)).toBeLessThanOrEqual(300);
    const live = werOf([{ reference: clips[i]!.reference, text: words(finals) }]).wer;
    expect(live).toBeLessThanOrEqual(werOf([{ reference: clips[i]!.reference, text: asyncText[i]! }]).wer + 0.05);
  }, 120_000);

  it('gives plain lower-case words with text formatting off, and written ones with it on', async () => {
    const i = 0;
    const plain = await streamRealtime(s, audio[i]!, { model: MODEL, enable_text_formatting: false });
    const plainText = words(plain.flatMap((f) => f.tokens).filter((t) => t.is_final)).trim();
    expect(plainText).toBe(plainText.toLowerCase());
    expect(plainText).not.toMatch(/[.,?]/);
    const formatted = await transcribeFile(s, clips[i]!.file, { model: MODEL });
    expect(formatted.text[0]).toBe(formatted.text[0]!.toUpperCase());
    expect(formatted.text).toMatch(/\.$/);
  }, 120_000);

  it('hears context terms as hotwords, in files and live: words it misses without them', async () => {
    // An Asterisk prompt (tuning half of the real-speech set) whose term the model spells otherwise without context.
    // demo-thanks.wav's "PBX" was a second case: biased, it comes out "PBX" on some CPUs and "pbs" on others (an AMD
    // EPYC), a margin too thin for a test.
    const cases = [{ name: 'vm-undeleted.wav', term: 'undeleted' }].map((c) => ({ ...c, clip: asteriskEnClips().find((x) => x.file.endsWith(`/${c.name}`))! }));
    for (const { clip, term } of cases) {
      const has = (text: string) =>
        text
          .toLowerCase()
          .split(/[^a-z]+/)
          .includes(term.toLowerCase());
      const plain = await transcribeFile(s, clip.file, { model: MODEL });
      const biased = await transcribeFile(s, clip.file, { model: MODEL, context: { terms: [term] } });
      expect([has(plain.text), has(biased.text)]).toEqual([false, true]);
    }
    // Live, the session's terms reach its decoder (a recognizer built with them).
    const { clip, term } = cases[0]!;
    const live = async (config: Record<string, unknown>) =>
      words((await streamRealtime(s, Buffer.concat([pcm(clip.file), GAP]), { model: MODEL, ...config })).flatMap((f) => f.tokens).filter((t) => t.is_final));
    expect(await live({})).not.toMatch(new RegExp(`\\b${term}\\b`, 'i'));
    expect(await live({ context: { terms: [term] } })).toMatch(new RegExp(`\\b${term}\\b`, 'i'));
  }, 180_000);

  it('ends utterances at pauses with <end> when endpoint detection is on', async () => {
    const two = clips.filter((c) => c.set === 'gigaspeech-test-wavs').map((c) => audio[clips.indexOf(c)]!);
    // Silence after the last one too: an utterance the end of the stream closes has no <end>.
    const { frames } = await converse([two[0]!, Buffer.concat([two[1]!, GAP])], { enable_endpoint_detection: true }, false);
    const tokens = frames.flatMap((f) => f.tokens);
    const ends = tokens.map((t, i) => (t.text === '<end>' ? i : -1)).filter((i) => i >= 0);
    expect(ends.length).toBeGreaterThanOrEqual(2);
    // Each <end> follows final words of the utterance it closes.
    for (const i of ends) expect(tokens[i - 1]?.is_final).toBe(true);
  }, 120_000);

  it('serves the OpenAI transcription endpoint under its id: the words of the async path', async () => {
    const i = clips.findIndex((x) => x.set === 'gigaspeech-test-wavs');
    const c = clips[i]!;
    const form = new FormData();
    form.append('file', new Blob([execFileSync('cat', [c.file])], { type: 'audio/wav' }), 'clip.wav');
    form.append('model', MODEL);
    const res = await s.request('/v1/audio/transcriptions', { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const { text } = (await res.json()) as { text: string };
    expect(werOf([{ reference: asyncText[i]!, text }]).wer).toBe(0);
  }, 120_000);
});
