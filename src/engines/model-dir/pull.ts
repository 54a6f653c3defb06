// `parlance models pull`: the one way a model is downloaded, by an operator's explicit command (the server never
// downloads anything). An archive (sherpa-onnx's release .tar.bz2 files, or .tar.gz / .tar.xz / .tar) is fetched
// from a URL or taken from a local path, unpacked into its own folder of the models directory, and given a
// parlance-model.json whose file roles are found by name (tokens.txt, *encoder*.onnx, ...; int8 files preferred,
// as they decode faster on a CPU). The folder is checked as the server checks it at start; on any failure nothing is
// left behind.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { type InstalledModel, MANIFEST_FILE, MODEL_TYPES, type ModelFamily, readManifest } from './manifest.js';
import { scanModelsDir } from './scan.js';

const execFileP = promisify(execFile);

export interface PullOptions {
  /** http(s) URL or local path of the archive. */
  source: string;
  modelsDir: string;
  family: ModelFamily;
  type: string;
  /** Public id (default: the archive's name, lower case, with -v1). */
  id?: string;
  name?: string;
  languages?: string[];
  aliases?: string[];
  /** Expected SHA-256 of the archive (hex); a mismatch fails the pull. */
  sha256?: string;
}

export class PullError extends Error {}

/** Name patterns of each file role, most specific first. */
const ROLE_PATTERNS: Record<string, RegExp> = {
  tokens: /tokens\.txt$/,
  encoder: /encoder?[^/]*\.onnx$/,
  decoder: /(?<!cached_|uncached_)decoder?[^/]*\.onnx$/,
  joiner: /joiner[^/]*\.onnx$/,
  preprocessor: /preprocess[^/]*\.onnx$/,
  uncached_decoder: /uncached_decode[^/]*\.onnx$/,
  cached_decoder: /(?<!un)cached_decode[^/]*\.onnx$/,
  model: /\.onnx$/,
  acoustic_model: /\.onnx$/,
  vocoder: /(vocos|hifigan|vocoder)[^/]*\.onnx$/,
  voices: /voices\.bin$/,
};

export async function pullModel(opts: PullOptions): Promise<InstalledModel> {
  const needed = (MODEL_TYPES[opts.family] as Record<string, readonly string[]>)[opts.type];
  if (!needed) throw new PullError(`type "${opts.type}" is not a ${opts.family} model type; use one of: ${Object.keys(MODEL_TYPES[opts.family]).join(', ')}`);
  const base = path.basename(new URL(opts.source, 'file:///').pathname).replace(/\.(tar\.bz2|tar\.gz|tgz|tar\.xz|tar)$/, '');
  const id = opts.id ?? `${base.toLowerCase().replace(/[^a-z0-9._-]+/g, '-')}-v1`;
  const folder = path.join(opts.modelsDir, id);
  if (existsSync(folder)) throw new PullError(`${folder} exists already: remove it, or pull with another --id`);
  mkdirSync(opts.modelsDir, { recursive: true });
  const work = `${folder}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  try {
    const archive = path.join(work, 'archive');
    const digest = await fetchTo(opts.source, archive);
    if (opts.sha256 && digest !== opts.sha256.toLowerCase()) throw new PullError(`checksum mismatch for ${opts.source}: expected ${opts.sha256.toLowerCase()}, got ${digest}`);
    await execFileP('tar', ['-xf', archive, '-C', work]).catch((err: { stderr?: string }) => {
      throw new PullError(`could not unpack ${opts.source}: ${(err.stderr ?? '').trim().split('\n').at(-1) ?? 'not an archive'}`);
    });
    rmSync(archive);
    // sherpa-onnx's archives hold one top folder: its contents become the model's folder.
    const entries = readdirSync(work);
    const top = entries.length === 1 && statSync(path.join(work, entries[0]!)).isDirectory() ? path.join(work, entries[0]!) : work;
    const files = readdirSync(top).filter((f) => statSync(path.join(top, f)).isFile());
    const roles = pickRoles(files, needed);
    const missing = needed.filter((r) => !roles[r]);
    if (missing.length) throw new PullError(`the archive has no file for ${missing.join(', ')} (files: ${files.join(', ')}); a ${opts.type} model needs ${needed.join(', ')}`);
    const manifest = {
      id,
      ...(opts.name ? { name: opts.name } : {}),
      family: opts.family,
      type: opts.type,
      files: roles,
      languages: opts.languages?.length ? opts.languages : ['en'],
      ...(opts.aliases?.length ? { aliases: opts.aliases } : {}),
    };
    writeFileSync(path.join(top, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(top, folder);
    rmSync(work, { recursive: true, force: true });
    return readManifest(folder);
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    rmSync(folder, { recursive: true, force: true });
    throw err;
  }
}

/** The file for each needed role: the int8 variant when there is one, else the shortest name that matches. */
function pickRoles(files: string[], needed: readonly string[]): Record<string, string> {
  const roles: Record<string, string> = {};
  const taken = new Set<string>();
  // Specific roles before the catch-all "model".
  for (const role of [...needed].sort((a, b) => Number(a === 'model' || a === 'acoustic_model') - Number(b === 'model' || b === 'acoustic_model'))) {
    const pattern = ROLE_PATTERNS[role] ?? new RegExp(`${role}[^/]*$`);
    const candidates = files.filter((f) => pattern.test(f) && !taken.has(f)).sort((a, b) => Number(b.includes('int8')) - Number(a.includes('int8')) || a.length - b.length);
    if (candidates[0]) {
      roles[role] = candidates[0];
      // The other precision of the same file is not a candidate for another role.
      for (const f of files) if (f.replace('.int8', '') === candidates[0].replace('.int8', '')) taken.add(f);
    }
  }
  return roles;
}

/** Copy or download `source` to `file`; the SHA-256 of its bytes (hex). */
async function fetchTo(source: string, file: string): Promise<string> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  if (!/^https?:\/\//.test(source)) {
    if (!existsSync(source) || !statSync(source).isFile()) throw new PullError(`${source} is not a file`);
    await pipeline(createReadStream(source), hashing, createWriteStream(file));
    return hash.digest('hex');
  }
  let res: Response;
  try {
    res = await fetch(source, { redirect: 'follow' });
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    throw new PullError(`could not download ${source}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  if (!res.ok || !res.body) throw new PullError(`could not download ${source}: HTTP ${res.status}`);
  try {
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), hashing, createWriteStream(file));
  } catch (err) {
    throw new PullError(`the download of ${source} was cut off (${(err as Error).message})`);
  }
  return hash.digest('hex');
}

/** Remove the model whose manifest id is `id` from `modelsDir`; its folder, or undefined when there is none. */
export function removeModel(modelsDir: string, id: string): string | undefined {
  const model = scanModelsDir(modelsDir).find((m) => m.id === id);
  if (!model) return undefined;
  rmSync(model.dir, { recursive: true, force: true });
  return model.dir;
}
