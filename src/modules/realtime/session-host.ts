// What a real-time session sees of the service that opened it (service.ts): the service's dependencies and options,
// its admission step, and its set of live sessions to leave. Declared apart from both so that session.ts need not
// import service.ts, which builds sessions.
import type { Logger } from 'pino';
import type { SecondPassReport } from '../../engines/stt/interface.js';
import type { AuthService } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import type { Admission } from '../limits/admission.js';
import type { ConcurrencyLimits } from '../limits/concurrency.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { ModelCatalog } from '../models/catalog.js';
import type { EnrolledSpeaker } from '../speakers/service.js';
import type { UsageMeter } from '../usage/service.js';
import type { RealtimeOptions } from './options.js';

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

/** The service a session belongs to (`Session`: the session's own type, so that this file need not import it). */
export interface SessionHost<Session> {
  readonly deps: RealtimeDeps;
  readonly opts: RealtimeOptions;
  readonly admission: Admission;
  /** The session has closed: it leaves the live set. */
  forget(session: Session): void;
}
