// Typed messages between the event loop and the audio worker thread (audio-worker.ts). Each request carries an id;
// the reply carries the same id and either the result or an error message.
import type { VoiceProfile } from './features.js';
import type { RawOutputOptions } from './raw-output.js';
import type { VadBackend, VadFrame, VadStreamOptions } from './vad.js';

export type AudioRequest =
  | { id: number; op: 'profile'; pcm: Uint8Array }
  | { id: number; op: 'silence-bounds'; pcm: Uint8Array; rate: number }
  | { id: number; op: 'encoder-open'; stream: number; options: RawOutputOptions }
  | { id: number; op: 'encoder-push'; stream: number; pcm: Uint8Array }
  | { id: number; op: 'encoder-end'; stream: number }
  | { id: number; op: 'vad-load'; backend?: VadBackend; modelPath?: string }
  | { id: number; op: 'vad-open'; stream: number; modelKey: string; options: VadStreamOptions }
  | { id: number; op: 'vad-push'; stream: number; pcm: Uint8Array }
  | { id: number; op: 'vad-flush'; stream: number }
  | { id: number; op: 'vad-close'; stream: number };

export type AudioResult =
  | { profile: VoiceProfile }
  | { bounds: [number, number] }
  | { bytes: Uint8Array }
  | { ok: true }
  | { vad: { modelKey: string; backend: VadBackend; fallbackReason?: string; warning?: { msg: string; detail?: Record<string, unknown> } } }
  | { frames: VadFrame[] };
