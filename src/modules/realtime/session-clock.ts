// The timers of one real-time session: request_timeout (no audio or keepalive for N seconds while starting or
// streaming; the clock starts at the configuration message), the fixed session cap (max_duration_reached) and the
// temporary key's max_session_duration (temp_api_key_session_expired).
import { ApiError } from '../../wire/api-error.js';
import { type AuthContext, sessionDeadline } from '../auth/service.js';

export interface ClockHooks {
  /** The session is starting or streaming (the idle clock runs only then). */
  running(): 'starting' | 'streaming' | false;
  /** Messages queued while the recognizer is being assigned. */
  queued(): number;
  fail(err: ApiError): void;
}

export class SessionClock {
  private lastActivity = 0;
  /** Finalizations the server is working on: the client is waiting for us, not idle (request_timeout). */
  private finalizing = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private capTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: { audioTimeoutMs: number; maxDurationMs: number },
    private readonly hooks: ClockHooks,
  ) {}

  /** The client (or the engine, on its behalf) did something: the request_timeout clock restarts. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  armIdleTimer(): void {
    const timeout = this.opts.audioTimeoutMs;
    const check = () => {
      const running = this.hooks.running();
      if (!running) return;
      // Audio that arrived while the recognizer is still being assigned is the server's delay, not the client's.
      if (running === 'starting' && this.hooks.queued()) this.touch();
      // Neither is a finalization still being decoded (second passes take a moment on a busy machine).
      if (this.finalizing > 0) this.touch();
      const idle = Date.now() - this.lastActivity;
      if (idle >= timeout)
        return this.hooks.fail(new ApiError('request_timeout', `Request timeout: no audio received for ${Math.round(timeout / 100) / 10} seconds.`));
      this.idleTimer = setTimeout(check, timeout - idle);
    };
    this.idleTimer = setTimeout(check, timeout);
  }

  clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** The session cap, or the temporary key's max_session_duration when that comes first. */
  armCapTimer(ctx: Pick<AuthContext, 'temporary'>, startedAt: number): void {
    const { maxDurationMs } = this.opts;
    const tempDeadline = sessionDeadline(ctx, new Date(startedAt));
    const tempMs = tempDeadline ? tempDeadline.getTime() - startedAt : Infinity;
    if (tempMs < maxDurationMs) {
      this.capTimer = setTimeout(
        () =>
          this.hooks.fail(
            new ApiError(
              'temp_api_key_session_expired',
              `Session exceeded the temporary API key's max_session_duration_seconds (${ctx.temporary!.maxSessionDurationSeconds}).`,
            ),
          ),
        Math.max(0, tempMs),
      );
    } else {
      this.capTimer = setTimeout(
        () => this.hooks.fail(new ApiError('max_duration_reached', `Maximum real-time stream duration reached (${Math.round(maxDurationMs / 1000)} seconds).`)),
        maxDurationMs,
      );
    }
  }

  /** Run a finalization; the request_timeout clock stands still while it runs. */
  async whileFinalizing(step: () => Promise<void>): Promise<void> {
    this.finalizing++;
    try {
      await step();
    } finally {
      this.finalizing--;
      this.touch();
    }
  }

  stop(): void {
    this.clearIdleTimer();
    if (this.capTimer) clearTimeout(this.capTimer);
  }
}
