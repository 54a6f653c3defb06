// The server's models over HTTP (/v1/admin/models, keys with models:admin): what is installed and how each pull went,
// pulls (a catalogue name, a URL, or a path inside the import folder) run as jobs on the nodes that run jobs, removals
// and new aliases. The models directory is the truth of what is installed; the `models` rows (records.ts) say how a
// pull went. A pull goes through the SSRF guard with a size cap, checks its checksum, and leaves the models directory
// as it was on any failure (engines/model-dir/pull.ts); its record then ends `failed` with the error type.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { type CatalogueEntry, findEntry, loadCatalogue } from '../../engines/model-dir/catalogue.js';
import { type Downloaded, hashFile } from '../../engines/model-dir/download.js';
import { ALIAS_RE, type InstalledModel, MANIFEST_FILE, MODEL_ID_RE, type ModelFamily, MODEL_TYPES, readManifest } from '../../engines/model-dir/manifest.js';
import { importFolder, plannedModelId, PullError, pullModel, removeModel } from '../../engines/model-dir/pull.js';
import { scanModelsDir } from '../../engines/model-dir/scan.js';
import { resolveSource, type ResolvedSource } from '../../engines/model-dir/sources.js';
import type { Settings } from '../../config/settings.js';
import type { Metrics } from '../../http/metrics.js';
import type { Job, JobQueue } from '../../jobs/queue.js';
import { DownloadBlockedError, DownloadFailedError, downloadToFile } from '../../lib/ssrf-fetch.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { ErrorType } from '../../wire/error-catalog.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import type { SttRegistry } from '../../engines/stt/registry.js';
import { claimedAliases, ModelClaimError } from './installed.js';
import type { LiveModels } from './live.js';
import { installCheck } from './load-check.js';
import { type ModelRecords, type ModelRow, type ModelStatus } from './records.js';

export const MODEL_PULL_JOB = 'model_pull';

/** A model as GET /v1/admin/models shows it. */
export interface ModelView {
  id: string;
  status: ModelStatus;
  source: string | null;
  family: string;
  type: string;
  name: string | null;
  languages: string[];
  aliases: string[];
  size_bytes: number | null;
  sha256: string | null;
  progress: { bytes_received: number; bytes_total: number | null } | null;
  error_type: string | null;
  error_message: string | null;
  /** Its weights are in this node's memory now (a model is loaded on first use, and unloaded when idle or removed). */
  loaded: boolean;
  created_at: string | null;
  updated_at: string | null;
}

export interface CatalogueView {
  name: string;
  title: string;
  family: string;
  type: string;
  languages: string[];
  size_mb: number | null;
  id: string;
  aliases: string[];
  installed: boolean;
}

export interface PullBody {
  source: string;
  sha256?: string;
  family?: string;
  type?: string;
  id?: string;
  aliases?: string[];
}

/** What the pull job works from (stored with the record, so that any job node can run it). */
interface Plan {
  kind: ResolvedSource['kind'];
  options: Record<string, unknown> & { source: string };
}

export interface ModelAdminOptions {
  settings: Pick<
    Settings,
    'modelsDir' | 'modelsImportDir' | 'modelsCatalogue' | 'allowPrivateHosts' | 'modelMaxBytes' | 'modelDownloadTimeoutSeconds' | 'sttModelAliases'
  >;
  records: ModelRecords;
  queue: JobQueue;
  live: LiveModels;
  stt: SttRegistry;
  tts: TtsRegistry;
  metrics: Metrics;
  log: Logger;
  /** Models this node uses in a role read at start (language identification, speaker embeddings, the second pass). */
  pinned: ReadonlySet<string>;
}

const REMOTE = /^https?:\/\//i;
/** Progress is written at most this often (ms). */
const PROGRESS_EVERY_MS = 250;

export class ModelAdmin {
  constructor(private readonly o: ModelAdminOptions) {}

  private get modelsDir(): string {
    return this.o.settings.modelsDir;
  }

  private catalogue(): CatalogueEntry[] {
    return loadCatalogue(this.o.settings.modelsCatalogue || undefined);
  }

  /** The installed models and every pull with a record, by id; and the catalogue apart. */
  async list(): Promise<{ models: ModelView[]; catalogue: CatalogueView[] }> {
    const installed = this.installed();
    const rows = new Map((await this.o.records.list()).map((r) => [r.id, r]));
    const models = installed.map((m) => this.installedView(m, rows.get(m.id)));
    for (const row of rows.values()) if (!installed.some((m) => m.id === row.id)) models.push(this.rowView(row));
    models.sort((a, b) => a.id.localeCompare(b.id));
    const ids = new Set(installed.map((m) => m.id));
    const catalogue = this.catalogue().map((e) => ({
      name: e.name,
      title: e.title,
      family: e.family,
      type: e.type,
      languages: e.languages,
      size_mb: e.size_mb ?? null,
      id: e.id,
      aliases: e.aliases ?? [],
      installed: ids.has(e.id),
    }));
    return { models, catalogue };
  }

  async get(id: string): Promise<ModelView> {
    const model = this.installed().find((m) => m.id === id);
    const row = await this.o.records.get(id);
    if (model) return this.installedView(model, row);
    if (row) return this.rowView(row);
    throw notFound(id);
  }

  /**
   * Start a pull: 202 with the record. A pull of the same model already under way is that one (one job for
   * concurrent pulls of a source); bad input that can be told now is 400 invalid_request, what can be told only by
   * fetching (a private host, a checksum, an archive with no model, a full disk) ends the record failed.
   */
  async pull(body: PullBody): Promise<ModelView> {
    const plan = this.plan(body);
    const id = plannedModelId(plan.kind, plan.options.source, plan.options.id as string | undefined);
    if (!MODEL_ID_RE.test(id))
      throw invalidField('id', `"${id}" is not a model id: lower case letters, digits, . _ -, ending in a version, like whisper-tiny-en-v1`);
    const installed = this.installed();
    const holder = installed.find((m) => m.id === id || (m.aliases ?? []).includes(id));
    if (holder)
      throw invalidField('id', `${id} is installed already${holder.id === id ? '' : ` (an alias of ${holder.id})`}: remove it first, or give another id`);
    const taken = (body.aliases ?? []).filter((a) => installed.some((m) => m.id === a || (m.aliases ?? []).includes(a)));
    if (taken.length)
      throw invalidField(
        'aliases',
        `${taken.join(', ')} ${taken.length === 1 ? 'is' : 'are'} claimed by another model: move ${taken.length === 1 ? 'it' : 'them'} first`,
      );
    const existing = await this.o.records.get(id);
    if (existing && (existing.status === 'downloading' || existing.status === 'installing')) {
      if (existing.source === body.source) return this.rowView(existing);
      throw invalidField('id', `a pull of ${id} from ${existing.source} is under way: wait for it, or give another id`);
    }
    // A ready record whose folder is gone (removed by hand) is stale.
    if (existing?.status === 'ready') await this.o.records.delete(id);
    const now = new Date().toISOString();
    const row: ModelRow = {
      id,
      source: body.source,
      plan: JSON.stringify({ ...plan, options: { ...plan.options, id } }),
      family: String(plan.options.family ?? 'unknown'),
      type: String(plan.options.type ?? 'unknown'),
      status: REMOTE.test(plan.options.source) ? 'downloading' : 'installing',
      bytes_received: null,
      bytes_total: null,
      size_bytes: null,
      sha256: null,
      error_type: null,
      error_message: null,
      created_at: now,
      updated_at: now,
    };
    const inserted = await this.o.records.insert(row, (tx) => this.o.queue.enqueue(MODEL_PULL_JOB, { id }, { tx, singletonKey: id, maxAttempts: 1 }));
    if (!inserted) {
      // Another request inserted it first.
      const other = await this.o.records.get(id);
      if (other?.source === body.source) return this.rowView(other);
      throw invalidField('id', `a pull of ${id} is under way: wait for it, or give another id`);
    }
    this.o.log.info({ model: id, source: body.source }, 'model pull queued');
    return this.rowView(row);
  }

  /**
   * Remove a model: out of the catalogs of this node at once (the others on their next look), its folder gone, its
   * record gone. Sessions that hold it keep it until they end; then it is unloaded. A pull under way is cancelled.
   */
  async remove(id: string): Promise<void> {
    const row = await this.o.records.get(id);
    const model = this.installed().find((m) => m.id === id);
    if (row && (row.status === 'downloading' || row.status === 'installing') && !model) {
      // A pull under way is cancelled: its job sees its record gone, stops, and leaves nothing behind.
      await this.o.records.delete(id);
      await this.o.records.changed();
      this.o.log.info({ model: id }, 'model pull cancelled');
      return;
    }
    if (!model && !row) throw notFound(id);
    if (model && this.o.pinned.has(id))
      throw new ApiError(
        'invalid_request',
        `Model ${id} is used in a role the server takes at start (language identification, speaker embeddings or the second pass): remove it while the server is stopped (\`parlance models remove ${id}\`).`,
        { status: 409 },
      );
    if (model) {
      try {
        removeModel(this.modelsDir, id);
      } catch (err) {
        throw new ApiError('internal_error', `Model ${id} could not be removed: ${(err as Error).message}`, { cause: err });
      }
    }
    if (row) await this.o.records.delete(id);
    await this.o.records.changed();
    await this.o.live.refresh();
    this.o.log.info({ model: id }, 'model removed');
  }

  /** Give an installed model new aliases (public ids it answers to), in one step on every node. */
  async setAliases(id: string, aliases: string[]): Promise<ModelView> {
    const installed = this.installed();
    const model = installed.find((m) => m.id === id);
    if (!model) throw notFound(id);
    const unique = [...new Set(aliases)];
    const bad = unique.find((a) => !ALIAS_RE.test(a));
    if (bad !== undefined) throw invalidField('aliases', `"${bad}" is not a model id: letters, digits, . _ -, like stt-async-v4`);
    const next = installed.map((m) => (m.id === id ? { ...m, aliases: unique } : m));
    const holders = new Map<string, string>();
    for (const m of next)
      for (const claimed of [m.id, ...(m.aliases ?? [])]) {
        const other = holders.get(claimed);
        if (other !== undefined && other !== m.id) throw invalidField('aliases', `${claimed} is claimed by ${m.id === id ? other : m.id}: move it first`);
        holders.set(claimed, m.id);
      }
    this.checkClaims(next, model);
    // The manifest is written anew beside the old one and renamed over it: never half written.
    const file = path.join(model.dir, MANIFEST_FILE);
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ ...raw, aliases: unique }, null, 2)}\n`);
    renameSync(tmp, file);
    await this.o.records.changed();
    await this.o.live.refresh();
    return this.installedView(readManifest(model.dir), await this.o.records.get(id));
  }

  /** Run the pull job on this node (a node that runs jobs). */
  register(queue: JobQueue): void {
    queue.work<{ id: string }>(MODEL_PULL_JOB, (job) => this.runPull(job), { concurrency: 1, maxAttempts: 1 });
  }

  /** The pulls PARLANCE_MODELS asks for that are not installed yet; an unknown name is an error (at start). */
  async pullMissing(sources: readonly string[]): Promise<void> {
    for (const source of sources) {
      try {
        const view = await this.pull({ source });
        this.o.log.info({ source, model: view.id, status: view.status }, 'PARLANCE_MODELS: model pull under way');
      } catch (err) {
        const message = (err as Error).message;
        if (/installed already/.test(message)) continue;
        this.o.log.error({ source, err: message }, 'PARLANCE_MODELS: this model cannot be pulled');
      }
    }
  }

  private installed(): InstalledModel[] {
    try {
      return scanModelsDir(this.modelsDir);
    } catch (err) {
      throw new ApiError('internal_error', `The models directory cannot be read: ${(err as Error).message}`, { cause: err });
    }
  }

  /** The source made into what the job pulls or imports, or 400 invalid_request saying what is wrong with it. */
  private plan(body: PullBody): Plan {
    const source = body.source.trim();
    if (body.family !== undefined && !(body.family in MODEL_TYPES)) throw invalidField('family', `must be one of: ${Object.keys(MODEL_TYPES).join(', ')}`);
    if (body.family !== undefined && body.type !== undefined && !(body.type in MODEL_TYPES[body.family as ModelFamily]))
      throw invalidField('type', `a ${body.family} model is one of: ${Object.keys(MODEL_TYPES[body.family as ModelFamily]).join(', ')}`);
    const catalogue = this.catalogue();
    let from = source;
    if (REMOTE.test(source)) {
      try {
        new URL(source);
      } catch {
        throw invalidField('source', 'is not a valid URL');
      }
    } else if (/[/\\]/.test(source) || /\.(tar\.bz2|tar\.gz|tgz|tar\.xz|tar|onnx)$/.test(source)) {
      from = this.importPath(source);
    } else if (!findEntry(catalogue, source)) {
      throw invalidField(
        'source',
        `unknown catalogue name "${source}": GET /v1/admin/models lists the catalogue; or give a URL, or a path in the import folder`,
      );
    }
    let resolved: ResolvedSource;
    try {
      resolved = resolveSource(from, { family: body.family, type: body.type, id: body.id, alias: body.aliases, sha256: body.sha256 }, catalogue, 'pull');
    } catch (err) {
      if (!(err instanceof PullError)) throw err;
      throw invalidField('source', err.message.replace(/--(family|type|sha256)/g, '$1').replace('(`parlance models catalogue`)', '(GET /v1/admin/models)'));
    }
    const { family, type } = resolved.options;
    if (family !== undefined && type !== undefined && !(type in MODEL_TYPES[family]))
      throw invalidField('type', `a ${family} model is one of: ${Object.keys(MODEL_TYPES[family]).join(', ')}`);
    return { kind: resolved.kind, options: { ...resolved.options } as Plan['options'] };
  }

  /** A path inside the import folder (PARLANCE_MODELS_IMPORT_DIR), or 400: no other path of the machine is read. */
  private importPath(source: string): string {
    const dir = this.o.settings.modelsImportDir;
    if (!dir) throw invalidField('source', 'pulls from a path are off: the operator sets PARLANCE_MODELS_IMPORT_DIR to the folder they may come from');
    const root = existsSync(dir) ? realpathSync(dir) : path.resolve(dir);
    const full = path.resolve(root, source);
    const real = existsSync(full) ? realpathSync(full) : undefined;
    if (real === undefined) throw invalidField('source', `${source} is not in the import folder`);
    if (real === root || !real.startsWith(root + path.sep)) throw invalidField('source', `${source} is not inside the import folder`);
    return real;
  }

  /** Whether the models' claims hold (modes of the public ids, TTS ids); 400 saying why not. */
  private checkClaims(next: InstalledModel[], model: InstalledModel): void {
    try {
      if (model.family === 'tts') this.o.tts.checkInstalled(next);
      else if (model.family === 'stt-offline' || model.family === 'stt-streaming')
        claimedAliases(
          next.filter((m) => m.family === 'stt-offline' || m.family === 'stt-streaming'),
          this.o.stt.offers(),
          this.o.settings.sttModelAliases,
        );
    } catch (err) {
      // A claim that cannot hold (ModelClaimError, or the TTS registry's ConfigError).
      if (err instanceof ModelClaimError || err instanceof Error) throw invalidField('aliases', err.message);
      throw err;
    }
  }

  /**
   * The pull job of a model id. Its record may be removed while it runs (DELETE cancels the pull) or replaced by a new
   * pull of the id (which shares this job, one per id): the job then stops, leaving nothing behind, and pulls what the
   * record says now, if anything.
   */
  private async runPull(job: Job<{ id: string }>): Promise<void> {
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

  private installedView(m: InstalledModel, row: ModelRow | undefined): ModelView {
    // Its folder is in place, but the pull has not said ready yet (this node is starting to serve it).
    if (row && (row.status === 'downloading' || row.status === 'installing')) return this.rowView(row);
    return {
      id: m.id,
      status: 'ready',
      source: row?.source ?? null,
      family: m.family,
      type: m.type,
      name: m.name ?? null,
      languages: m.languages,
      aliases: m.aliases ?? [],
      size_bytes: folderSize(m.dir),
      sha256: row?.sha256 ?? null,
      progress: null,
      error_type: null,
      error_message: null,
      loaded: this.o.live.loaded(m.id),
      created_at: row?.created_at ?? null,
      updated_at: row?.updated_at ?? null,
    };
  }

  private rowView(r: ModelRow): ModelView {
    const plan = JSON.parse(r.plan) as Plan;
    return {
      id: r.id,
      status: r.status,
      source: r.source,
      family: r.family,
      type: r.type,
      name: (plan.options.name as string | undefined) ?? null,
      languages: (plan.options.languages as string[] | undefined) ?? [],
      aliases: (plan.options.aliases as string[] | undefined) ?? (plan.options.suggestedAliases as string[] | undefined) ?? [],
      size_bytes: r.size_bytes === null ? null : Number(r.size_bytes),
      sha256: r.sha256,
      progress:
        r.status === 'downloading' && r.bytes_received !== null
          ? { bytes_received: Number(r.bytes_received), bytes_total: r.bytes_total === null ? null : Number(r.bytes_total) }
          : null,
      error_type: r.error_type,
      error_message: r.error_message,
      loaded: false,
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }
}

function notFound(id: string): ApiError {
  return new ApiError('model_not_found', `No installed model or pull with id ${id}.`);
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

/** Bytes of the files below `dir`. */
function folderSize(dir: string): number {
  let total = 0;
  try {
    for (const rel of readdirSync(dir, { recursive: true }) as string[]) {
      const stat = lstatSync(path.join(dir, rel));
      if (stat.isFile()) total += stat.size;
    }
  } catch {
    // Gone meanwhile.
  }
  return total;
}
