// `parlance models pull` and `models import`: the one way a model is brought, by an operator's explicit command (the
// server never downloads anything). An archive (sherpa-onnx's release .tar.bz2 files, or .tar.gz / .tar.xz / .tar)
// or a single .onnx file is fetched from a URL (resumably, download.ts) or read from a local path, unpacked in the
// download area, given a parlance-model.json whose file roles are found by name (roles.ts), checked as the server
// checks it at start (and loaded as it would load it, with the caller's `check`), and only then moved into its own
// folder of the models directory. A local folder is copied the same way. On any failure the models directory is left
// as it was; only an interrupted download's partial file stays in the download area (`<models dir>/.downloads`,
// which the server skips) for the next pull to continue. Here: fetching, and the order of the steps; the ids, the
// manifest, the checks and the move are install.ts's, unpacking and the copy's own checks unpack.ts's.
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { stripArchiveExt } from './catalogue.js';
import { discardPart, type Downloaded, type DownloadProgress, downloadResumable, hashFile, partFileFor } from './download.js';
import { defaultId, foundManifest, install, type InstallOptions, manifestOf, plan } from './install.js';
import { type InstalledModel, MANIFEST_FILE, type ModelFamily, readManifest } from './manifest.js';
import { diskError, PullError } from './pull-error.js';
import { findRoles, neededRoles } from './roles.js';
import { scanModelsDir } from './scan.js';
import { assertSelfContained, ownCopy, removeIfEmpty, topFolder, unpack } from './unpack.js';

export { PullError } from './pull-error.js';

/** The download area inside the models directory (a folder without a manifest: the server skips it). */
export const DOWNLOADS_DIR = '.downloads';

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
