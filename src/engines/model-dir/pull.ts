// `parlance models pull` and `models import`: the one way a model is brought, by an operator's explicit command (the
// server never downloads anything). An archive (sherpa-onnx's release .tar.bz2 files, or .tar.gz / .tar.xz / .tar)
// or a single .onnx file is fetched from a URL (resumably, download.ts) or read from a local path, unpacked in the
// download area, given a parlance-model.json whose file roles are found by name (roles.ts), checked as the server
// checks it at start (and loaded as it would load it, with the caller's `check`), and only then moved into its own
// folder of the models directory. A local folder is copied the same way. On any failure the models directory is left
// as it was; only an interrupted download's partial file stays in the download area (`<models dir>/.downloads`,
// which the server skips) for the next pull to continue.
import { execFile } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stripArchiveExt } from './catalogue.js';
import { discardPart, type Downloaded, type DownloadProgress, downloadResumable, hashFile, partFileFor } from './download.js';
import { ALIAS_RE, type InstalledModel, MANIFEST_FILE, MODEL_ID_RE, type ModelFamily, ModelManifestError, readManifest } from './manifest.js';
import { diskError, PullError } from './pull-error.js';
import { findRoles, neededRoles } from './roles.js';
import { scanModelsDir } from './scan.js';

export { PullError } from './pull-error.js';

const execFileP = promisify(execFile);

/** The download area inside the models directory (a folder without a manifest: the server skips it). */
export const DOWNLOADS_DIR = '.downloads';

/** What the manifest says besides the files. */
export interface ModelFields {
  /** Public id (default: the source's name, lower case, with -v1). */
  id?: string;
  name?: string;
  /** Languages (default en). */
  languages?: string[];
  /** Public ids to take over: an error when another model holds one. */
  aliases?: string[];
  /** Public ids suggested by the catalogue: taken when free, left out otherwise. */
  suggestedAliases?: string[];
  voices?: Record<string, number>;
}

/** What pull and import take besides the source and the manifest's fields. */
interface InstallOptions extends ModelFields {
  modelsDir: string;
  /** Role → file name chosen by the operator (--file): the source must have that file. */
  chosenFiles?: Record<string, string>;
  /** The server's load check of the model (the CLI's runs sherpa-onnx in a child process): a rejection refuses it. */
  check?: (model: InstalledModel) => Promise<void>;
}

export interface PullOptions extends InstallOptions {
  /** http(s) URL or local path of the archive or .onnx file. */
  source: string;
  family: ModelFamily;
  type: string;
  /** Expected SHA-256 of the archive (hex); a mismatch fails the pull. */
  sha256?: string;
  /** Role → file name known for this archive (used when the archive has that file). */
  files?: Record<string, string>;
  /** Files downloaded into the model's folder beside the archive's. */
  extras?: { url: string; sha256?: string }[];
  /** A progress display for each file downloaded (named by its file name). */
  progress?: (file: string) => DownloadProgress | undefined;
  /**
   * How a URL is fetched into the partial file `part` (default downloadResumable: the CLI's resumable download; the
   * server's HTTP pulls go through the SSRF guard with a size cap instead).
   */
  download?: (url: string, part: string, progress?: DownloadProgress) => Promise<Downloaded>;
  /** Told when every file is fetched and checked, and unpacking and checking the model begins. */
  onInstalling?: () => void | Promise<void>;
}

export interface FolderImportOptions extends InstallOptions {
  /** A local folder holding the model's files, with or without its parlance-model.json. */
  source: string;
  /** Needed when the folder has no parlance-model.json (which has them otherwise). */
  family?: ModelFamily;
  type?: string;
}

export interface PullResult {
  model: InstalledModel;
  /** SHA-256 of the archive as downloaded or read (none for a folder). */
  sha256?: string;
  /** Whether that checksum was compared with an expected one. */
  checked: boolean;
  /** Bytes an interrupted earlier download had fetched, continued by this one (0: none). */
  resumedFrom: number;
  /** Suggested aliases left out because another model holds them. */
  skippedAliases: string[];
}

export async function pullModel(opts: PullOptions): Promise<PullResult> {
  neededRoles(opts.family, opts.type, opts.chosenFiles);
  const remote = /^https?:\/\//.test(opts.source);
  const file = path.basename(remote ? new URL(opts.source).pathname : opts.source);
  if (!remote && !(existsSync(opts.source) && statSync(opts.source).isFile())) throw new PullError(`${opts.source} is not a file`);
  const target = plan(opts.modelsDir, opts.id ?? defaultId(stripArchiveExt(file)), opts);
  const download = opts.download ?? downloadResumable;
  const downloads = path.join(opts.modelsDir, DOWNLOADS_DIR);
  const work = path.join(downloads, `${target.id}.unpack`);
  const archive = `${work}.${file}`;
  const expected = opts.sha256?.toLowerCase();
  try {
    // Everything is fetched (and checked) before anything is unpacked, so that a pull cut off in any file resumes.
    let digest: string;
    let resumedFrom = 0;
    let part: string | undefined;
    if (remote) {
      part = partFileFor(downloads, opts.source);
      ({ sha256: digest, resumedFrom } = await download(opts.source, part, opts.progress?.(file)));
    } else {
      digest = await hashFile(opts.source);
    }
    if (expected && digest !== expected) {
      if (part) discardPart(part);
      throw new PullError(`checksum mismatch for ${opts.source}: expected ${expected}, got ${digest}`, 'checksum');
    }
    const extras: { part: string; file: string }[] = [];
    for (const extra of opts.extras ?? []) {
      const extraPart = partFileFor(downloads, extra.url);
      const extraFile = path.basename(new URL(extra.url).pathname);
      const got = await download(extra.url, extraPart, opts.progress?.(extraFile));
      if (extra.sha256 && got.sha256 !== extra.sha256) {
        discardPart(extraPart);
        throw new PullError(`checksum mismatch for ${extra.url}: expected ${extra.sha256}, got ${got.sha256}`, 'checksum');
      }
      extras.push({ part: extraPart, file: extraFile });
    }
    await opts.onInstalling?.();
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    if (part) {
      // The download is complete: from here on it is the pull's, not a partial file to resume.
      renameSync(part, archive);
      discardPart(part);
    }
    if (!/\.onnx$/.test(file)) await unpack(part ? archive : opts.source, work, opts.source);
    else if (part) renameSync(archive, path.join(work, file));
    else copyFileSync(opts.source, path.join(work, file));
    ownCopy(work);
    assertSelfContained(work, opts.source);
    const top = topFolder(work);
    for (const x of extras) {
      renameSync(x.part, path.join(top, x.file));
      discardPart(x.part);
    }
    const files = findRoles(top, opts.family, opts.type, 'the archive', opts.files, opts.chosenFiles);
    const model = await install(top, target.folder, foundManifest(target, opts, opts.family, opts.type, files), opts.source, opts.check);
    return { model, sha256: digest, checked: !!expected, resumedFrom, skippedAliases: target.skipped };
  } catch (err) {
    throw diskError(err, opts.modelsDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(archive, { force: true });
    removeIfEmpty(downloads);
  }
}

/**
 * The id a pull or import of `source` installs its model under: the one given, else (a folder) its manifest's, else
 * the source's name, lower case, with -v1.
 */
export function plannedModelId(kind: 'archive' | 'folder', source: string, id: string | undefined): string {
  if (id) return id;
  if (kind === 'folder') {
    try {
      const raw = JSON.parse(readFileSync(path.join(source, MANIFEST_FILE), 'utf8')) as { id?: unknown };
      if (typeof raw.id === 'string') return raw.id;
    } catch {
      // No manifest (or a broken one, which the import reports): named after the folder.
    }
    return defaultId(path.basename(path.resolve(source)));
  }
  const file = path.basename(/^https?:\/\//.test(source) ? new URL(source).pathname : source);
  return defaultId(stripArchiveExt(file));
}

/** Copy a local model folder into the models directory; its parlance-model.json is used when it has one. */
export async function importFolder(opts: FolderImportOptions): Promise<PullResult> {
  if (!existsSync(opts.source) || !statSync(opts.source).isDirectory()) throw new PullError(`${opts.source} is not a folder`);
  const ownManifest = existsSync(path.join(opts.source, MANIFEST_FILE));
  let raw: Record<string, unknown> | undefined;
  if (ownManifest) {
    // Checked where it is first, so that its errors name the user's file.
    const m = readManifest(opts.source);
    if ((opts.family && opts.family !== m.family) || (opts.type && opts.type !== m.type)) {
      throw new PullError(`${path.join(opts.source, MANIFEST_FILE)} says ${m.family} ${m.type}; drop --family/--type, or fix the manifest`);
    }
    neededRoles(m.family, m.type, opts.chosenFiles);
    raw = JSON.parse(readFileSync(path.join(opts.source, MANIFEST_FILE), 'utf8')) as Record<string, unknown>;
  } else if (!opts.family || !opts.type) {
    throw new PullError(`${opts.source} has no ${MANIFEST_FILE}: give --family and --type`);
  } else {
    neededRoles(opts.family, opts.type, opts.chosenFiles);
  }
  const id = opts.id ?? (raw?.id as string | undefined) ?? defaultId(path.basename(path.resolve(opts.source)));
  const target = plan(opts.modelsDir, id, { ...opts, aliases: opts.aliases ?? (raw?.aliases as string[] | undefined) });
  const downloads = path.join(opts.modelsDir, DOWNLOADS_DIR);
  const work = path.join(downloads, `${target.id}.unpack`);
  try {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(downloads, { recursive: true });
    // Checked before a byte is copied; links copied as they are (cpSync would point them back into the source).
    assertSelfContained(opts.source, opts.source);
    cpSync(opts.source, work, { recursive: true, verbatimSymlinks: true });
    ownCopy(work);
    const manifest = raw
      ? {
          ...raw,
          ...manifestOf(
            target,
            { ...opts, languages: opts.languages ?? (raw.languages as string[]), name: opts.name ?? (raw.name as string | undefined) },
            raw.family as ModelFamily,
            raw.type as string,
            { ...(raw.files as Record<string, string>), ...opts.chosenFiles },
          ),
        }
      : foundManifest(target, opts, opts.family!, opts.type!, findRoles(work, opts.family!, opts.type!, 'the folder', {}, opts.chosenFiles));
    const model = await install(work, target.folder, manifest, opts.source, opts.check);
    return { model, checked: false, resumedFrom: 0, skippedAliases: target.skipped };
  } catch (err) {
    throw diskError(err, opts.modelsDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
    removeIfEmpty(downloads);
  }
}

interface Target {
  id: string;
  folder: string;
  aliases: string[];
  skipped: string[];
}

/**
 * Where the model goes and which ids it claims; a PullError when an id is malformed, its folder exists or another
 * model holds an id. The id names folders (its own, and its work area): one like `../x` would reach outside the
 * models directory, so it is checked before any path is made of it.
 */
function plan(modelsDir: string, id: string, fields: ModelFields): Target {
  if (!MODEL_ID_RE.test(id))
    throw new PullError(`the id "${id}" is not a model id: lower case letters, digits, . _ -, ending in a version, like whisper-tiny-en-v1`);
  const badAlias = (fields.aliases ?? []).find((a) => !ALIAS_RE.test(a));
  if (badAlias !== undefined) throw new PullError(`the alias "${badAlias}" is not a model id: letters, digits, . _ -, like stt-async-v4`);
  const folder = path.join(modelsDir, id);
  if (existsSync(folder)) throw new PullError(`${folder} exists already: remove it, or pull with another --id`);
  const holders = new Map<string, string>();
  for (const m of scanModelsDir(modelsDir)) for (const claimed of [m.id, ...(m.aliases ?? [])]) holders.set(claimed, m.id);
  if (holders.has(id)) throw new PullError(`the id ${id} is taken by ${holders.get(id)}: pull with another --id`);
  const taken = (fields.aliases ?? []).filter((a) => holders.has(a));
  if (taken.length)
    throw new PullError(`${taken.map((a) => `${a} is claimed by ${holders.get(a)}`).join(', ')}: remove that model first, or choose other --alias ids`);
  const suggested = (fields.aliases ? [] : (fields.suggestedAliases ?? [])).filter((a) => a !== id);
  return {
    id,
    folder,
    aliases: [...(fields.aliases ?? []), ...suggested.filter((a) => !holders.has(a))],
    skipped: suggested.filter((a) => holders.has(a)),
  };
}

interface ManifestDraft extends Record<string, unknown> {
  files: Record<string, string>;
}

function manifestOf(target: Target, fields: ModelFields, family: ModelFamily, type: string, files: Record<string, string>): ManifestDraft {
  return {
    id: target.id,
    ...(fields.name ? { name: fields.name } : {}),
    family,
    type,
    files,
    languages: fields.languages?.length ? fields.languages : ['en'],
    ...(target.aliases.length ? { aliases: target.aliases } : {}),
    ...(fields.voices ? { voices: fields.voices } : {}),
  };
}

/** The manifest of a model whose files were found by name (findRoles): a BPE vocabulary among them is its modeling unit. */
function foundManifest(target: Target, fields: ModelFields, family: ModelFamily, type: string, files: Record<string, string>): ManifestDraft {
  return { ...manifestOf(target, fields, family, type, files), ...(files.bpe_vocab ? { modeling_unit: 'bpe' } : {}) };
}

/**
 * Write the manifest into `dir`, check the model as the server would, and move `dir` into place as `folder`. Errors
 * name `source`, where the files came from, rather than their copy in the download area.
 */
async function install(dir: string, folder: string, manifest: ManifestDraft, source: string, check: InstallOptions['check']): Promise<InstalledModel> {
  const failure = await whyUnusable(dir, manifest, source, check);
  if (failure) throw new PullError((await int8EncoderFailure(dir, manifest, source, check, failure)) ?? failure.message);
  // Another pull may have installed one there meanwhile.
  if (existsSync(folder)) throw new PullError(`${folder} exists already: remove it, or pull with another --id`);
  renameSync(dir, folder);
  return readManifest(folder);
}

interface Failure {
  message: string;
  /** The files passed the start-up checks; loading them failed. */
  loading: boolean;
}

/** Why the model in `dir` cannot be used with `manifest`: its files fail the start-up checks, or `check` refuses it. */
async function whyUnusable(dir: string, manifest: ManifestDraft, source: string, check: InstallOptions['check']): Promise<Failure | undefined> {
  writeFileSync(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  let model: InstalledModel;
  try {
    model = readManifest(dir);
  } catch (err) {
    if (err instanceof ModelManifestError) return { message: `${source}: ${err.problem}`, loading: false };
    throw err;
  }
  try {
    await check?.(model);
  } catch (err) {
    return { message: (err as Error).message.replaceAll(dir, source), loading: true };
  }
  return undefined;
}

/**
 * The error of a model whose encoder is an int8 file, which not every export makes loadable (the int8 encoder of
 * sherpa-onnx's "mobile" KWS Zipformer aborts onnxruntime): when the fp32 encoder beside it passes, the error names
 * it and how to choose it; when there is none, a failed load says which encoder it tried. Undefined otherwise.
 */
async function int8EncoderFailure(
  dir: string,
  manifest: ManifestDraft,
  source: string,
  check: InstallOptions['check'],
  failure: Failure,
): Promise<string | undefined> {
  const encoder = manifest.files.encoder;
  if (!encoder?.endsWith('.int8.onnx')) return undefined;
  const fp32 = encoder.replace(/\.int8\.onnx$/, '.onnx');
  if (!existsSync(path.join(dir, fp32)))
    return failure.loading
      ? `${failure.message}; the encoder is the int8 ${encoder}: an fp32 encoder, if you have one, can be chosen with --file encoder=FILE`
      : undefined;
  if (await whyUnusable(dir, { ...manifest, files: { ...manifest.files, encoder: fp32 } }, source, check)) return undefined;
  return `the int8 encoder ${encoder} could not be loaded, the fp32 encoder ${fp32} beside it can: bring the model again with --file encoder=${fp32} (the failure: ${failure.message})`;
}

async function unpack(archive: string, into: string, source: string): Promise<void> {
  await execFileP('tar', ['-xf', archive, '-C', into]).catch((err: { stderr?: string }) => {
    throw new PullError(`could not unpack ${source}: ${(err.stderr ?? '').trim().split('\n').at(-1) || 'not an archive'}`);
  });
}

/** sherpa-onnx's archives hold one top folder: its contents become the model's folder. */
function topFolder(dir: string): string {
  const entries = readdirSync(dir);
  return entries.length === 1 && statSync(path.join(dir, entries[0]!)).isDirectory() ? path.join(dir, entries[0]!) : dir;
}

/**
 * A model's folder holds files, folders, and relative links to what is inside it, so that its copy in the models
 * directory stands alone: a link out of it (to a secret of the machine, which the server would then read as a model
 * file; or an absolute one, back into a source that may go away) or to nothing, or a device or pipe (which would stop
 * the copy half-way), refuses the source. `dir`: the folder to import, or an archive unpacked.
 */
function assertSelfContained(dir: string, source: string): void {
  const base = path.resolve(dir);
  const root = realpathSync(dir);
  const inside = (folder: string, p: string) => p === folder || p.startsWith(folder + path.sep);
  for (const rel of readdirSync(dir, { recursive: true }) as string[]) {
    const p = path.join(base, rel);
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) {
      const link = readlinkSync(p);
      const real = existsSync(p) ? realpathSync(p) : undefined;
      if (path.isAbsolute(link) || !inside(base, path.resolve(path.dirname(p), link)) || real === undefined || !inside(root, real))
        throw new PullError(
          `${source}: ${rel} is a link to ${link}; a model's links must be relative and lead to a file in its folder: put the file itself there`,
        );
    } else if (!stat.isFile() && !stat.isDirectory()) {
      throw new PullError(`${source}: ${rel} is not a file, a folder or a link`);
    }
  }
}

/**
 * Copies and unpacked archives keep their source's modes: those of a read-only folder (a mounted medium) are made
 * writable, for the manifest and `models remove`.
 */
function ownCopy(dir: string): void {
  for (const p of [dir, ...(readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f))]) {
    const stat = lstatSync(p);
    if (!stat.isSymbolicLink() && !(stat.mode & 0o200)) chmodSync(p, stat.mode | 0o200);
  }
}

function defaultId(base: string): string {
  return `${base.toLowerCase().replace(/[^a-z0-9._-]+/g, '-')}-v1`;
}

function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty (a partial download to resume), or not there.
  }
}

/**
 * Remove the model whose manifest id is `id` from `modelsDir`; its folder, or undefined when there is none. The folder
 * is first moved into the download area in one rename, so that no half-removed model is ever seen there.
 */
export function removeModel(modelsDir: string, id: string): string | undefined {
  const model = scanModelsDir(modelsDir).find((m) => m.id === id);
  if (!model) return undefined;
  const downloads = path.join(modelsDir, DOWNLOADS_DIR);
  const gone = path.join(downloads, `${path.basename(model.dir)}.removed-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(downloads, { recursive: true });
    renameSync(model.dir, gone);
  } catch (err) {
    throw diskError(err, modelsDir);
  }
  rmSync(gone, { recursive: true, force: true });
  removeIfEmpty(downloads);
  return model.dir;
}
