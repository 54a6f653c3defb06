// The install half of a pull or import (pull.ts): where the model goes and which ids it claims (checked before any
// path is made of them), its parlance-model.json, the check the server makes at start (and its load, with the caller's
// `check`), and the one rename that moves it into the models directory.
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ALIAS_RE, type InstalledModel, MANIFEST_FILE, MODEL_ID_RE, type ModelFamily, ModelManifestError, readManifest } from './manifest.js';
import { PullError } from './pull-error.js';
import { scanModelsDir } from './scan.js';

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
export interface InstallOptions extends ModelFields {
  modelsDir: string;
  /** Role → file name chosen by the operator (--file): the source must have that file. */
  chosenFiles?: Record<string, string>;
  /** The server's load check of the model (the CLI's runs sherpa-onnx in a child process): a rejection refuses it. */
  check?: (model: InstalledModel) => Promise<void>;
}

export interface Target {
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
export function plan(modelsDir: string, id: string, fields: ModelFields): Target {
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

export interface ManifestDraft extends Record<string, unknown> {
  files: Record<string, string>;
}

export function manifestOf(target: Target, fields: ModelFields, family: ModelFamily, type: string, files: Record<string, string>): ManifestDraft {
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
export function foundManifest(target: Target, fields: ModelFields, family: ModelFamily, type: string, files: Record<string, string>): ManifestDraft {
  return { ...manifestOf(target, fields, family, type, files), ...(files.bpe_vocab ? { modeling_unit: 'bpe' } : {}) };
}

/**
 * Write the manifest into `dir`, check the model as the server would, and move `dir` into place as `folder`. Errors
 * name `source`, where the files came from, rather than their copy in the download area.
 */
export async function install(dir: string, folder: string, manifest: ManifestDraft, source: string, check: InstallOptions['check']): Promise<InstalledModel> {
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

/** The id of a model named after its source: `base` lower case, with -v1. */
export function defaultId(base: string): string {
  return `${base.toLowerCase().replace(/[^a-z0-9._-]+/g, '-')}-v1`;
}
