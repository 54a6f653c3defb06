// Containers on the real-time WebSocket with `audio_format: "auto"`, black-box: a real server, real ffmpeg and
// pocketsphinx, flite speech encoded by ffmpeg with its defaults for each container (Ogg pages of up to 1 s, WebM
// blocks, 36 ms mp3 frames, FLAC frames), sent at real-time pace with the bytes proportional to audio time (100 ms of
// audio a message, the header with the first). Each container must be detected, give non-final tokens while it is
// still streaming, decode to its whole length, and end with the final words of the same speech sent as pcm_s16le.
// How soon the tokens come is the live bench's to measure (`npm run bench -- live --formats=...`), not asserted here.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { wordErrorRate } from '../../src/engines/stt/wer.js';
import type { SttReceivedFrame } from '../../src/wire/stt-frames.js';
import { makeSpeech, startParlance, tempDir, type Parlance } from '../harness.js';

const execFileP = promisify(execFile);
/** A sentence pocketsphinx hears well from flite (3 s), then 2 s of silence. */
const SPEECH = 'the quick brown fox jumps over the lazy dog';
const PIECE_MS = 100;
const work = tempDir('parlance-rt-formats-');

/** ffmpeg's output options for each container (after the 16 kHz mono WAV input). */
const CONTAINERS: [string, string[]][] = [
  ['wav', ['-f', 'wav']],
  ['mp3', ['-c:a', 'libmp3lame', '-f', 'mp3']],
  ['ogg-opus', ['-c:a', 'libopus', '-f', 'ogg']],
  ['webm-opus', ['-c:a', 'libopus', '-f', 'webm']],
  ['flac', ['-c:a', 'flac', '-f', 'flac']],
];

interface Session {
  frames: SttReceivedFrame[];
  /** Frames received before the end of the stream was sent. */
  whileStreaming: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One session: the configuration, `pieces` one every PIECE_MS, the end; every frame until the server closes. */
async function stream(s: Parlance, config: Record<string, unknown>, pieces: Buffer[]): Promise<Session> {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: SttReceivedFrame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse((data as Buffer).toString('utf8')) as SttReceivedFrame));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(JSON.stringify({ api_key: s.apiKey, model: 'stt-rt-v4', ...config }));
  const started = Date.now();
  for (let k = 0; k < pieces.length; k++) {
    await sleep(started + k * PIECE_MS - Date.now());
    if (pieces[k]!.length) ws.send(pieces[k]!);
  }
  const whileStreaming = frames.length;
  ws.send('');
  expect(await closed).toBe(1000);
  return { frames, whileStreaming };
}

/** `bytes` in `n` real-time pieces: the header (before the first audio packet, from ffprobe) and an even share each. */
async function realTimePieces(file: string, bytes: Buffer, n: number): Promise<Buffer[]> {
  const { stdout } = await execFileP('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'packet=pos', '-of', 'csv=p=0', file]);
  const header = parseInt(stdout, 10); // the first line may end in a comma (side data)
  const at = (k: number) => (k === 0 ? 0 : header + Math.round((k * (bytes.length - header)) / n));
  return Array.from({ length: n }, (_, k) => bytes.subarray(at(k), at(k + 1)));
}

const words = (s: Session) =>
  s.frames
    .flatMap((f) => f.tokens)
    .filter((t) => t.is_final && !t.text.startsWith('<'))
    .map((t) => t.text)
    .join('')
    .trim();
const nonFinalWhileStreaming = (s: Session) =>
  s.frames
    .slice(0, s.whileStreaming)
    .flatMap((f) => f.tokens)
    .filter((t) => !t.is_final && !t.text.startsWith('<'));

describe('real-time containers with audio_format auto, at real-time pace', () => {
  let s: Parlance;
  let wav: string;
  let audioMs: number;
  let pcm: Session;

  beforeAll(async () => {
    // Final tokens always from the second pass (a loaded machine could otherwise leave the streaming decoder's words):
    // the words are compared here, not the timing. The model is loaded before the server listens, so the first session
    // (pcm's) does not wait for it while its audio streams in.
    s = await startParlance({ env: { PARLANCE_REALTIME_SECOND_PASS_WAIT_MS: '60000', PARLANCE_STT_PRELOAD: 'true' } });
    wav = await makeSpeech(path.join(work, 'speech.wav'), SPEECH, { padSeconds: 2 });
    const { stdout: raw } = await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', wav, '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], {
      encoding: 'buffer',
      maxBuffer: 1 << 26,
    });
    audioMs = raw.length / 32;
    const n = Math.ceil(audioMs / PIECE_MS);
    pcm = await stream(
      s,
      { audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 },
      Array.from({ length: n }, (_, k) => raw.subarray(k * PIECE_MS * 32, (k + 1) * PIECE_MS * 32)),
    );
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('pcm_s16le, the reference: non-final tokens while streaming, the sentences in its final words', () => {
    expect(nonFinalWhileStreaming(pcm).length).toBeGreaterThan(0);
    expect(wordErrorRate(SPEECH, words(pcm)).wer, words(pcm)).toBeLessThan(0.5);
  });

  it.each(CONTAINERS)(
    '%s: non-final tokens while streaming, the whole length decoded, the final words of pcm',
    async (name, args) => {
      const file = path.join(work, `speech-${name}`);
      await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', wav, ...args, '-y', file]);
      const bytes = readFileSync(file);
      const session = await stream(s, { audio_format: 'auto' }, await realTimePieces(file, bytes, Math.ceil(audioMs / PIECE_MS)));
      expect(
        session.frames.every((f) => !f.error_type),
        JSON.stringify(session.frames.find((f) => f.error_type)),
      ).toBe(true);
      expect(nonFinalWhileStreaming(session).length).toBeGreaterThan(0);
      // All of the audio went through the decoder (codec padding and priming trimmed, within a packet or two).
      expect(Math.abs(session.frames.at(-1)!.total_audio_proc_ms! - audioMs)).toBeLessThan(150);
      // A lossy codec may change a word or two of what pocketsphinx hears, not the sentences.
      const text = words(session);
      expect(wordErrorRate(words(pcm), text).wer, `${text} / pcm: ${words(pcm)}`).toBeLessThanOrEqual(1 / 3);
      expect(wordErrorRate(SPEECH, text).wer, text).toBeLessThan(0.5);
    },
    60_000,
  );
});
