// The conversation the live suite streams: held-out real recordings (test/real-speech.ts; no setting was chosen on
// them), or the tuning half's with `--set=tune` (the one to choose settings on), one after another, a second of a microphone's noise floor before each and after the last. Each clip starts on
// a 20 ms piece boundary, so the client can send `finalize` right after the piece holding the clip's last sample.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { normalizeWords } from '../src/engines/stt/wer.js';
import { type RealClip, speechBounds } from '../test/real-speech.js';
import { noiseFloor, pcm16k } from './lib.js';
import { BYTES_PER_MS, CHUNK_MS } from './realtime-stream.js';

const execFileP = promisify(execFile);
/** Noise floor between two clips (and before the first, after the last). */
export const GAP_MS = 1000;

export interface Turn {
  clip: RealClip;
  /** Reference words after the scoring normaliser. */
  words: number;
  /** The clip's 16 kHz mono WAV (the same samples as streamed), for the async upload. */
  wav: string;
  /** Where the clip's audio lies in the conversation, ms from its first sample: [startMs, endMs). */
  startMs: number;
  endMs: number;
  /** Its speech (first and last 10 ms with a peak above -30 dBFS), in conversation ms. */
  speechStartMs: number;
  speechEndMs: number;
}

export interface Conversation {
  /** 16 kHz mono s16le. */
  pcm: Buffer;
  turns: Turn[];
}

/** Decode the clips (ffmpeg, 16 kHz mono) and lay them out; the WAVs go to `dir`. */
export async function buildConversation(clips: RealClip[], dir: string): Promise<Conversation> {
  const audio = await Promise.all(
    clips.map(async (clip, i) => {
      const wav = path.join(dir, `${i}-${path.basename(clip.file)}`);
      // The same ffmpeg conversion as pcm16k, so the async upload and the stream carry the same samples.
      await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', clip.file, '-ac', '1', '-ar', '16000', '-y', wav]);
      return { wav, pcm: await pcm16k(clip.file) };
    }),
  );
  const parts: Buffer[] = [];
  let bytes = 0;
  const turns: Turn[] = [];
  const pieceBytes = CHUNK_MS * BYTES_PER_MS;
  const gap = (seed: number) => {
    // Pad to the next piece boundary, then the gap.
    const pad = (pieceBytes - (bytes % pieceBytes)) % pieceBytes;
    const noise = noiseFloor((pad + GAP_MS * BYTES_PER_MS) / BYTES_PER_MS, seed);
    parts.push(noise);
    bytes += noise.length;
  };
  clips.forEach((clip, i) => {
    gap(i + 1);
    const { wav, pcm } = audio[i]!;
    const startMs = bytes / BYTES_PER_MS;
    const speech = speechBounds(pcm);
    turns.push({
      clip,
      words: normalizeWords(clip.reference).length,
      wav,
      startMs,
      endMs: startMs + pcm.length / BYTES_PER_MS,
      speechStartMs: startMs + speech.start,
      speechEndMs: startMs + speech.end,
    });
    parts.push(pcm);
    bytes += pcm.length;
  });
  gap(clips.length + 1);
  return { pcm: Buffer.concat(parts), turns };
}
