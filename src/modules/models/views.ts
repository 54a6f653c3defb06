// How GET /v1/admin/models shows a model: an installed one (its folder, and the record of its pull if it had one) or
// a pull's record alone (under way, or failed); and the catalogue entries beside them.
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { InstalledModel } from '../../engines/model-dir/manifest.js';
import type { ResolvedSource } from '../../engines/model-dir/sources.js';
import type { ModelRow, ModelStatus } from './records.js';

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

/**
 * What the pull job works from (stored with the record, so that any job node can run it). `unknown`: a catalogue
 * name the catalogue does not have (its record ends failed at once; no job runs).
 */
export interface Plan {
  kind: ResolvedSource['kind'] | 'unknown';
  options: Record<string, unknown> & { source: string };
}

/** An installed model, with the record of its pull when it had one. */
export function installedView(m: InstalledModel, row: ModelRow | undefined, loaded: boolean): ModelView {
  // Its folder is in place, but the pull has not said ready yet (this node is starting to serve it).
  if (row && (row.status === 'downloading' || row.status === 'installing')) return rowView(row);
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
    loaded,
    created_at: row?.created_at ?? null,
    updated_at: row?.updated_at ?? null,
  };
}

/** A pull's record alone (under way, failed, or ready on a node whose folder is not there). */
export function rowView(r: ModelRow): ModelView {
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

/** Bytes of the files below `dir`. */
export function folderSize(dir: string): number {
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
