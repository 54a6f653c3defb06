// Typed messages between the event loop and an offline recognizer's worker thread (offline-worker.ts).
import type { OfflineRecognizerConfig } from './offline-config.js';
import type { OfflineResult } from './words.js';

export type OfflineRequest = { id: number; op: 'load'; config: OfflineRecognizerConfig } | { id: number; op: 'decode'; samples: Int16Array; hotwords?: string };

export type OfflineReply = { ok: true } | { result: OfflineResult };
