// Formatted transcripts end to end (src/text): async transcripts and real-time final tokens come with sentence
// capitals, punctuation and numbers as digits by default; `enable_text_formatting: false` on a request, or
// PARLANCE_TEXT_FORMATTING=false on the server, gives the raw words. Token timestamps stay exact.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import { makeSpeech, startParlance, streamRealtime, tempDir, transcribeFile, type Parlance } from '../harness.js';

const work = tempDir('parlance-format-');
const SPOKEN = 'my flight leaves at seven thirty on march third and the ticket cost two hundred dollars';
let wav: string;
let s: Parlance;
let raw: Parlance;

/** An async transcript token or a real-time one (whose times the wire type leaves optional: word tokens have them). */
interface Tok {
  text: string;
  start_ms?: number;
  end_ms?: number;
  is_final?: boolean;
}

beforeAll(async () => {
  wav = await makeSpeech(path.join(work, 'flight.wav'), `${SPOKEN}.`, { padSeconds: 1 });
  [s, raw] = await Promise.all([startParlance(), startParlance({ env: { PARLANCE_TEXT_FORMATTING: 'false' } })]);
});
afterAll(async () => {
  await Promise.all([s?.stop(), raw?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

async function transcribe(server: Parlance, extra: Record<string, unknown> = {}): Promise<{ text: string; tokens: Tok[] }> {
  return transcribeFile(server, wav, extra, 90_000);
}

/** Timestamps in order and non-overlapping, every token non-empty. */
function checkTimes(tokens: Tok[]): void {
  tokens.forEach((t, i) => {
    expect(t.text.trim().length).toBeGreaterThan(0);
    expect(t.start_ms).toBeTypeOf('number');
    expect(t.end_ms).toBeGreaterThan(t.start_ms!);
    if (i > 0) expect(t.start_ms).toBeGreaterThanOrEqual(tokens[i - 1]!.end_ms!);
  });
}

/** Raw recognizer output: lower-case words, no punctuation, no digits. */
const isRaw = (text: string) => text === text.toLowerCase() && !/[.,?!$%:0-9]/.test(text);

describe('formatted transcripts', () => {
  it('async: capitals, a closing stop and digits by default; raw with enable_text_formatting false; same words', async () => {
    const [formatted, plain] = await Promise.all([transcribe(s), transcribe(s, { enable_text_formatting: false })]);
    expect(isRaw(plain.text)).toBe(true);
    expect(formatted.text).toMatch(/^[A-Z]/);
    expect(formatted.text).toMatch(/[.?]$/);
    // The recognizer heard numbers in this sentence; formatted, at least one of them is written in digits.
    expect(/seven|thirty|third|hundred/.test(plain.text)).toBe(true);
    expect(formatted.text).toMatch(/[0-9]/);
    expect(formatted.tokens.length).toBeLessThan(plain.tokens.length);
    checkTimes(formatted.tokens);
    // A formatted token spans exactly the raw words it replaced: the same first start and last end.
    expect(formatted.tokens[0]!.start_ms).toBe(plain.tokens[0]!.start_ms);
    expect(formatted.tokens.at(-1)!.end_ms).toBe(plain.tokens.at(-1)!.end_ms);
    // The same words once numbers are written out again (scoring normalisation).
    expect(wordErrorRate(plain.text, formatted.text).wer).toBe(0);
    expect(wordErrorRate(SPOKEN, formatted.text).wer).toBeLessThan(0.5);
  }, 180_000);

  it('PARLANCE_TEXT_FORMATTING=false: raw words by default, formatted when the request asks', async () => {
    const [plain, asked] = await Promise.all([transcribe(raw), transcribe(raw, { enable_text_formatting: true })]);
    expect(isRaw(plain.text)).toBe(true);
    expect(asked.text).toMatch(/^[A-Z].*[.?]$/);
  }, 180_000);

  it('real time: final tokens formatted, non-final ones raw; enable_text_formatting false keeps finals raw', async () => {
    const pcm = readFileSync(wav).subarray(44);
    const live = async (extra: Record<string, unknown>) => {
      // The whole 4.9 s sentence may stay non-final: a finalization forced mid-sentence would give words that depend on
      // the machine's load (its second pass is only waited for while the session keeps up).
      const frames = await streamRealtime(s, pcm, { max_non_final_tokens_duration_ms: 6000, ...extra });
      expect(frames.find((f) => f.error_type)).toBeUndefined();
      const finals = frames.flatMap((f) => f.tokens.filter((t) => t.is_final));
      const nonFinal = frames.flatMap((f) => f.tokens.filter((t) => !t.is_final));
      return { finals, text: finals.map((t) => t.text).join(''), nonFinalText: nonFinal.map((t) => t.text).join('') };
    };
    const [formatted, plain] = await Promise.all([live({}), live({ enable_text_formatting: false })]);
    expect(formatted.text).toMatch(/^[A-Z]/);
    expect(formatted.text).toMatch(/[.?]$/);
    expect(formatted.text).toMatch(/[0-9]/);
    expect(isRaw(formatted.nonFinalText)).toBe(true);
    expect(isRaw(plain.text)).toBe(true);
    checkTimes(formatted.finals);
    // The SDK's join rule holds: the first token bare, every later one with its leading space.
    formatted.finals.slice(1).forEach((t) => expect(t.text).toMatch(/^ \S/));
    expect(wordErrorRate(plain.text, formatted.text).wer).toBeLessThan(0.2);
    // A bad value is the spec's error.
    const bad = await (async () => {
      const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
      const got = new Promise<{ error_type?: string; error_message?: string }>((r) => ws.once('message', (m) => r(JSON.parse(m.toString()) as never)));
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', audio_format: 'auto', enable_text_formatting: 'yes' }));
      return got;
    })();
    expect(bad).toMatchObject({ error_type: 'invalid_request' });
    expect(bad.error_message).toMatch(/enable_text_formatting/);
  }, 180_000);
});
