// The shared parts of one process that module factories (src/modules/*/module.ts) build on: settings, storage, the
// job queue, logging and metrics, and what this node's role runs. Made once by createContext (create-context.ts).
import type { Logger } from 'pino';
import type { Settings } from './config/settings.js';
import type { Metrics } from './http/metrics.js';
import type { JobLog, JobQueue } from './jobs/queue.js';
import type { CursorCodec } from './lib/cursor.js';
import type { DurablyRemovingBlobStore } from './storage/durable-removal.js';
import type { Db } from './storage/database.js';

export interface ProcessParts {
  settings: Settings;
  db: Db;
  /** Every module removes blobs through this: a removal the store refuses is kept and retried. */
  blobs: DurablyRemovingBlobStore;
  cursors: CursorCodec;
  queue: JobQueue;
  log: Logger;
  jobLog: JobLog;
  metrics: Metrics;
  /** This node runs jobs (a worker or a combined node): its modules register their job handlers. */
  runsJobs: boolean;
}
