// The pull job of a model over HTTP (POST /v1/admin/models), run by a node that runs jobs: the source fetched through
// the SSRF guard with a size cap and a time limit, its checksum checked, the model unpacked, checked and loaded once
// in a separate process (engines/model-dir/pull.ts), then served; on any failure the models directory is left as it
// was and the record ends `failed` with the error type. A pull whose record is removed (DELETE) stops and leaves
// nothing behind.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { type Downloaded, hashFile } from '../../engines/model-dir/download.js';
import { importFolder, PullError, pullModel, removeModel } from '../../engines/model-dir/pull.js';
import { scanModelsDir } from '../../engines/model-dir/scan.js';
import type { Settings } from '../../config/settings.js';
import type { Metrics } from '../../http/metrics.js';
import type { Job } from '../../jobs/queue.js';
import { DownloadBlockedError, DownloadFailedError, downloadToFile } from '../../lib/ssrf-fetch.js';
import type { ErrorType } from '../../wire/error-catalog.js';
import type { LiveModels } from './live.js';
import { installCheck } from './load-check.js';
import type { ModelRecords, ModelRow, ModelStatus } from './records.js';
import { folderSize, type Plan } from './views.js';

export const MODEL_PULL_JOB = 'model_pull';

/** Progress is written at most this often (ms). */
const PROGRESS_EVERY_MS = 250;

export interface PullJobOptions {
  settings: Pick<Settings, 'modelsDir' | 'allowPrivateHosts' | 'modelMaxBytes' | 'modelDownloadTimeoutSeconds'>;
  records: ModelRecords;
  live: LiveModels;
  metrics: Metrics;
  log: Logger;
}

export class PullJob {
  constructor(private readonly o: PullJobOptions) {}

  private get modelsDir(): string {
    return this.o.settings.modelsDir;
  }

  /**
   * The pull job of a model id. Its record may be removed while it runs (DELETE cancels the pull) or replaced by a new
   * pull of the id (which shares this job, one per id): the job then stops, leaving nothing behind, and pulls what the
   * record says now, if anything.
   */
  async run(job: Job<{ id: string }>): Promise<void> {
    for (;;) {
      const row = await this.o.records.get(job.payload.id);
      // Removed meanwhile, or ended by an earlier run.
      if (!row || (row.status !== 'downloading' && row.status !== 'installing')) return;
      if ((await this.pullOnce(job, row)) === 'done') return;
    }
  }

  private async pullOnce(job: Job<{ id: string }>, row: ModelRow): Promise<'done' | 'cancelled'> {
    const { id } = row;
    const plan = JSON.parse(row.plan) as Plan;
    const pulling: ModelStatus[] = ['downloading', 'installing'];
    // Every write is fenced on this pull's record: one replaced by a newer pull of the id is not touched.
    const update = (patch: Parameters<ModelRecords['update']>[2], from = pulling, bump = true) => this.o.records.update(id, from, patch, bump, row.created_at);
    const already = scanModelsDir(this.modelsDir).find((m) => m.id === id);
    if (already) {
      // An earlier run installed it, then its node went away before saying so.
      await this.o.live.refresh();
      await update({ status: 'ready', size_bytes: folderSize(already.dir), error_type: null, error_message: null });
      return 'done';
    }
    const cancel = new AbortController();
    const cancelled = async () => {
      if (!cancel.signal.aborted && (await this.o.records.get(id))?.created_at !== row.created_at) cancel.abort(new Error(`the pull of ${id} was cancelled`));
      return cancel.signal.aborted;
    };
    const signal = AbortSignal.any([job.signal, cancel.signal]);
    let lastWrite = 0;
    const progress = (received: number, total: number | undefined) => {
      const now = Date.now();
      if (now - lastWrite < PROGRESS_EVERY_MS && received !== total) return;
      lastWrite = now;
      void update({ bytes_received: received, bytes_total: total ?? null }, ['downloading'], false)
        .then((written) => !written && cancelled())
        .catch(() => undefined);
    };
    try {
      const options = { ...plan.options, modelsDir: this.modelsDir, check: installCheck } as Parameters<typeof pullModel>[0];
      const result =
        plan.kind === 'folder'
          ? await importFolder(options)
          : await pullModel({
              ...options,
              download: (url, part) => this.download(url, part, progress, signal),
              onInstalling: async () => {
                if (!(await update({ status: 'installing' }, ['downloading'], false)) && (await cancelled())) throw cancel.signal.reason;
              },
            });
      if (await cancelled()) {
        // Cancelled while it was being installed: taken out again before any node serves it.
        removeModel(this.modelsDir, id);
        this.o.log.info({ model: id }, 'cancelled model pull cleaned up');
        return 'cancelled';
      }
      // Served here before the record says ready: a combined node offers it by the time a client sees it ready.
      await this.o.live.refresh();
      await update({ status: 'ready', size_bytes: folderSize(result.model.dir), sha256: result.sha256 ?? null, error_type: null, error_message: null });
      this.o.metrics.modelPulls.inc({ outcome: 'ready' });
      this.o.log.info({ model: id, dir: result.model.dir, sha256: result.sha256 }, 'model pulled');
      return 'done';
    } catch (err) {
      // The node is stopping: the job is given back and resumed by the next node that runs it.
      if (job.signal.aborted) throw err;
      if (await cancelled()) {
        this.o.log.info({ model: id }, 'cancelled model pull cleaned up');
        return 'cancelled';
      }
      const [type, message] = classify(err);
      if (type === 'internal_error') this.o.log.error({ err, model: id }, 'model pull failed');
      else this.o.log.warn({ model: id, error_type: type, err: message }, 'model pull failed');
      await update({ status: 'failed', error_type: type, error_message: message });
      this.o.metrics.modelPulls.inc({ outcome: type });
      return 'done';
    }
  }

  /** One file of a pull: through the SSRF guard, within the size cap and the time limit, then its checksum. */
  private async download(url: string, part: string, progress: (received: number, total: number | undefined) => void, signal: AbortSignal): Promise<Downloaded> {
    mkdirSync(path.dirname(part), { recursive: true });
    const { bytes } = await downloadToFile(url, part, {
      allowPrivateHosts: this.o.settings.allowPrivateHosts,
      maxBytes: this.o.settings.modelMaxBytes,
      timeoutMs: this.o.settings.modelDownloadTimeoutSeconds * 1000,
      signal,
      onProgress: progress,
    });
    progress(bytes, bytes);
    return { sha256: await hashFile(part), bytes, resumedFrom: 0 };
  }
}

/** A failed pull's error type and message. */
function classify(err: unknown): [ErrorType, string] {
  if (err instanceof DownloadBlockedError) return ['file_download_blocked', err.message];
  if (err instanceof DownloadFailedError) return ['file_download_failed', err.message];
  if (err instanceof PullError) {
    if (err.kind === 'disk')
      return ['internal_error', `The models directory could not be written (${err.message.replace(/^.*: /, '')}): the disk is full or not writable.`];
    if (err.kind === 'checksum' || err.kind === 'download') return ['file_download_failed', err.message];
    return ['invalid_model_archive', err.message];
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return ['internal_error', 'The models directory could not be written: the disk is full.'];
  return ['internal_error', 'The model could not be installed (the server log says why).'];
}
