// Fair sharing of a fixed set of decoders between requests, one job (an audio segment) at a time.
//
// Each request has a FIFO of jobs. Whenever a decoder is free, the next job comes from the request that
//   0. has the highest priority (a live session's second pass, priority 1, goes before file segments, priority 0),
//      and among those
//   1. has the fewest jobs on decoders right now (a request with nothing running goes before one that has a job
//      running), and among those
//   2. was served least recently (a request never served yet goes first, then strict rotation).
// A request never has more than `perRequestLimit` jobs running. So a short request that arrives while long ones
// keep every decoder busy gets the next decoder that frees up: it waits for at most one job per decoder, whatever
// the length of the others. The policy is work-conserving: a lone request may use every decoder.
//
// Queue position: while a request has never been served, `position` is its rank among the requests waiting for a
// decoder (1 = the next to get one); it becomes 0 when its first job starts. The owner publishes changes through
// `onPosition` after each scheduling round (publishPositions), so a request that gets a free decoder at once only
// ever sees 0.

export interface SchedulerRequestStats {
  id: number;
  /** Jobs waiting for a decoder. */
  queued: number;
  /** Jobs on decoders now. */
  running: number;
  /** Jobs finished. */
  done: number;
  /** 0 once a job of this request has started; otherwise its rank among waiting requests (0 when it has no job yet). */
  position: number;
}

export interface SchedulerStats {
  /** Requests registered and not yet removed. */
  requests: number;
  /** Requests with at least one job running. */
  active: number;
  /** Requests with queued jobs and nothing running. */
  waiting: number;
  /** Jobs waiting for a decoder, all requests. */
  queued: number;
  running: number;
  perRequest: SchedulerRequestStats[];
}

export class SchedulerRequest<J> {
  readonly jobs: J[] = [];
  running = 0;
  done = 0;
  /** Scheduling round of the last dispatch; -1 = never served. */
  lastServed = -1;
  position = 0;
  private published: number | undefined;

  constructor(
    readonly id: number,
    readonly arrival: number,
    private readonly onPosition?: (position: number) => void,
    /** Higher goes first, before fairness among equals. */
    readonly priority = 0,
  ) {}

  /** @internal */
  publish(): void {
    if (this.published === this.position) return;
    if (this.published === undefined && this.position === 0 && this.lastServed < 0) return; // no job yet
    this.published = this.position;
    try {
      this.onPosition?.(this.position);
    } catch {
      // A reporting callback must not break scheduling.
    }
  }
}

export class FairScheduler<J> {
  private readonly requests = new Set<SchedulerRequest<J>>();
  private round = 0;
  private nextId = 1;

  constructor(readonly perRequestLimit = Infinity) {
    if (!(perRequestLimit >= 1)) throw new RangeError(`perRequestLimit must be at least 1, got ${perRequestLimit}`);
  }

  register(onPosition?: (position: number) => void, priority = 0): SchedulerRequest<J> {
    const request = new SchedulerRequest<J>(this.nextId++, this.round++, onPosition, priority);
    this.requests.add(request);
    return request;
  }

  enqueue(request: SchedulerRequest<J>, job: J): void {
    if (!this.requests.has(request)) throw new Error('request is not registered');
    request.jobs.push(job);
  }

  /** Take the next job to run (the caller has a free decoder), or undefined when nothing is eligible. */
  next(): { request: SchedulerRequest<J>; job: J } | undefined {
    const request = this.order()[0];
    if (!request) return undefined;
    const job = request.jobs.shift()!;
    request.running++;
    request.lastServed = this.round++;
    request.position = 0;
    return { request, job };
  }

  /** A job of `request` finished (or failed) and freed its decoder. */
  finished(request: SchedulerRequest<J>): void {
    request.running = Math.max(0, request.running - 1);
    request.done++;
  }

  /** Forget a request; returns its jobs that never ran. */
  remove(request: SchedulerRequest<J>): J[] {
    this.requests.delete(request);
    return request.jobs.splice(0);
  }

  /** Recompute queue positions and tell requests whose position changed. */
  publishPositions(): void {
    let rank = 0;
    for (const r of this.order(true)) if (r.lastServed < 0) r.position = ++rank;
    for (const r of this.requests) r.publish();
  }

  stats(): SchedulerStats {
    const perRequest = [...this.requests].map((r) => ({ id: r.id, queued: r.jobs.length, running: r.running, done: r.done, position: r.position }));
    return {
      requests: perRequest.length,
      active: perRequest.filter((r) => r.running > 0).length,
      waiting: perRequest.filter((r) => r.running === 0 && r.queued > 0).length,
      queued: perRequest.reduce((n, r) => n + r.queued, 0),
      running: perRequest.reduce((n, r) => n + r.running, 0),
      perRequest,
    };
  }

  /** Requests with a job to hand out, best first (ignoring the per-request limit when `all`). */
  private order(all = false): SchedulerRequest<J>[] {
    const eligible = [...this.requests].filter((r) => r.jobs.length > 0 && (all || r.running < this.perRequestLimit));
    return eligible.sort((a, b) => b.priority - a.priority || a.running - b.running || a.lastServed - b.lastServed || a.arrival - b.arrival);
  }
}
