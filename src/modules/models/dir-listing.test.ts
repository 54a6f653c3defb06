// modelsDirListing: what the poll compares changes when a model folder is added, removed, replaced or has its
// manifest edited, and not for the pulls' work area or for a missing directory.
import { mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { tempDir } from '../../../test/harness.js';
import { DOWNLOADS_DIR } from '../../engines/model-dir/pull.js';
import { modelsDirListing } from './dir-listing.js';

const root = tempDir('parlance-dir-listing-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('changes with the model folders and their manifests, not with the download area', async () => {
  const dir = path.join(root, 'models');
  expect(await modelsDirListing(dir)).toBe('');
  mkdirSync(dir);
  const empty = await modelsDirListing(dir);

  mkdirSync(path.join(dir, DOWNLOADS_DIR, 'part'), { recursive: true });
  writeFileSync(path.join(dir, 'notes.txt'), 'not a folder');
  expect(await modelsDirListing(dir)).toBe(empty);

  const staged = path.join(root, 'staged');
  mkdirSync(staged);
  writeFileSync(path.join(staged, 'parlance-model.json'), '{}');
  renameSync(staged, path.join(dir, 'a'));
  const added = await modelsDirListing(dir);
  expect(added).not.toBe(empty);
  expect(await modelsDirListing(dir)).toBe(added);

  // An edited manifest: another size, another time.
  const manifest = path.join(dir, 'a', 'parlance-model.json');
  writeFileSync(manifest, '{"id":"a"}');
  utimesSync(manifest, new Date(2001, 0, 1), new Date(2001, 0, 1));
  const edited = await modelsDirListing(dir);
  expect(edited).not.toBe(added);

  rmSync(path.join(dir, 'a'), { recursive: true });
  expect(await modelsDirListing(dir)).toBe(empty);
});
