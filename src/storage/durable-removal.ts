// Removal of blobs that survives the store being down. A record (file, voice, sample, transcription audio) is deleted
// from the database first; its bytes must follow even if the store refuses right then (an S3 outage). So every
// removal is written to `pending_blob_deletions` before it is tried, and the row is dropped only once the store
// accepts it; a sweeper on each job-running node retries what is left, with backoff, until nothing is orphaned.
import type { Kysely } from 'kysely';
import type { Readable } from 'node:stream';
import type { BlobStore, ReadRange } from './blob-store.js';
import type { Database } from './schema.js';

export interface DurableRemovalOptions {
  /** First retry after this long; each later one waits twice as long as the one before. */
  retryBaseMs: number;
  /** Longest wait between two retries of one key. */
  retryMaxMs: number;
  /** How often the sweeper looks for removals that are due (rows written by API-only nodes included). */
  sweepIntervalMs: number;
  /** Removals tried per sweep. */
  batchSize: number;
  /** A key being tried is not taken by another sweeper for this long (a try that hangs, a node that dies). */
  claimMs: number;
}

export const durableRemovalDefaults: DurableRemovalOptions = {
  retryBaseMs: 1000,
  retryMaxMs: 5 * 60_000,
  sweepIntervalMs: 2000,
  batchSize: 50,
  claimMs: 5 * 60_000,
};

export type RemovalLog = (msg: string, detail: Record<string, unknown>) => void;

/** A short reason for the row and the log, without the SDK's request detail. */
function reasonOf(err: unknown): string {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  return (status ? `HTTP ${status}` : (e.code ?? e.name ?? 'error')).slice(0, 200);
}

/** The blob store with removals made durable; everything else goes straight to the store underneath. */
export class DurablyRemovingBlobStore implements BlobStore {
  private readonly opts: DurableRemovalOptions;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: BlobStore,
    private readonly db: Kysely<Database>,
    private readonly log: RemovalLog,
    opts: Partial<DurableRemovalOptions> = {},
  ) {
    this.opts = { ...durableRemovalDefaults, ...opts };
  }

  init(): Promise<void> {
    return this.store.init();
  }
  createTemp() {
    return this.store.createTemp();
  }
  tempPath(): string {
    return this.store.tempPath();
  }
  discardTemp(tempPath: string): Promise<void> {
    return this.store.discardTemp(tempPath);
  }
  exists(key: string): Promise<boolean> {
    return this.store.exists(key);
  }
  withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T> {
    return this.store.withLocalFile(key, use);
  }
  openRead(key: string, range?: ReadRange): Promise<Readable> {
    return this.store.openRead(key, range);
  }

  // A key written again (a retried download stores under the same key) must not be removed by an older request.
  async commit(tempPath: string, key: string): Promise<void> {
    await this.forgetBeforeWrite(key);
    await this.store.commit(tempPath, key);
  }

  async linkOrCopy(srcKey: string, destKey: string): Promise<void> {
    await this.forgetBeforeWrite(destKey);
    await this.store.linkOrCopy(srcKey, destKey);
  }

  // Best effort: with the database down the writer's own next query fails and says so, as it did without this step.
  private async forgetBeforeWrite(key: string): Promise<void> {
    await this.forget(key).catch((err: unknown) => this.log('could not clear an earlier removal of a key being written', { blob_key: key, err }));
  }

  /**
   * Never fails because of the store: the removal is recorded first, then tried once now; if the store refuses,
   * the sweeper retries it later. Only with both the database and the store failing does it throw.
   */
  async remove(key: string): Promise<void> {
    const now = Date.now();
    const recorded = await this.db
      .insertInto('pending_blob_deletions')
      .values({ blob_key: key, attempts: 0, next_attempt_at: iso(now + this.opts.claimMs), last_error: null, created_at: iso(now) })
      .onConflict((oc) => oc.column('blob_key').doUpdateSet({ next_attempt_at: iso(now + this.opts.claimMs) }))
      .execute()
      .then(
        () => true,
        () => false,
      );
    // The database is down (an upload cleaning up after its row was refused): remove straight away, as the only
    // chance; if the store refuses too, the caller hears of it.
    if (!recorded) return this.store.remove(key);
    await this.attempt(key, 0);
  }

  /** Removals still waiting for the store (for tests and operators). */
  async pending(): Promise<{ blob_key: string; attempts: number; next_attempt_at: string; last_error: string | null }[]> {
    return this.db.selectFrom('pending_blob_deletions').select(['blob_key', 'attempts', 'next_attempt_at', 'last_error']).orderBy('created_at').execute();
  }

  /** Try the removals that are due now; each one is claimed first so two sweepers do not try the same key. */
  async sweep(): Promise<void> {
    const now = Date.now();
    const due = await this.db
      .selectFrom('pending_blob_deletions')
      .select(['blob_key', 'attempts', 'next_attempt_at'])
      .where('next_attempt_at', '<=', iso(now))
      .orderBy('next_attempt_at')
      .limit(this.opts.batchSize)
      .execute();
    for (const row of due) {
      const claimed = await this.db
        .updateTable('pending_blob_deletions')
        .set({ next_attempt_at: iso(now + this.opts.claimMs) })
        .where('blob_key', '=', row.blob_key)
        .where('next_attempt_at', '=', row.next_attempt_at)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 1) await this.attempt(row.blob_key, row.attempts);
    }
  }

  /** Sweep every `sweepIntervalMs` until stopSweeper(); a failed sweep (database down) is logged and tried again. */
  startSweeper(): void {
    if (this.timer) return;
    // A database outage fails every sweep: say so once, not every interval.
    let failing = false;
    const tick = () => {
      this.sweeping = this.sweep()
        .then(
          () => {
            failing = false;
          },
          (err: unknown) => {
            if (!failing) this.log('blob removal sweep failed; retrying quietly until one succeeds', { err });
            failing = true;
          },
        )
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.opts.sweepIntervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  /** Stops the sweeper and waits for a sweep under way (before the database closes). */
  async stopSweeper(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private async attempt(key: string, attemptsBefore: number): Promise<void> {
    try {
      await this.store.remove(key);
    } catch (err) {
      const attempts = attemptsBefore + 1;
      const waitMs = this.backoff(attempts);
      this.log('blob store refused a removal; it will be retried', { blob_key: key, attempts, retry_in_ms: waitMs, reason: reasonOf(err) });
      await this.db
        .updateTable('pending_blob_deletions')
        .set({ attempts, next_attempt_at: iso(Date.now() + waitMs), last_error: reasonOf(err) })
        .where('blob_key', '=', key)
        .execute();
      return;
    }
    // The bytes are gone; a row left behind only makes a later sweep remove nothing again.
    await this.forget(key).catch((err: unknown) => this.log('could not clear a done blob removal', { blob_key: key, err }));
  }

  private backoff(attempts: number): number {
    const exp = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
    // Jitter (up to a fifth) so the nodes of a cluster do not retry in step after an outage.
    return Math.round(exp * (1 - Math.random() * 0.2));
  }

  private async forget(key: string): Promise<void> {
    await this.db.deleteFrom('pending_blob_deletions').where('blob_key', '=', key).execute();
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
