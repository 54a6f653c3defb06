// Usage of one real-time session: while it streams, a periodic check ends it with the 402 frame once the audio so far
// exhausts the balance or a budget; when it ends (whatever ended it), one usage record of the audio the engine took in.
import type { Logger } from 'pino';
import { ApiError } from '../../wire/api-error.js';
import type { Caller } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import type { UsageMeter } from '../usage/service.js';

export interface UsageSubject {
  ctx: Caller;
  model: string;
  clientReferenceId: string | null;
}

export interface UsageHooks {
  closed(): boolean;
  /** Audio the engine has taken in so far. */
  audioMs(): number;
  fail(err: ApiError): void;
}

export class SessionUsage {
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly deps: { meter?: UsageMeter; billing: Pick<BillingGuard, 'assertCanStart'>; log: Logger },
    private readonly subject: UsageSubject,
    private readonly requestId: string,
    private readonly startedAt: number,
    private readonly hooks: UsageHooks,
  ) {}

  /** Start the periodic balance check (with a meter only). */
  arm(everyMs: number): void {
    const { meter, billing, log } = this.deps;
    if (!meter) return;
    const u = this.subject;
    const check = async () => {
      if (this.hooks.closed()) return;
      try {
        const pending = await meter.estimateNano(u.model, { inputAudioMs: this.hooks.audioMs() });
        if (pending > 0) await billing.assertCanStart(u.ctx.organizationId, u.ctx.projectId, pending);
      } catch (err) {
        if (err instanceof ApiError && err.status === 402) return this.hooks.fail(err);
        log.warn({ err, request_id: this.requestId }, 'real-time usage check failed');
      }
      if (!this.hooks.closed()) this.timer = setTimeout(() => void check(), everyMs);
    };
    this.timer = setTimeout(() => void check(), everyMs);
  }

  /** The session ended: stop checking and record its audio (once). */
  record(audioMs: number, outputTextTokens: number): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    const meter = this.deps.meter;
    if (!meter || audioMs <= 0) return;
    const u = this.subject;
    meter
      .meter({
        kind: 'stt_rt',
        actor: u.ctx,
        requestId: this.requestId,
        clientReferenceId: u.clientReferenceId,
        model: u.model,
        startTime: new Date(this.startedAt),
        inputAudioMs: audioMs,
        outputTextTokens,
      })
      .catch((err: unknown) => this.deps.log.error({ err, request_id: this.requestId }, 'real-time usage not recorded'));
  }
}
