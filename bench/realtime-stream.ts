// One real-time session of the realtime suite: a speaker's turn (flite sentence over a microphone's noise floor),
// streamed to /transcribe-websocket at real-time pace, one piece of 20 ms of audio per message on an absolute
// schedule, with the latencies a client sees:
//   - first non-final token after the piece where speech starts, finalization after the piece where speech ends;
//   - token lag: for every token of every frame, arrival − (send time of the first audio byte + token.end_ms).
//     Final tokens are sent once. Non-final tokens are revised from frame to frame, so they are counted two ways:
//     new words, the first appearance of a non-final token that reaches past all non-final audio shown before and is
//     not a re-timing of a word already shown (same text, overlapping span): what a reader waits for; and every
//     revision, the first appearance of each distinct text@start-end (as the server keys them), which also counts
//     re-timed and corrected earlier words: with the second pass on, a closed utterance's streaming words are re-sent
//     as non-final, re-timed by the streaming decoder's final search, while its second pass runs.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { HARVARD_SENTENCES } from './lib.js';
import { speechBounds } from '../test/real-speech.js';

const execFileP = promisify(execFile);
export const CHUNK_MS = 20;
/** 16 kHz mono s16le. */
export const BYTES_PER_MS = 32;
/** The engine's default pause that ends an utterance (`max_endpoint_delay_ms`). */
export const ENDPOINT_MS = 600;
/** Peak amplitude of the clips' background noise: -60 dBFS RMS. */
const NOISE_AMPLITUDE = 0.005;

export interface Clip {
  /** 16 kHz mono s16le. */
  pcm: Buffer;
  speechStartMs: number;
  speechEndMs: number;
}

/** What goes over the socket: the format part of the configuration and the audio, piece k sent at k × 20 ms (an
 * empty piece is skipped: an empty message ends the stream). */
export interface Payload {
  config: Record<string, unknown>;
  pieces: Buffer[];
}

export interface StreamResult {
  firstNonFinalMs: number | null;
  finalizeMs: number | null;
  /** From the empty end frame to the finished frame. */
  finishMs: number;
  /** Token lags (ms): non-final new words, every distinct non-final token, final tokens as sent. */
  nonFinalLagMs: number[];
  nonFinalRevisionLagMs: number[];
  finalLagMs: number[];
  /** Final tokens measured from their utterance's endpoint: its last word's end + the 600 ms pause. */
  finalAfterEndpointMs: number[];
  error?: string;
}

interface WireFrame {
  tokens: { text: string; is_final: boolean; start_ms?: number; end_ms?: number }[];
  finished?: boolean;
  error_type?: string;
}

/**
 * One sentence as a speaker's turn: 1 s before it, 2 s after it, over a microphone's noise floor (pink noise,
 * -60 dBFS RMS) rather than digital silence, which no live source sends and which a decoder gets through unrealistically
 * cheaply.
 */
export async function makeClip(dir: string, i: number): Promise<Clip> {
  const wav = path.join(dir, `s${i}.wav`);
  await execFileP('flite', ['-voice', 'slt', '-t', HARVARD_SENTENCES[i % HARVARD_SENTENCES.length]!, '-o', wav]);
  const { stdout } = await execFileP(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-i',
      wav,
      '-f',
      'lavfi',
      '-i',
      `anoisesrc=color=pink:amplitude=${NOISE_AMPLITUDE}:sample_rate=16000:seed=${i + 1}`,
      '-filter_complex',
      '[0]aresample=16000,adelay=1000,apad=pad_dur=2[s];[s][1]amix=inputs=2:duration=first:normalize=0',
      '-ac',
      '1',
      '-f',
      's16le',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 2 ** 20 },
  );
  const pcm = stdout;
  const { start, end } = speechBounds(pcm);
  return { pcm, speechStartMs: start, speechEndMs: end };
}

export const clipMs = (clip: Clip): number => clip.pcm.length / BYTES_PER_MS;

/** The clip as pcm_s16le in 640-byte (20 ms) pieces. */
export function pcmPayload(clip: Clip): Payload {
  const pieces: Buffer[] = [];
  const chunkBytes = CHUNK_MS * BYTES_PER_MS;
  for (let off = 0; off < clip.pcm.length; off += chunkBytes) pieces.push(clip.pcm.subarray(off, off + chunkBytes));
  return { config: { audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }, pieces };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One session at real-time pace; latencies measured against the send time of the relevant piece. */
export async function stream(wsUrl: string, apiKey: string, clip: Clip, payload: Payload = pcmPayload(clip)): Promise<StreamResult> {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let t0: number | undefined;
  let speechStartSentAt: number | undefined;
  let speechEndSentAt: number | undefined;
  let firstNonFinalMs: number | null = null;
  let finalizeMs: number | null = null;
  let error: string | undefined;
  const seen = new Set<string>();
  const nonFinalLagMs: number[] = [];
  const nonFinalRevisionLagMs: number[] = [];
  /** End of the furthest non-final token shown so far, and every non-final word shown. */
  let frontier = -Infinity;
  const shown: { text: string; start: number; end: number }[] = [];
  const finalLagMs: number[] = [];
  const finalAfterEndpointMs: number[] = [];
  const finished = new Promise<number>((resolve) => {
    ws.on('message', (data) => {
      const now = performance.now();
      const f = JSON.parse((data as Buffer).toString('utf8')) as WireFrame;
      if (f.error_type) error = f.error_type;
      if (firstNonFinalMs === null && speechStartSentAt !== undefined && f.tokens.some((t) => !t.is_final)) firstNonFinalMs = now - speechStartSentAt;
      if (
        finalizeMs === null &&
        speechEndSentAt !== undefined &&
        f.tokens.some((t) => t.is_final && t.end_ms !== undefined && t.end_ms >= clip.speechEndMs - 300)
      )
        finalizeMs = now - speechEndSentAt;
      if (t0 !== undefined) {
        // Markers (<end>, <fin>) have no timing. A frame's final words are one utterance's.
        const timed = f.tokens.filter((t) => t.end_ms !== undefined);
        const utteranceEnd = Math.max(...timed.filter((t) => t.is_final).map((t) => t.end_ms!));
        const shownUpTo = frontier;
        for (const t of timed) {
          const lag = now - (t0 + t.end_ms!);
          if (t.is_final) {
            finalLagMs.push(lag);
            finalAfterEndpointMs.push(now - (t0 + utteranceEnd + ENDPOINT_MS));
            continue;
          }
          const word = { text: t.text.trim().toLowerCase(), start: t.start_ms ?? t.end_ms!, end: t.end_ms! };
          const key = `${word.text}@${word.start}-${word.end}`;
          if (seen.has(key)) continue;
          seen.add(key);
          nonFinalRevisionLagMs.push(lag);
          const retimed = shown.some((w) => w.text === word.text && w.start < word.end && word.start < w.end);
          if (word.end > shownUpTo && !retimed) nonFinalLagMs.push(lag);
          shown.push(word);
          frontier = Math.max(frontier, word.end);
        }
      }
      if (f.finished || f.error_type) resolve(now);
    });
    ws.on('close', () => resolve(performance.now()));
  });
  ws.send(JSON.stringify({ api_key: apiKey, model: 'parlance-rt-en-v1', ...payload.config }));
  const durationMs = clipMs(clip);
  for (let n = 0; n < payload.pieces.length; n++) {
    // Absolute schedule: no drift from timer lateness.
    if (t0 !== undefined) {
      const wait = t0 + n * CHUNK_MS - performance.now();
      if (wait > 0) await sleep(wait);
    } else t0 = performance.now();
    if (payload.pieces[n]!.length) ws.send(payload.pieces[n]!);
    const sentMs = Math.min((n + 1) * CHUNK_MS, durationMs);
    if (speechStartSentAt === undefined && sentMs > clip.speechStartMs) speechStartSentAt = performance.now();
    if (speechEndSentAt === undefined && sentMs >= clip.speechEndMs) speechEndSentAt = performance.now();
  }
  const endSentAt = performance.now();
  ws.send('');
  const finishedAt = await finished;
  ws.close();
  return {
    firstNonFinalMs,
    finalizeMs,
    finishMs: finishedAt - endSentAt,
    nonFinalLagMs,
    nonFinalRevisionLagMs,
    finalLagMs,
    finalAfterEndpointMs,
    ...(error ? { error } : {}),
  };
}
