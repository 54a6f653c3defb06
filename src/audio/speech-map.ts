// Where an audio holds speech, as the voice activity detector (vad.ts) decides it frame by frame, and how much of a
// stretch of it is not speech: what OpenAI's verbose_json calls a segment's `no_speech_prob`.
//
//   const map = await speechMapOf(decodeToPcm(file), vad.createStream());
//   nonSpeechShare(map, 1200, 3400)   // 0.18: 18 % of the audio from 1.2 s to 3.4 s is not speech
import { VAD_FRAME_SAMPLES, VAD_SAMPLE_RATE, type VadStream } from './vad.js';

/** Milliseconds of audio per VAD frame (32). */
export const FRAME_MS = (VAD_FRAME_SAMPLES / VAD_SAMPLE_RATE) * 1000;

/** The VAD's decision for each frame of an audio, in order: 1 speech, 0 not (FRAME_MS each, from the first sample). */
export interface SpeechMap {
  speech: Uint8Array;
  /** The audio's length, ms (the last frame may reach past it). */
  durationMs: number;
}

/** Feed 16 kHz mono s16le PCM through `vad` (a fresh stream) and keep each frame's decision. */
export async function speechMapOf(pcm: AsyncIterable<Uint8Array>, vad: VadStream): Promise<SpeechMap> {
  const decisions: number[] = [];
  for await (const chunk of pcm) for (const f of await vad.push(chunk)) decisions.push(f.speech ? 1 : 0);
  for (const f of await vad.flush()) decisions.push(f.speech ? 1 : 0);
  return { speech: Uint8Array.from(decisions), durationMs: (vad.samples / VAD_SAMPLE_RATE) * 1000 };
}

/**
 * The share of [startMs, endMs) that is not speech, each frame weighed by how much of it falls inside; audio past the
 * map's end counts as no speech. An empty stretch is judged by the frame it sits in. Rounded to 4 decimals.
 */
export function nonSpeechShare(map: SpeechMap, startMs: number, endMs: number): number {
  if (endMs <= startMs) {
    const i = Math.floor(Math.max(0, startMs) / FRAME_MS);
    return map.speech[i] === 1 ? 0 : 1;
  }
  let speech = 0;
  const first = Math.max(0, Math.floor(startMs / FRAME_MS));
  const last = Math.min(map.speech.length - 1, Math.ceil(endMs / FRAME_MS) - 1);
  for (let i = first; i <= last; i++) {
    if (map.speech[i] !== 1) continue;
    speech += Math.max(0, Math.min(endMs, (i + 1) * FRAME_MS) - Math.max(startMs, i * FRAME_MS));
  }
  return Math.round((1 - speech / (endMs - startMs)) * 1e4) / 1e4;
}
