// Real-time transcription: the service behind /transcribe-websocket and OpenAI Realtime, free of protocols. It admits sessions (the shared admission step: authentication, permission, rate limit, billing,
// concurrency slot), keeps the live ones for a graceful shutdown, and hands each its dependencies and options.
// A session's state machine is RealtimeSession (session.ts).
import { LiveSet, type LiveSurface } from '../../lib/live-set.js';
import { shuttingDownError } from '../../wire/api-error.js';
import { Admission } from '../limits/admission.js';
import type { RealtimeOptions } from './options.js';
import { RealtimeSession } from './session.js';
import type { LiveSink } from './live-events.js';
import type { RealtimeDeps, SessionHost } from './session-host.js';

export type { RealtimeOptions } from './options.js';
export { RealtimeSession } from './session.js';

export class RealtimeService implements LiveSurface, SessionHost<RealtimeSession> {
  readonly admission: Admission;
  private readonly live = new LiveSet<RealtimeSession>();
  private draining = false;

  constructor(
    readonly deps: RealtimeDeps,
    readonly opts: RealtimeOptions,
  ) {
    this.admission = new Admission(deps, { temporaryUsage: 'transcribe_websocket', permission: 'stt_rt', rate: 'transcribe_websocket', slot: 'stt' });
  }

  /** A new session, rendered by `sink`: it waits for its start. */
  open(sink: LiveSink, requestId: string): RealtimeSession {
    const s = new RealtimeSession(this, sink, requestId);
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
