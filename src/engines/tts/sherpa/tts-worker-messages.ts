// Typed messages between the event loop and one TTS model's worker thread (tts-worker.ts).
import type { OfflineTtsConfig } from './config.js';
import type { SentenceAudio, SentenceRequest } from './generate.js';

export type TtsWorkerRequest = { id: number; op: 'load'; config: OfflineTtsConfig } | ({ id: number; op: 'generate' } & SentenceRequest);

export type TtsWorkerReply = { sampleRate: number; numSpeakers: number } | { audio: SentenceAudio };
