// What `models pull SOURCE` and `models import PATH` are given, made into pull or import options: a catalogue name,
// a URL (the catalogue's entry for it, if any, supplies what the flags do not), a local archive or .onnx file (an
// archive named like a catalogue entry's takes that entry, checksum included, unless --family says otherwise), or a
// local folder.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { type CatalogueEntry, findEntry, findEntryByUrl } from './catalogue.js';
import { MODEL_TYPES, type ModelFamily } from './manifest.js';
import type { FolderImportOptions, PullOptions } from './pull.js';
import { PullError } from './pull-error.js';

export interface SourceFlags {
  family?: string;
  type?: string;
  id?: string;
  name?: string;
  language?: string[];
  alias?: string[];
  /** false with --no-aliases: not even the catalogue's suggested aliases. */
  aliases?: boolean;
  sha256?: string;
  /** --file role=name: the file of a role, instead of the one found by name. */
  file?: string[];
}

export type ResolvedSource =
  | {
      kind: 'archive';
      options: Omit<PullOptions, 'modelsDir' | 'progress'>;
      entry?: CatalogueEntry;
      /** Where the expected checksum comes from, if there is one. */
      checkedAgainst?: '--sha256' | 'the catalogue';
    }
  | { kind: 'folder'; options: Omit<FolderImportOptions, 'modelsDir'> };

export function resolveSource(source: string, flags: SourceFlags, catalogue: readonly CatalogueEntry[], command: 'pull' | 'import'): ResolvedSource {
  if (flags.family !== undefined && !(flags.family in MODEL_TYPES)) throw new PullError(`--family must be one of: ${Object.keys(MODEL_TYPES).join(', ')}`);
  if (flags.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(flags.sha256)) throw new PullError('--sha256 must be 64 hex digits');
  const aliases = flags.aliases === false ? [] : flags.alias;
  const chosenFiles = chosenFilesOf(flags.file);
  const remote = /^https?:\/\//.test(source);
  if (command === 'import' && remote) throw new PullError('`parlance models import` takes a local archive or folder; use `parlance models pull` for a URL');
  const local = !remote && existsSync(source);
  if (local && statSync(source).isDirectory()) {
    return {
      kind: 'folder',
      options: {
        source,
        family: flags.family as ModelFamily | undefined,
        type: flags.type,
        id: flags.id,
        name: flags.name,
        languages: flags.language,
        aliases,
        chosenFiles,
      },
    };
  }
  let entry: CatalogueEntry | undefined;
  let from = source;
  if (remote) entry = findEntryByUrl(catalogue, source);
  else if (local) entry = flags.family ? undefined : findEntry(catalogue, path.basename(source));
  else if (command === 'import' || /[/\\]/.test(source) || /\.(tar\.bz2|tar\.gz|tgz|tar\.xz|tar|onnx)$/.test(source))
    throw new PullError(`${source} is not a file`);
  else {
    entry = findEntry(catalogue, source);
    if (!entry)
      throw new PullError(
        `unknown model "${source}": \`parlance models catalogue\` lists the names; or give a URL or an archive's path with --family and --type`,
      );
    from = entry.url;
  }
  const family = (flags.family ?? entry?.family) as ModelFamily | undefined;
  const type = flags.type ?? entry?.type;
  if (!family || !type) throw new PullError(`${source} is not in the catalogue (\`parlance models catalogue\`): give --family and --type`);
  const sha256 = flags.sha256 ?? entry?.sha256;
  return {
    kind: 'archive',
    entry,
    checkedAgainst: flags.sha256 ? '--sha256' : entry?.sha256 ? 'the catalogue' : undefined,
    options: {
      source: from,
      family,
      type,
      id: flags.id ?? entry?.id,
      name: flags.name ?? entry?.title,
      languages: flags.language ?? entry?.languages,
      aliases,
      suggestedAliases: entry?.aliases,
      sha256,
      files: entry?.files,
      chosenFiles,
      extras: entry?.extras,
      voices: entry?.voices,
    },
  };
}

/** --file flags as role → file name; a PullError for one that is not `role=name`. */
function chosenFilesOf(flags: string[] = []): Record<string, string> | undefined {
  if (!flags.length) return undefined;
  const bad = flags.find((f) => !/^[a-z_]+=[^/\\]+$/.test(f));
  if (bad !== undefined) throw new PullError(`--file ${bad}: give a role and a file name of the model, e.g. --file encoder=encoder.onnx`);
  return Object.fromEntries(flags.map((f) => [f.slice(0, f.indexOf('=')), f.slice(f.indexOf('=') + 1)]));
}
