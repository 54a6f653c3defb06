// `parlance models import PATH`, for machines without internet: a local archive installs as `models pull` would
// (an archive named like a catalogue entry's takes that entry, checksum included); a local folder is copied into
// the models directory, with its own parlance-model.json if it has one, else one written from the flags and the
// files found by name; the server then offers it. A folder whose files do not make the type, a broken manifest, a
// URL or a missing path fail with one line (exit 2), leaving the models directory and the source as they were.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { runCli, startParlance, tempDir } from '../harness.js';

const root = tempDir('parlance-import-');
/** A model folder as sherpa-onnx's archives hold it (no manifest). */
const folder = path.join(root, 'pack', 'sherpa-onnx-energy-yes-en');
const archive = path.join(root, 'sherpa-onnx-energy-yes-en.tar.gz');
/** The same with its own manifest (extra fields, such as threads, travel with it). */
const own = path.join(root, 'own-manifest');
const ownManifest = {
  id: 'energy-own-v2',
  family: 'stt-offline',
  type: 'nemo-ctc',
  files: { model: 'model.onnx', tokens: 'tokens.txt' },
  languages: ['en'],
  threads: 2,
  aliases: ['stt-async-v4'],
};
let catalogueFile: string;

const modelsOf = (dataDir: string) => (existsSync(path.join(dataDir, 'models')) ? readdirSync(path.join(dataDir, 'models')).sort() : []);
const listing = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();

beforeAll(() => {
  mkdirSync(folder, { recursive: true });
  const files = writeEnergyCtcModel(folder);
  copyFileSync(files.model, path.join(folder, 'model.int8.onnx'));
  cpSync(folder, own, { recursive: true });
  writeFileSync(path.join(own, 'parlance-model.json'), JSON.stringify(ownManifest));
  execFileSync('tar', ['-czf', archive, '-C', path.join(root, 'pack'), 'sherpa-onnx-energy-yes-en']);
  const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
  // An entry whose URL is never reached: the archive comes from the disk, the entry supplies the rest.
  catalogueFile = path.join(root, 'catalogue.json');
  const entry = {
    title: 'Energy yes',
    url: 'http://127.0.0.1:9/releases/sherpa-onnx-energy-yes-en.tar.gz',
    family: 'stt-offline',
    type: 'nemo-ctc',
    languages: ['en'],
    id: 'energy-en-v3',
  };
  writeFileSync(catalogueFile, JSON.stringify([{ ...entry, name: 'energy-yes-en', sha256 }]));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('parlance models import', () => {
  it('installs a local archive as pull does, and one named like a catalogue entry with its metadata and checksum', async () => {
    const dataDir = path.join(root, 'archive');
    const r = await runCli([
      'models',
      'import',
      archive,
      '--family',
      'stt-offline',
      '--type',
      'nemo-ctc',
      '--id',
      'energy-local-v1',
      '--data-dir',
      dataDir,
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { model: { id: string; files: Record<string, string> }; archive: { source: string; checked: boolean } };
    expect(out.model).toMatchObject({ id: 'energy-local-v1', files: { model: 'model.int8.onnx', tokens: 'tokens.txt' } });
    expect(out.archive).toMatchObject({ source: archive, checked: false });
    const known = await runCli(['models', 'import', archive, '--data-dir', dataDir], { PARLANCE_MODELS_CATALOGUE: catalogueFile });
    expect(known.code).toBe(0);
    expect(known.stdout).toMatch(/^energy-en-v3: stt-offline nemo-ctc model in /);
    expect(known.stdout).toMatch(/\nsha256 [0-9a-f]{64} \(matches the catalogue\)$/m);
    expect(modelsOf(dataDir)).toEqual(['energy-en-v3', 'energy-local-v1']);
    expect(existsSync(archive)).toBe(true);
  }, 30_000);

  it('copies a folder without a manifest, writing one from the flags, and leaves the source as it was', async () => {
    const dataDir = path.join(root, 'folder');
    const before = listing(folder);
    const r = await runCli([
      'models',
      'import',
      folder,
      '--family',
      'stt-offline',
      '--type',
      'nemo-ctc',
      '--alias',
      'stt-async-v3',
      '--data-dir',
      dataDir,
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { model: { id: string; dir: string; aliases: string[] }; archive: null };
    expect(out.model).toMatchObject({ id: 'sherpa-onnx-energy-yes-en-v1', aliases: ['stt-async-v3'] });
    expect(out.archive).toBeNull();
    expect(readdirSync(out.model.dir).sort()).toEqual(['model.int8.onnx', 'model.onnx', 'parlance-model.json', 'tokens.txt']);
    expect(listing(folder)).toEqual(before);
    expect(modelsOf(dataDir)).toEqual(['sherpa-onnx-energy-yes-en-v1']);
  }, 30_000);

  it("uses a folder's own manifest (flags change its id, name and aliases), and the server offers the model", async () => {
    const dataDir = path.join(root, 'own');
    const r = await runCli(['models', 'import', own, '--alias', 'stt-async-v3', '--data-dir', dataDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      `energy-own-v2: stt-offline nemo-ctc model in ${path.join(dataDir, 'models', 'energy-own-v2')} (the server offers it from its next start)`,
    );
    const installed = JSON.parse(readFileSync(path.join(dataDir, 'models', 'energy-own-v2', 'parlance-model.json'), 'utf8')) as Record<string, unknown>;
    expect(installed).toEqual({ ...ownManifest, aliases: ['stt-async-v3'] });
    const s = await startParlance({ dataDir, keepDataDir: true });
    try {
      const { models } = (await (await s.request('/v1/models')).json()) as { models: { id: string; aliased_model_id: string | null }[] };
      expect(models.find((m) => m.id === 'stt-async-v3')?.aliased_model_id).toBe('energy-own-v2');
    } finally {
      await s.stop();
    }
  }, 60_000);

  it.each<[string, () => string, string[], RegExp]>([
    [
      'a folder whose files do not make the type',
      () => folder,
      ['--family', 'stt-offline', '--type', 'nemo-transducer'],
      /the folder has no file for encoder, decoder, joiner \(files: .*\); a nemo-transducer model needs/,
    ],
    ['a folder without a manifest or --family/--type', () => folder, [], /has no parlance-model\.json: give --family and --type/],
    [
      'a folder with a broken manifest',
      () => {
        const broken = path.join(root, 'broken');
        cpSync(folder, broken, { recursive: true });
        writeFileSync(path.join(broken, 'parlance-model.json'), '{"id": "Not Versioned"');
        return broken;
      },
      [],
      /broken\/parlance-model\.json: not readable JSON/,
    ],
    ['a folder whose manifest says another type', () => own, ['--type', 'paraformer'], /says stt-offline nemo-ctc; drop --family\/--type/],
    ['a URL', () => 'https://example.com/model.tar.bz2', [], /takes a local archive or folder; use `parlance models pull` for a URL/],
    [
      'a path that does not exist',
      () => path.join(root, 'nothing-here.tar.bz2'),
      ['--family', 'stt-offline', '--type', 'nemo-ctc'],
      /nothing-here\.tar\.bz2 is not a file/,
    ],
  ])(
    'fails with one line (exit 2) and leaves nothing behind: %s',
    async (what, source, flags, message) => {
      const dataDir = path.join(root, `bad-${what.replace(/\W+/g, '-')}`);
      const src = source();
      const before = existsSync(src) ? listing(src) : [];
      const r = await runCli(['models', 'import', src, ...flags, '--data-dir', dataDir]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(modelsOf(dataDir)).toEqual([]);
      if (existsSync(src)) expect(listing(src)).toEqual(before);
    },
    30_000,
  );
});
