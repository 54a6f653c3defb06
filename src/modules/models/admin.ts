// The server's models over HTTP (/v1/admin/models, keys with models:admin): what is installed and how each pull went,
// pulls (a catalogue name, a URL, or a path inside the import folder) run as jobs on the nodes that run jobs, removals
// and new aliases. The models directory is the truth of what is installed; the `models` rows (records.ts) say how a
// pull went. A pull goes through the SSRF guard with a size cap, checks its checksum, and leaves the models directory
// as it was on any failure (engines/model-dir/pull.ts; the job: pull-job.ts); its record then ends `failed` with the
// error type. How a model is shown: views.ts.
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { type CatalogueEntry, findEntry, loadCatalogue } from '../../engines/model-dir/catalogue.js';
import { ALIAS_RE, type InstalledModel, MANIFEST_FILE, MODEL_ID_RE, type ModelFamily, MODEL_TYPES, readManifest } from '../../engines/model-dir/manifest.js';
import { plannedModelId, PullError, removeModel } from '../../engines/model-dir/pull.js';
import { scanModelsDir } from '../../engines/model-dir/scan.js';
import { resolveSource, type ResolvedSource } from '../../engines/model-dir/sources.js';
import type { Settings } from '../../config/settings.js';
import type { Metrics } from '../../http/metrics.js';
import type { JobQueue } from '../../jobs/queue.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import type { SttRegistry } from '../../engines/stt/registry.js';
import { claimedAliases, ModelClaimError } from './installed.js';
import type { LiveModels } from './live.js';
import { MODEL_PULL_JOB, PullJob } from './pull-job.js';
import type { ModelRecords, ModelRow } from './records.js';
import { type CatalogueView, installedView, type ModelView, type Plan, rowView } from './views.js';

export { MODEL_PULL_JOB } from './pull-job.js';
export type { CatalogueView, ModelView } from './views.js';

export interface PullBody {
  source: string;
  sha256?: string;
  family?: string;
  type?: string;
  id?: string;
  aliases?: string[];
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
  /** Models this node uses in a role read at start (the second pass). */
  pinned: ReadonlySet<string>;
}

const REMOTE = /^https?:\/\//i;

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
    const models = installed.map((m) => installedView(m, rows.get(m.id), this.o.live.loaded(m.id)));
    for (const row of rows.values()) if (!installed.some((m) => m.id === row.id)) models.push(rowView(row));
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
    if (model) return installedView(model, row, this.o.live.loaded(model.id));
    if (row) return rowView(row);
    throw notFound(id);
  }

  /**
   * Start a pull: 202 with the record. A pull of the same model already under way is that one (one job for
   * concurrent pulls of a source); a request that is malformed (a field out of its range, an id or alias that is not
   * one or is held, a path outside the import folder) is 400 invalid_request. A source that names no model (a
   * catalogue name the catalogue does not have: its record ends failed at once, model_not_available), and what can be
   * told only by fetching (a private host, a checksum, an archive with no model, a full disk) end the record failed.
   */
  async pull(body: PullBody): Promise<ModelView> {
    const plan = this.plan(body);
    const id = plannedModelId(plan.kind === 'folder' ? 'folder' : 'archive', plan.options.source, plan.options.id as string | undefined);
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
      if (existing.source === body.source) return rowView(existing);
      throw invalidField('id', `a pull of ${id} from ${existing.source} is under way: wait for it, or give another id`);
    }
    // A ready record whose folder is gone (removed by hand) is stale.
    if (existing?.status === 'ready') await this.o.records.delete(id);
    const now = new Date().toISOString();
    const unknown = plan.kind === 'unknown';
    const row: ModelRow = {
      id,
      source: body.source,
      plan: JSON.stringify({ ...plan, options: { ...plan.options, id } }),
      family: String(plan.options.family ?? 'unknown'),
      type: String(plan.options.type ?? 'unknown'),
      status: unknown ? 'failed' : REMOTE.test(plan.options.source) ? 'downloading' : 'installing',
      bytes_received: null,
      bytes_total: null,
      size_bytes: null,
      sha256: null,
      error_type: unknown ? 'model_not_available' : null,
      error_message: unknown
        ? `Unknown catalogue name "${plan.options.source}": GET /v1/admin/models lists the catalogue; or give a URL, or a path in the import folder.`
        : null,
      created_at: now,
      updated_at: now,
    };
    // A source that names no model has nothing to run: its record is written failed, with no job.
    const enqueue = (tx: Parameters<Parameters<ModelRecords['insert']>[1]>[0]) =>
      unknown ? Promise.resolve() : this.o.queue.enqueue(MODEL_PULL_JOB, { id }, { tx, singletonKey: id, maxAttempts: 1 });
    const inserted = await this.o.records.insert(row, enqueue);
    if (!inserted) {
      // Another request inserted it first.
      const other = await this.o.records.get(id);
      if (other?.source === body.source) return rowView(other);
      throw invalidField('id', `a pull of ${id} is under way: wait for it, or give another id`);
    }
    if (unknown) {
      this.o.metrics.modelPulls.inc({ outcome: 'model_not_available' });
      this.o.log.warn({ model: id, source: body.source, error_type: row.error_type, err: row.error_message }, 'model pull failed');
    } else this.o.log.info({ model: id, source: body.source }, 'model pull queued');
    return rowView(row);
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
        `Model ${id} is the second-pass model, which the server takes at start: remove it while the server is stopped (\`parlance models remove ${id}\`).`,
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
    return installedView(readManifest(model.dir), await this.o.records.get(id), this.o.live.loaded(id));
  }

  /** Run the pull job on this node (a node that runs jobs). */
  register(queue: JobQueue): void {
    const job = new PullJob(this.o);
    queue.work<{ id: string }>(MODEL_PULL_JOB, (j) => job.run(j), { concurrency: 1, maxAttempts: 1 });
  }

  /** The pulls PARLANCE_MODELS asks for that are not installed yet; an unknown name is an error (at start). */
  async pullMissing(sources: readonly string[]): Promise<void> {
    for (const source of sources) {
      try {
        const view = await this.pull({ source });
        if (view.status === 'failed') this.o.log.error({ source, model: view.id, err: view.error_message }, 'PARLANCE_MODELS: this model cannot be pulled');
        else this.o.log.info({ source, model: view.id, status: view.status }, 'PARLANCE_MODELS: model pull under way');
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
      // Well formed, but no model by that name: the pull's record ends failed (model_not_available).
      return { kind: 'unknown', options: { source, id: body.id, family: body.family, type: body.type } };
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
}

function notFound(id: string): ApiError {
  return new ApiError('model_not_found', `No installed model or pull with id ${id}.`);
}
