// The models directory: one folder per model, each with a parlance-model.json (manifest.ts). Folders without a
// manifest are left alone (a download in progress, notes); a folder with a broken manifest stops the start.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { type InstalledModel, MANIFEST_FILE, ModelManifestError, readManifest } from './manifest.js';

/** Every model in `dir` (missing directory: none), in folder-name order; throws ModelManifestError for a broken one. */
export function scanModelsDir(dir: string): InstalledModel[] {
  if (!existsSync(dir)) return [];
  const models: InstalledModel[] = [];
  const seen = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || !existsSync(path.join(dir, entry.name, MANIFEST_FILE))) continue;
    const model = readManifest(path.join(dir, entry.name));
    for (const name of [model.id, ...(model.aliases ?? [])]) {
      const other = seen.get(name);
      if (other)
        throw new ModelManifestError(path.join(model.dir, MANIFEST_FILE), `"${name}" is also claimed by ${other}`, 'give each model its own id and aliases');
      seen.set(name, path.join(model.dir, MANIFEST_FILE));
    }
    models.push(model);
  }
  return models;
}
