// What a node compares at each poll to notice model folders copied into or removed from its models directory by hand
// (nobody renewed the version stamp): the folders' names, and the times and sizes of the folders and their manifests.
// One readdir and two stats a folder, asynchronous (the directory may be on a network volume); no model file is read.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_FILE } from '../../engines/model-dir/manifest.js';
import { DOWNLOADS_DIR } from '../../engines/model-dir/pull.js';

/** A string that changes when a folder of `dir` is added, removed, replaced or has its manifest changed. */
export async function modelsDirListing(dir: string): Promise<string> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && e.name !== DOWNLOADS_DIR) // the pulls' work area changes while they run
      .map((e) => e.name)
      .sort();
  } catch {
    return ''; // no models directory (yet): no models
  }
  const parts = await Promise.all(
    names.map(async (name) => {
      const folder = await stat(path.join(dir, name)).catch(() => undefined);
      const manifest = await stat(path.join(dir, name, MANIFEST_FILE)).catch(() => undefined);
      return `${name}:${folder?.ino ?? '-'}:${folder?.mtimeMs ?? '-'}:${manifest ? `${manifest.mtimeMs}:${manifest.size}` : '-'}`;
    }),
  );
  return parts.join('\n');
}
