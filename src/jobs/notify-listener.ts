// The PostgreSQL LISTEN side of the job queue's wake-ups: one connection that hears the NOTIFY of every committed
// job (payload: its kind) and reconnects after a failure; the queue polls in the meantime, so nothing is lost.
import pg from 'pg';
import type { JobLog } from './queue.js';

/** PostgreSQL NOTIFY channel: the payload is the job's kind. Sent inside the enqueuing transaction, so it is
 * delivered exactly when (and only if) the job commits. */
export const NOTIFY_CHANNEL = 'parlance_jobs';

export interface NotifyListenerHooks {
  /** The queue is started (a lost connection is re-opened only then). */
  active(): boolean;
  /** A job of `kind` committed (undefined: unknown kind); also called once listening, for what came before. */
  notified(kind: string | undefined): void;
  log: JobLog;
  errorText(err: unknown): string;
}

export class NotifyListener {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    /** Wait this long before reconnecting. */
    private readonly retryMs: number,
    private readonly hooks: NotifyListenerHooks,
  ) {}

  async listen(): Promise<void> {
    if (!this.hooks.active()) return;
    const client = new pg.Client({ connectionString: this.url, application_name: 'parlance-jobs-listen' });
    this.client = client;
    const reconnect = () => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      if (this.hooks.active() && !this.timer) {
        this.timer = setTimeout(() => {
          this.timer = null;
          void this.listen();
        }, this.retryMs);
        this.timer.unref();
      }
    };
    const failed = (err: unknown) => {
      this.hooks.log('warn', 'job queue LISTEN connection failed; polling until it is back', { err: this.hooks.errorText(err) });
      reconnect();
    };
    client.on('error', failed);
    client.on('end', reconnect);
    client.on('notification', (msg) => this.hooks.notified(msg.payload || undefined));
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      this.hooks.notified(undefined); // anything committed while we were not listening
    } catch (err) {
      failed(err);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
