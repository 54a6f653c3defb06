// Real-time transcription: the service behind /transcribe-websocket (and the OpenAI realtime adapter), free of
// WebSocket types. It admits sessions (the shared admission step: authentication, permission, rate limit, billing,
// concurrency slot), keeps the live ones for a graceful shutdown, and hands each its dependencies and options.
// A session's state machine is RealtimeSession (session.ts).
import type { Logger } from 'pino';
import type { SecondPassReport } from '../../engines/stt/interface.js';
import { LiveSet, type LiveSurface } from '../../lib/live-set.js';
import { shuttingDownError } from '../../wire/api-error.js';
import type { SttServerFrame } from '../../wire/stt-frames.js';
import type { AuthService } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import { Admission } from '../limits/admission.js';
import type { ConcurrencyLimits } from '../limits/concurrency.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { EnrolledSpeaker } from '../speakers/service.js';
import type { UsageMeter } from '../usage/service.js';
import type { RealtimeOptions } from './options.js';
import { RealtimeSession } from './session.js';

export type { RealtimeOptions } from './options.js';
export { RealtimeSession } from './session.js';

/** What sessions report for monitoring (the node's metrics). */
export interface RealtimeObserver {
  /** A final token went out this long after its audio arrived (a client streaming in real time), seconds. */
  finalTokenLag(seconds: number): void;
  /** How a finished session's utterances got their final tokens. */
  secondPass(report: SecondPassReport): void;
}

export interface RealtimeDeps {
  auth: AuthService;
  models: ModelCatalog;
  rateLimits: RateLimits;
  billing: BillingGuard;
  /** Concurrent-session caps per organization and project (shared with TTS, across nodes with Redis). */
  concurrency: ConcurrencyLimits;
  /** Meters each session (audio seconds streamed) when it ends. */
  meter?: UsageMeter;
  /** Resolves a session's `speakers` (404 speaker_not_found, 409 speaker_not_ready). */
  speakers?: { forRecognition(projectId: string, ids: readonly string[]): Promise<EnrolledSpeaker[]> };
  log: Logger;
  observe?: RealtimeObserver;
  errorReferenceUrl(): string;
}

export interface SessionIO {
  send(frame: SttServerFrame): void;
  /** Close the connection normally (1000) after the frames sent so far. */
  close(): void;
}

export class RealtimeService implements LiveSurface {
  readonly admission: Admission;
  private readonly live = new LiveSet<RealtimeSession>();
  private draining = false;

  constructor(
    readonly deps: RealtimeDeps,
    readonly opts: RealtimeOptions,
  ) {
    this.admission = new Admission(deps, { temporaryUsage: 'transcribe_websocket', permission: 'stt_rt', rate: 'transcribe_websocket', slot: 'stt' });
  }

  /** A new connection: the session waits for its configuration message. */
  open(io: SessionIO, requestId: string, handshakeKey?: string): RealtimeSession {
    const s = new RealtimeSession(this, io, requestId, handshakeKey);
    this.live.add(s);
    if (this.draining) s.fail(shuttingDownError('no new real-time sessions are accepted'));
    return s;
  }

  /** Sessions currently open (any state), for stats and tests. */
  get openSessions(): number {
    return this.live.size;
  }

  /** Graceful shutdown: every live session ends as if its client had sent the end frame (final tokens, then finished). */
  drain(): Promise<void> {
    this.draining = true;
    for (const s of this.live) s.drain();
    return this.live.empty();
  }

  abortAll(): void {
    for (const s of this.live) s.fail(shuttingDownError('the session could not be finished in time'));
  }

  /** @internal */
  forget(s: RealtimeSession): void {
    this.live.delete(s);
  }
}
