// Typed messages between the event loop and the diarization worker threads (diarize-worker.ts): one file's PCM goes
// in piece by piece, its speaker turns come out at the end; a live stream's PCM goes in piece by piece, and each
// piece answers with what changed for labelling its tokens. Each request carries an id; the reply carries the same id
// and either the result or an error message (lib/worker-lane.ts). A measurement takes a file's PCM and gives back the
// voice print of each speaker's turns (or of all its speech), for recognising enrolled speakers.
import type { VadBackend } from '../../audio/vad.js';
import type { LiveEnrolled, SpeakerTurn, VoicePrint } from './interface.js';
import type { LiveNames } from './live-identifier.js';
import type { OfflineClusterOptions } from './offline-clusterer.js';
import type { OnlineClusterOptions, WindowChanges } from './online-clusterer.js';

export type DiarizeRequest =
  | { id: number; op: 'open'; job: number; vad: { backend?: VadBackend; modelPath?: string }; offline?: OfflineClusterOptions }
  | { id: number; op: 'push'; job: number; pcm: Uint8Array }
  | { id: number; op: 'end'; job: number }
  | { id: number; op: 'close'; job: number }
  | { id: number; op: 'live-open'; job: number; vad: { backend?: VadBackend; modelPath?: string }; online?: OnlineClusterOptions; enrolled?: LiveEnrolled }
  | { id: number; op: 'live-push'; job: number; pcm: Uint8Array }
  | { id: number; op: 'live-flush'; job: number }
  | { id: number; op: 'measure-open'; job: number; vad: { backend?: VadBackend; modelPath?: string }; turns?: SpeakerTurn[] }
  | { id: number; op: 'measure-push'; job: number; pcm: Uint8Array }
  | { id: number; op: 'measure-end'; job: number };

export type DiarizeResult =
  | { opened: true; warning?: { msg: string; detail?: Record<string, unknown> } }
  | { ok: true }
  | { turns: SpeakerTurn[] }
  | { changes: WindowChanges; names?: LiveNames }
  | { prints: [speaker: number, print: VoicePrint][] };
