// Real-time transcription WebSocket, black-box: a real server, the `ws` client, real ffmpeg and pocketsphinx,
// flite speech. Audio is sent at real-time pace (100 ms chunks) where timing matters, as fast as possible elsewhere.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import type { SttReceivedFrame, SttToken } from '../../src/wire/stt-frames.js';
import { makeSpeech, startParlance, tempDir, type Parlance, waitFor } from '../harness.js';

const execFileP = promisify(execFile);
const SENTENCE = 'the quick brown fox jumps over the lazy dog';
/** Harvard sentences joined by "and": flite reads them with no pause that ends an utterance. */
const CONTINUOUS =
  'the birch canoe slid on the smooth planks and glue the sheet to the dark blue background and it is easy to tell the depth of a well ' +
  'and these days a chicken leg is a rare dish and rice is often served in round bowls and the juice of lemons makes fine punch ' +
  'and the box was thrown beside the parked truck';
const work = tempDir('parlance-rt-e2e-');
/** 16 kHz mono s16le: the sentence, then 1.5 s of silence. */
let speech: Buffer;
let speechWav: string;

type Frame = SttReceivedFrame;
type Tok = SttToken;

interface Conn {
  ws: WebSocket;
  frames: Frame[];
  /** Resolves with the close code once the server closed. */
  closed: Promise<number>;
  /** Resolves with the first frame matching `pred`. */
  until(pred: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
}

async function connect(s: Parlance, headers: Record<string, string> = {}, protocols: string[] = []): Promise<Conn> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`, protocols, { headers });
  const frames: Frame[] = [];
  const waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  ws.on('message', (data, isBinary) => {
    expect(isBinary).toBe(false);
    const f = JSON.parse((data as Buffer).toString('utf8')) as Frame;
    frames.push(f);
    for (const w of [...waiters]) {
      if (w.pred(f)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(f);
      }
    }
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    closed,
    until(pred, timeoutMs = 20_000) {
      const hit = frames.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise<Frame>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching frame in ${timeoutMs} ms; frames: ${JSON.stringify(frames).slice(0, 2000)}`)), timeoutMs);
        waiters.push({ pred, resolve: (f) => (clearTimeout(timer), resolve(f)) });
      });
    },
  };
}

const config = (s: Parlance, extra: Record<string, unknown> = {}) => ({
  api_key: s.apiKey,
  model: 'stt-rt-v4',
  audio_format: 'pcm_s16le',
  sample_rate: 16000,
  num_channels: 1,
  ...extra,
});

async function open(s: Parlance, extra: Record<string, unknown> = {}): Promise<Conn> {
  const c = await connect(s);
  c.ws.send(JSON.stringify(config(s, extra)));
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Send `audio` in chunks of `chunkBytes`, pausing `paceMs` between chunks (0: as fast as the socket takes it). */
async function sendAudio(ws: WebSocket, audio: Buffer, chunkBytes = 3200, paceMs = 0): Promise<void> {
  for (let i = 0; i < audio.length; i += chunkBytes) {
    ws.send(audio.subarray(i, i + chunkBytes));
    if (paceMs) await sleep(paceMs);
  }
}

/** Exactly one error frame of the given type and status, nothing else, then close 1000. */
async function expectError(c: Conn, type: string, status: number, message?: RegExp): Promise<Frame> {
  const code = await c.closed;
  expect(code).toBe(1000);
  expect(c.frames).toHaveLength(1);
  const f = c.frames[0]!;
  expect(Object.keys(f).sort()).toEqual(['error_code', 'error_message', 'error_type', 'more_info', 'request_id', 'tokens']);
  expect(f).toMatchObject({ tokens: [], error_code: status, error_type: type });
  expect(f.more_info).toMatch(new RegExp(`#${type.replace(/_/g, '-')}$`));
  expect(f.request_id).toMatch(/^req_/);
  if (message) expect(f.error_message).toMatch(message);
  return f;
}

/** Checks every normal frame's shape and the invariants across frames; returns the final tokens in order. */
/** `withSpeaker`: the session asked for diarization, so every word token carries a speaker label. */
function checkFrames(frames: Frame[], withSpeaker = false): Tok[] {
  const finals: Tok[] = [];
  let lastFinalMs = 0;
  let lastTotalMs = 0;
  frames.forEach((f, i) => {
    expect(f).not.toHaveProperty('error_code');
    expect(f).not.toHaveProperty('error_message');
    const keys = Object.keys(f).sort();
    expect(keys).toEqual(
      i === frames.length - 1 ? ['final_audio_proc_ms', 'finished', 'tokens', 'total_audio_proc_ms'] : ['final_audio_proc_ms', 'tokens', 'total_audio_proc_ms'],
    );
    expect(f.final_audio_proc_ms as number).toBeGreaterThanOrEqual(lastFinalMs);
    expect(f.total_audio_proc_ms as number).toBeGreaterThanOrEqual(lastTotalMs);
    expect(f.final_audio_proc_ms as number).toBeLessThanOrEqual(f.total_audio_proc_ms as number);
    lastFinalMs = f.final_audio_proc_ms as number;
    lastTotalMs = f.total_audio_proc_ms as number;
    let seenNonFinal = false;
    for (const t of f.tokens) {
      if (t.text === '<end>' || t.text === '<fin>') {
        expect(t).toEqual({ text: t.text, confidence: 1, is_final: true });
        continue;
      }
      // `language` only with enable_language_identification (the English model labels every token en).
      if ('language' in t) expect(t.language).toBe('en');
      expect(
        Object.keys(t)
          .filter((k) => k !== 'language')
          .sort(),
      ).toEqual(['confidence', 'end_ms', 'is_final', ...(withSpeaker ? ['speaker'] : []), 'start_ms', 'text']);
      expect(t.end_ms!).toBeGreaterThan(t.start_ms!);
      expect(t.confidence).toBeGreaterThanOrEqual(0);
      expect(t.confidence).toBeLessThanOrEqual(1);
      // Final tokens come first in a frame, then the current non-final ones.
      if (t.is_final) {
        expect(seenNonFinal).toBe(false);
        if (finals.length) expect(t.start_ms!).toBeGreaterThanOrEqual(finals[finals.length - 1]!.end_ms!);
        finals.push(t);
      } else seenNonFinal = true;
    }
  });
  expect(frames[frames.length - 1]).toMatchObject({ tokens: [], finished: true });
  return finals;
}

const words = (tokens: Tok[]) =>
  tokens
    .filter((t) => !t.text.startsWith('<'))
    .map((t) => t.text)
    .join('');

async function ffmpeg(input: string, args: string[], out: string): Promise<Buffer> {
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', input, ...args, '-y', out]);
  return readFileSync(out);
}

beforeAll(async () => {
  speechWav = await makeSpeech(path.join(work, 'fox.wav'), SENTENCE, { padSeconds: 1.5 });
  speech = await ffmpeg(speechWav, ['-f', 's16le', '-ar', '16000', '-ac', '1'], path.join(work, 'fox.raw'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('real-time transcription', () => {
  let s: Parlance;
  beforeAll(async () => {
    // Words are checked here, not a loaded machine's timing: final tokens always come from the second pass (under
    // CI load it could otherwise give way to the streaming decoder's rougher words).
    s = await startParlance({
      env: { PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS: '2', PARLANCE_WS_FIRST_MESSAGE_TIMEOUT_SECONDS: '4', PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000' },
    });
  });
  afterAll(() => s.stop());

  it('streams non-final then final tokens at real-time pace, finishes with finished:true and closes 1000', async () => {
    const c = await open(s);
    await sendAudio(c.ws, speech, 3200, 100);
    c.ws.send('');
    expect(await c.closed).toBe(1000);
    const finals = checkFrames(c.frames);
    // Non-final tokens arrive before the first final one.
    const firstFinal = c.frames.findIndex((f) => f.tokens.some((t) => t.is_final));
    expect(c.frames.slice(0, firstFinal).some((f) => f.tokens.some((t) => !t.is_final))).toBe(true);
    // Leading-space convention: first word bare, later words " word".
    expect(finals[0]!.text).not.toMatch(/^ /);
    for (const t of finals.slice(1)) expect(t.text).toMatch(/^ \S/);
    expect(wordErrorRate(SENTENCE, words(finals).trim()).wer).toBeLessThan(0.5);
    expect(finals.every((t) => t.text !== '<end>')).toBe(true);
    const last = c.frames[c.frames.length - 1]!;
    expect(last.total_audio_proc_ms as number).toBeGreaterThan(3000);
    expect(last.final_audio_proc_ms).toBe(last.total_audio_proc_ms);
  }, 30_000);

  it('with enable_non_final_tokens false sends only final tokens', async () => {
    const c = await open(s, { enable_non_final_tokens: false });
    await sendAudio(c.ws, speech);
    c.ws.send('');
    await c.closed;
    const finals = checkFrames(c.frames);
    expect(c.frames.every((f) => f.tokens.every((t) => t.is_final))).toBe(true);
    expect(words(finals)).toMatch(/fox/);
  });

  it('max_non_final_tokens_duration_ms holds exactly at both bounds and in between (continuous speech, no pause)', async () => {
    // 15 s of speech without a pause long enough to end an utterance: only the bound makes tokens final early.
    const wav = await makeSpeech(path.join(work, 'continuous.wav'), CONTINUOUS);
    const pcm = await ffmpeg(wav, ['-f', 's16le', '-ar', '16000', '-ac', '1'], path.join(work, 'continuous.raw'));
    const run = async (bound?: number) => {
      const c = await open(s, bound === undefined ? {} : { max_non_final_tokens_duration_ms: bound });
      await sendAudio(c.ws, pcm, 3200);
      c.ws.send('');
      expect(await c.closed).toBe(1000);
      const finals = checkFrames(c.frames);
      // How far past its start the audio got while a token was still shown as non-final.
      let longest = 0;
      for (const f of c.frames) for (const t of f.tokens) if (!t.is_final) longest = Math.max(longest, (f.total_audio_proc_ms as number) - t.start_ms!);
      return { longest, finals, text: words(finals) };
    };
    const [low, mid, high] = [await run(360), await run(), await run(6000)];
    expect(low.longest).toBeLessThanOrEqual(360);
    expect(mid.longest).toBeLessThanOrEqual(4000);
    expect(high.longest).toBeLessThanOrEqual(6000);
    // Each bound is what cut: tokens stayed non-final nearly that long (not finalized early by something else).
    expect(low.longest).toBeGreaterThan(0);
    expect(mid.longest).toBeGreaterThan(3000);
    expect(high.longest).toBeGreaterThan(5000);
    expect(low.finals.length).toBeGreaterThan(0);
    // A six-second window reads like the whole passage.
    expect(wordErrorRate(CONTINUOUS, high.text.trim()).wer).toBeLessThan(0.5);
  }, 180_000);

  it('endpoint detection emits a final <end> token after an utterance, only when enabled', async () => {
    const c = await open(s, { enable_endpoint_detection: true });
    await sendAudio(c.ws, speech, 3200, 20);
    const withEnd = await c.until((f) => f.tokens.some((t) => t.text === '<end>'));
    const idx = withEnd.tokens.findIndex((t) => t.text === '<end>');
    expect(withEnd.tokens.slice(0, idx).every((t) => t.is_final)).toBe(true);
    c.ws.send('');
    await c.closed;
    checkFrames(c.frames);
  });

  it('finalize (compact and legacy spaced forms) turns pending tokens final and answers <fin>; keepalive is accepted', async () => {
    const c = await open(s);
    const half = speech.subarray(0, 32_000 * 1.6);
    await sendAudio(c.ws, half, 3200, 10);
    c.ws.send('{ "type": "keepalive" }');
    c.ws.send(JSON.stringify({ type: 'keepalive' }));
    c.ws.send(JSON.stringify({ type: 'finalize', trailing_silence_ms: 300 }));
    const fin = await c.until((f) => f.tokens.some((t) => t.text === '<fin>'));
    // Nothing non-final is left once <fin> arrives.
    expect(fin.tokens.every((t) => t.is_final)).toBe(true);
    const before = c.frames.slice(0, c.frames.indexOf(fin) + 1).flatMap((f) => f.tokens.filter((t) => t.is_final && !t.text.startsWith('<')));
    expect(before.length).toBeGreaterThan(0);
    await sendAudio(c.ws, speech.subarray(half.length), 3200, 10);
    c.ws.send('{ "type": "finalize" }');
    await c.until((f) => f.tokens.filter((t) => t.text === '<fin>').length > 0 && f !== fin);
    c.ws.send('');
    await c.closed;
    const finals = checkFrames(c.frames);
    expect(finals.filter((t) => t.text === '<fin>')).toHaveLength(0); // markers are checked apart
    expect(c.frames.flatMap((f) => f.tokens).filter((t) => t.text === '<fin>')).toHaveLength(2);
    expect(words(finals)).toMatch(/dog/);
  });

  it('accepts base64 audio in text frames and an empty binary frame as the end of the stream', async () => {
    const c = await open(s);
    for (let i = 0; i < speech.length; i += 6400) c.ws.send(speech.subarray(i, i + 6400).toString('base64'));
    c.ws.send(Buffer.alloc(0), { binary: true });
    await c.closed;
    expect(words(checkFrames(c.frames))).toMatch(/fox/);
  });

  it('authenticates with an Authorization header at the handshake when the config has no api_key', async () => {
    const c = await connect(s, { authorization: `Bearer ${s.apiKey}` });
    const { api_key: _unused, ...rest } = config(s);
    c.ws.send(JSON.stringify(rest));
    await sendAudio(c.ws, speech);
    c.ws.send('');
    await c.closed;
    expect(words(checkFrames(c.frames))).toMatch(/fox/);
  });

  it('authenticates a browser-style client by the soniox-api-key subprotocol, with a temporary key', async () => {
    const res = await s.request('/v1/auth/temporary-api-key', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usage_type: 'transcribe_websocket', expires_in_seconds: 60 }),
    });
    const { api_key: tempKey } = (await res.json()) as { api_key: string };
    expect(tempKey).toMatch(/^temp:/); // ':' is not allowed in a subprotocol token, hence the percent-encoding
    const c = await connect(s, {}, ['soniox-api-key', encodeURIComponent(tempKey)]);
    expect(c.ws.protocol).toBe('soniox-api-key');
    const { api_key: _unused, ...rest } = config(s);
    c.ws.send(JSON.stringify(rest));
    await sendAudio(c.ws, speech);
    c.ws.send('');
    expect(await c.closed).toBe(1000);
    expect(words(checkFrames(c.frames))).toMatch(/fox/);
    // A wrong key offered the same way is refused like any other.
    const bad = await connect(s, {}, ['soniox-api-key', 'prl_nope']);
    bad.ws.send(JSON.stringify(rest));
    await expectError(bad, 'unauthenticated', 401);
  });

  it('accepts the SDK keys, an object context and a string context', async () => {
    for (const context of [
      { general: [{ key: 'domain', value: 'animals' }], text: 'a fox story', terms: ['fox'], translation_terms: [{ source: 'fox', target: 'zorro' }] },
      'animals and dogs',
    ]) {
      const c = await open(s, {
        context,
        language_hints: ['en'],
        language_hints_strict: true,
        enable_speaker_diarization: true,
        enable_language_identification: true,
        enable_endpoint_detection: true,
        max_endpoint_delay_ms: 1500,
        endpoint_sensitivity: 0.2,
        endpoint_latency_adjustment_level: 1,
        client_reference_id: 'abc',
        max_non_final_tokens_duration_ms: 1000,
        some_future_key: 1,
      });
      await sendAudio(c.ws, speech);
      c.ws.send('');
      expect(await c.closed).toBe(1000);
      expect(words(checkFrames(c.frames, true))).toMatch(/\w/);
      expect(
        c.frames
          .flatMap((f) => f.tokens)
          .filter((t) => !t.text.startsWith('<'))
          .every((t) => (t as { language?: string }).language === 'en'),
      ).toBe(true);
    }
  });

  describe('audio formats', () => {
    const cases: [string, string[], Record<string, unknown>][] = [
      ['f32le stereo 48 kHz (in-process)', ['-f', 'f32le', '-ar', '48000', '-ac', '2'], { audio_format: 'pcm_f32le', sample_rate: 48000, num_channels: 2 }],
      ['s16le 8 kHz (in-process)', ['-f', 's16le', '-ar', '8000', '-ac', '1'], { audio_format: 'pcm_s16le', sample_rate: 8000, num_channels: 1 }],
      ['s16le 44.1 kHz (in-process)', ['-f', 's16le', '-ar', '44100', '-ac', '1'], { audio_format: 'pcm_s16le', sample_rate: 44100, num_channels: 1 }],
      ['s24be stereo 22.05 kHz (in-process)', ['-f', 's24be', '-ar', '22050', '-ac', '2'], { audio_format: 'pcm_s24be', sample_rate: 22050, num_channels: 2 }],
      // (8 kHz mu-law decodes correctly but pocketsphinx's 16 kHz model mostly fails on telephone-band speech.)
      ['mulaw 16 kHz (in-process)', ['-f', 'mulaw', '-ar', '16000', '-ac', '1'], { audio_format: 'mulaw', sample_rate: 16000, num_channels: 1 }],
      ['wav, auto', ['-f', 'wav'], { audio_format: 'auto', sample_rate: undefined, num_channels: undefined }],
      ['ogg/vorbis, named', ['-c:a', 'libvorbis', '-f', 'ogg'], { audio_format: 'ogg', sample_rate: undefined, num_channels: undefined }],
      ['webm/opus, auto', ['-c:a', 'libopus', '-f', 'webm'], { audio_format: 'auto', sample_rate: undefined, num_channels: undefined }],
      ['mp3, named', ['-f', 'mp3'], { audio_format: 'mp3', sample_rate: undefined, num_channels: undefined }],
      ['flac, auto', ['-f', 'flac'], { audio_format: 'auto', sample_rate: undefined, num_channels: undefined }],
    ];
    it.each(cases)('%s', async (name, args, extra) => {
      const audio = await ffmpeg(speechWav, args, path.join(work, `fmt-${name.replace(/\W+/g, '_')}`));
      // All of the clip (4.5 s) may stay non-final: on a loaded machine the decoder falls more than a second behind
      // this all-at-once client, and a forced finalization there keeps the streaming words without the second pass
      // (by design; see the max_non_final_tokens_duration_ms test). What this case checks is the decoding of its format.
      const c = await open(s, { ...extra, max_non_final_tokens_duration_ms: 6000 });
      await sendAudio(c.ws, audio, 4096);
      c.ws.send('');
      expect(await c.closed).toBe(1000);
      const text = words(checkFrames(c.frames)).trim();
      expect(wordErrorRate(SENTENCE, text).wer, text).toBeLessThan(0.5);
    });

    it('a WAV stream with auto at real-time pace gets non-final tokens while it is still streaming', async () => {
      // What the SDK example clients do: a WAV file's bytes, header first, in real-time pieces; the header says
      // "length unknown" as a live writer's does.
      const wav = Buffer.from(readFileSync(speechWav));
      wav.writeUInt32LE(0xffffffff, 4);
      wav.writeUInt32LE(0xffffffff, wav.indexOf('data') + 4);
      const c = await open(s, { audio_format: 'auto', sample_rate: undefined, num_channels: undefined });
      await sendAudio(c.ws, wav, 3200, 100);
      const whileStreaming = c.frames.length;
      c.ws.send('');
      expect(await c.closed).toBe(1000);
      const finals = checkFrames(c.frames);
      expect(c.frames.slice(0, whileStreaming).some((f) => f.tokens.some((t) => !t.is_final && !t.text.startsWith('<')))).toBe(true);
      expect(wordErrorRate(SENTENCE, words(finals).trim()).wer).toBeLessThan(0.5);
    }, 30_000);

    it('undecodable audio with auto gives invalid_request', async () => {
      const c = await open(s, { audio_format: 'auto' });
      c.ws.send(Buffer.alloc(20_000, 7));
      c.ws.send('');
      const f = await expectError(c, 'invalid_request', 400, /could not be decoded/);
      // No ffmpeg internals (heap addresses, pipe names) in what the client reads.
      expect(f.error_message).not.toMatch(/0x[0-9a-f]{4,}|pipe:|@/);
    });
  });

  describe('configuration errors: one error frame, then close 1000', () => {
    const cases: [string, (s: Parlance) => unknown, string, number, RegExp?][] = [
      ['malformed JSON', () => '{"api_key": ', 'invalid_request', 400, /JSON/],
      ['a JSON array', () => [1, 2], 'invalid_request', 400, /JSON object/],
      ['missing api_key', (s) => ({ ...config(s), api_key: undefined }), 'unauthenticated', 401],
      ['unknown api_key', (s) => ({ ...config(s), api_key: 'prl_nope' }), 'unauthenticated', 401],
      ['over-long api_key', (s) => ({ ...config(s), api_key: 'x'.repeat(300) }), 'unauthenticated', 401],
      ['missing model', (s) => ({ ...config(s), model: undefined }), 'invalid_request', 400, /model/],
      ['unknown model', (s) => ({ ...config(s), model: 'nope-v9' }), 'model_not_available', 400, /nope-v9/],
      ['an async model', (s) => ({ ...config(s), model: 'parlance-async-en-v1' }), 'model_not_available', 400],
      ['missing audio_format', (s) => ({ ...config(s), audio_format: undefined }), 'invalid_request', 400, /audio_format/],
      ['unknown audio_format', (s) => ({ ...config(s), audio_format: 'pcm_s12le' }), 'invalid_request', 400, /audio_format/],
      ['raw without sample_rate', (s) => ({ ...config(s), sample_rate: undefined }), 'invalid_request', 400, /sample_rate/],
      ['raw without num_channels', (s) => ({ ...config(s), num_channels: undefined }), 'invalid_request', 400, /num_channels/],
      ['num_channels 0', (s) => ({ ...config(s), num_channels: 0 }), 'invalid_request', 400, /num_channels/],
      ['language_hints not an array', (s) => ({ ...config(s), language_hints: 'en' }), 'invalid_request', 400, /language_hints/],
      ['context of the wrong type', (s) => ({ ...config(s), context: 5 }), 'invalid_request', 400, /context/],
      ['context over 10000 characters', (s) => ({ ...config(s), context: 'a'.repeat(10_001) }), 'invalid_request', 400, /context/],
      ['context over 8000 tokens', (s) => ({ ...config(s), context: ',;'.repeat(4100) }), 'invalid_request', 400, /8000 tokens/],
      ['object context with bad terms', (s) => ({ ...config(s), context: { terms: [1] } }), 'invalid_request', 400, /context\.terms/],
      ['max_non_final_tokens_duration_ms too small', (s) => ({ ...config(s), max_non_final_tokens_duration_ms: 359 }), 'invalid_request', 400, /max_non_final/],
      [
        'max_non_final_tokens_duration_ms too large',
        (s) => ({ ...config(s), max_non_final_tokens_duration_ms: 6001 }),
        'invalid_request',
        400,
        /max_non_final/,
      ],
      [
        'enable_endpoint_detection not boolean',
        (s) => ({ ...config(s), enable_endpoint_detection: 'yes' }),
        'invalid_request',
        400,
        /enable_endpoint_detection/,
      ],
      ['enable_non_final_tokens not boolean', (s) => ({ ...config(s), enable_non_final_tokens: 1 }), 'invalid_request', 400, /enable_non_final_tokens/],
      ['client_reference_id over 256', (s) => ({ ...config(s), client_reference_id: 'x'.repeat(257) }), 'invalid_request', 400, /client_reference_id/],
      ['max_endpoint_delay_ms out of range', (s) => ({ ...config(s), max_endpoint_delay_ms: 100 }), 'invalid_request', 400, /max_endpoint_delay_ms/],
      ['endpoint_sensitivity out of range', (s) => ({ ...config(s), endpoint_sensitivity: 2 }), 'invalid_request', 400, /endpoint_sensitivity/],
      ['translation one way', (s) => ({ ...config(s), translation: { type: 'one_way', target_language: 'de' } }), 'invalid_request', 400, /"de"/],
      [
        'translation two way',
        (s) => ({ ...config(s), translation: { type: 'two_way', language_a: 'en', language_b: 'de' } }),
        'invalid_request',
        400,
        /"en" and "de"/,
      ],
      ['translation of unknown type', (s) => ({ ...config(s), translation: { type: 'three_way' } }), 'invalid_request', 400, /translation\.type/],
    ];
    it.each(cases)('%s', async (_name, make, type, status, message) => {
      const c = await connect(s);
      const body = make(s);
      c.ws.send(typeof body === 'string' ? body : JSON.stringify(body));
      await expectError(c, type, status, message);
    });

    it('audio before the configuration', async () => {
      const c = await connect(s);
      c.ws.send(speech.subarray(0, 3200));
      await expectError(c, 'invalid_request', 400, /configuration/);
    });

    it('a message over the size limit (after a valid configuration)', async () => {
      const c = await open(s);
      c.ws.send(Buffer.alloc(4_194_305)); // PARLANCE_WS_MAX_MESSAGE_BYTES default + 1
      await expectError(c, 'invalid_request', 400, /larger than 4194304 bytes/);
    });

    it('a key without stt_rt permission', async () => {
      const k = await s.admin<{ api_key: string }>('create-key', '--project', s.projectId, '--permission', 'files:write');
      const c = await open(s, { api_key: k.api_key });
      await expectError(c, 'permission_denied', 403, /stt_rt/);
    });
  });

  describe('stream errors', () => {
    const cases: [string, string][] = [
      ['malformed JSON control message', '{"type": "finalize"'],
      ['unknown control message', '{"type":"rewind"}'],
      ['invalid base64', 'not base64 at all!'],
    ];
    it.each(cases)('%s gives invalid_request', async (_name, text) => {
      const c = await open(s);
      c.ws.send(speech.subarray(0, 6400));
      c.ws.send(text);
      await expectError(c, 'invalid_request', 400);
    });

    it('request_timeout when no audio arrives after the configuration (clock starts at the config message)', async () => {
      const c = await connect(s);
      await sleep(2500); // an idle socket before the config is not timed (legacy SDK key fetch)
      const started = Date.now();
      c.ws.send(JSON.stringify(config(s)));
      await expectError(c, 'request_timeout', 408);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    });

    it('request_timeout and close when a socket sends nothing at all (both sockets; PARLANCE_WS_FIRST_MESSAGE_TIMEOUT_SECONDS)', async () => {
      const opened = Date.now();
      const c = await connect(s);
      await expectError(c, 'request_timeout', 408, /no configuration message within 4 s/);
      expect(Date.now() - opened).toBeGreaterThanOrEqual(3900);
      const tts = new WebSocket(`${s.url.replace('http', 'ws')}/tts-websocket`);
      const frames: Record<string, unknown>[] = [];
      tts.on('message', (m) => frames.push(JSON.parse(String(m)) as Record<string, unknown>));
      expect(await new Promise<number>((r) => tts.once('close', (code) => r(code)))).toBe(1000);
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ error_code: 408, error_type: 'request_timeout' });
    });

    it('request_timeout when audio stops without keepalives', async () => {
      const c = await open(s);
      await sendAudio(c.ws, speech.subarray(0, 32_000), 3200, 20);
      await c.closed;
      const last = c.frames[c.frames.length - 1]!;
      expect(last).toMatchObject({ error_type: 'request_timeout', error_code: 408 });
      for (const f of c.frames.slice(0, -1)) expect(f).not.toHaveProperty('error_code');
    });

    it('keepalives alone, before any audio, do not hold the session open: request_timeout (issue 22 D4)', async () => {
      const started = Date.now(); // before the configuration message, where the server's clock starts
      const c = await open(s);
      const timer = setInterval(() => c.ws.readyState === WebSocket.OPEN && c.ws.send('{ "type": "keepalive" }'), 300);
      try {
        await expectError(c, 'request_timeout', 408);
      } finally {
        clearInterval(timer);
      }
      // Not before the timeout (a slow machine only adds to this); that keepalives do not extend it is the error itself.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    });

    it('keepalives keep a paused session alive past the timeout', async () => {
      const c = await open(s);
      await sendAudio(c.ws, speech.subarray(0, 32_000), 3200, 10);
      for (let i = 0; i < 5; i++) {
        await sleep(900);
        c.ws.send('{"type":"keepalive"}');
      }
      await sendAudio(c.ws, speech.subarray(32_000), 3200, 5);
      c.ws.send('');
      expect(await c.closed).toBe(1000);
      checkFrames(c.frames);
    });

    it('temporary keys: usage scoped, single use, and max_session_duration_seconds ends the session with 403', async () => {
      const mint = async (body: Record<string, unknown>) => {
        const res = await s.request('/v1/auth/temporary-api-key', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { api_key: string }).api_key;
      };
      const tts = await mint({ usage_type: 'tts_rt', expires_in_seconds: 60 });
      await expectError(await open(s, { api_key: tts }), 'unauthenticated', 401, /tts_rt/);

      const once = await mint({ usage_type: 'transcribe_websocket', expires_in_seconds: 60, single_use: true });
      const ok = await open(s, { api_key: once });
      await sendAudio(ok.ws, speech);
      ok.ws.send('');
      await ok.closed;
      expect(words(checkFrames(ok.frames))).toMatch(/fox/);
      await expectError(await open(s, { api_key: once }), 'unauthenticated', 401, /already been used/);

      const capped = await mint({ usage_type: 'transcribe_websocket', expires_in_seconds: 60, max_session_duration_seconds: 1 });
      const started = Date.now(); // before the configuration message, where the server's clock starts
      const c = await open(s, { api_key: capped });
      const keepalive = setInterval(() => c.ws.readyState === c.ws.OPEN && c.ws.send('{"type":"keepalive"}'), 300);
      await c.closed;
      clearInterval(keepalive);
      expect(c.frames[c.frames.length - 1]).toMatchObject({ error_type: 'temp_api_key_session_expired', error_code: 403, tokens: [] });
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });

    it('402 when the organization balance is exhausted', async () => {
      await s.admin('set-balance', '--available-usd', '0', '--invoice-billing', 'off');
      try {
        await expectError(await open(s), 'organization_balance_exhausted', 402);
      } finally {
        await s.admin('set-balance', '--invoice-billing', 'on');
      }
    });
  });
});

describe('real-time session cap', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({ env: { PARLANCE_REALTIME_MAX_DURATION_SECONDS: '2' } });
  });
  afterAll(() => s.stop());

  it('max_duration_reached (413) at the session cap', async () => {
    const c = await open(s);
    const keepalive = setInterval(() => c.ws.readyState === c.ws.OPEN && c.ws.send(speech.subarray(0, 3200)), 100);
    await c.closed;
    clearInterval(keepalive);
    expect(c.frames[c.frames.length - 1]).toMatchObject({ error_type: 'max_duration_reached', error_code: 413, tokens: [] });
  });
});

// No tiny session cap here: on a loaded machine a session's start alone can take seconds.
describe('real-time caps and limits', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({
      env: {
        PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '1',
        PARLANCE_RATE_TRANSCRIBE_WEBSOCKET_PROJECT_PER_MIN: '5',
      },
    });
  });
  afterAll(() => s.stop());

  it('limit_exceeded (429) past the concurrent streams limit; a vanished client frees its slot at once', async () => {
    const liveStreams = async () =>
      ((await (await s.request('/v1/concurrency-limits')).json()) as { project: { current: { transcribe_concurrent: number } } }).project.current
        .transcribe_concurrent;
    const first = await open(s); // rate: 1
    first.ws.send(speech.subarray(0, 16_000));
    await waitFor(liveStreams, (n) => n === 1, 20_000, 100); // the first session holds the project's one slot
    const second = await open(s); // rate: 2
    await expectError(second, 'limit_exceeded', 429, /[Cc]oncurrent.*project/);
    first.ws.terminate();
    // The slot comes free when the socket closes: long before the session's own request_timeout (20 s) could end it.
    await waitFor(liveStreams, (n) => n === 0, 10_000, 100);
    // The freed slot takes a new session at once.
    const third = await open(s); // rate: 3
    third.ws.send(speech.subarray(0, 16_000));
    third.ws.send('');
    expect(await third.closed).toBe(1000);
    checkFrames(third.frames); // no error keys, monotonic counters, completion frame last
    expect(third.frames.at(-1)).toMatchObject({ tokens: [], finished: true });
  });

  it('limit_exceeded (429) past the per-minute session rate', async () => {
    for (let i = 0; i < 2; i++) {
      const c = await open(s); // rate: 4, 5
      c.ws.send('');
      expect(await c.closed).toBe(1000);
      expect(c.frames).toEqual([{ tokens: [], final_audio_proc_ms: 0, total_audio_proc_ms: 0, finished: true }]);
    }
    await expectError(await open(s), 'limit_exceeded', 429, /per minute/);
  });
});

describe('real-time flow control', () => {
  let s: Parlance;
  beforeAll(async () => {
    // No warm spare decoders: their loading (about 80 MB each) would hide the growth this test bounds.
    s = await startParlance({ env: { PARLANCE_REALTIME_WARM_DECODERS: '0' } });
  });
  afterAll(() => s.stop());

  it('a client sending far faster than real time is paused (bounded server memory), not buffered', async () => {
    const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${s.pid}/status`, 'utf8'))![1]) / 1024;
    // 2 s of speech per message (speech, so that all of it has to be decoded: non-speech is only run through the VAD).
    const chunk = Buffer.alloc(64_000);
    for (let off = 0; off < chunk.length; off += speech.length) speech.copy(chunk, off, 0, Math.min(speech.length, chunk.length - off));
    const flood = async () => {
      const c = await open(s);
      c.ws.send(speech.subarray(0, 32_000));
      await c.until((f) => f.tokens !== undefined, 20_000); // session up: engine and decoders allocated
      const before = rssMb();
      for (let i = 0; i < 1000; i++) c.ws.send(chunk); // 64 MB, about 33 minutes of audio, at once
      await sleep(2000);
      return { c, grown: rssMb() - before };
    };
    // A fresh server's first floods grow its working memory once (decoders' and workers' heaps at full speed: 50 to
    // 300 MB over the first two, measured on 2026-11-29), whatever is sent; later floods find it grown.
    for (let warm = 0; warm < 2; warm++) {
      const { c } = await flood();
      c.ws.terminate();
      await c.closed;
    }
    const { c, grown } = await flood();
    // The server stopped reading: the rest waits in the client's send buffer instead of the server's memory.
    expect(c.ws.bufferedAmount).toBeGreaterThan(30_000_000);
    // What it did read (at most the 34 MB not still buffered) went through the VAD and waits for the decoder in
    // bounded queues; keeping what it read would grow the server by that much. 6 to 10 MB was measured.
    expect(grown).toBeLessThan(30);
    c.ws.terminate();
  }, 60_000);
});

describe('real-time decoder capacity', () => {
  let s: Parlance;
  beforeAll(async () => {
    s = await startParlance({
      env: { PARLANCE_REALTIME_MAX_STREAMS: '1', PARLANCE_REALTIME_WARM_DECODERS: '0', PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS: '3' },
    });
  });
  afterAll(() => s.stop());

  it('a session beyond PARLANCE_REALTIME_MAX_STREAMS waits for a decoder, then gets limit_exceeded; a freed decoder serves the next', async () => {
    const first = await open(s);
    first.ws.send(speech.subarray(0, 32_000));
    await first.until((f) => f.tokens !== undefined, 20_000); // holds the node's only decoder
    const keepalive = setInterval(() => first.ws.send(JSON.stringify({ type: 'keepalive' })), 500); // and keeps it
    const startedAt = Date.now();
    const second = await open(s);
    second.ws.send(speech.subarray(0, 32_000)); // a client that streams, not one that times out for want of audio
    await expectError(second, 'limit_exceeded', 429, /every recognizer is busy/);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2900); // it waited the audio timeout for a decoder
    clearInterval(keepalive);
    expect(first.frames.some((f) => 'error_code' in f)).toBe(false);
    first.ws.send(Buffer.alloc(0));
    await first.closed;
    const third = await open(s);
    await sendAudio(third.ws, speech);
    third.ws.send(Buffer.alloc(0));
    expect(await third.closed).toBe(1000);
    const finals = checkFrames(third.frames);
    expect(finals.length).toBeGreaterThan(3);
  }, 60_000);
});
