// A hostile probe of `parlance models import / pull / remove`: ids and aliases that are no model ids (one that climbs
// out of the models directory), folders and archives whose links leave them or whose entries are no files, archives
// cut short or of garbage, model files cut short, empty or huge and empty. Each fails with one line on stderr (exit
// 2, no stack), touches nothing outside the models directory and leaves that as it was. The table of what was tried
// is docs/guide/security.md.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { runCli, tempDir } from '../harness.js';

const root = tempDir('parlance-hostile-models-');
/** A good model folder (an energy CTC model: model.onnx, tokens.txt), copied for each case. */
const good = path.join(root, 'good');
const flags = ['--family', 'stt-offline', '--type', 'nemo-ctc'];
let n = 0;

beforeAll(() => {
  mkdirSync(good, { recursive: true });
  writeEnergyCtcModel(good);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh data dir, and what its models directory holds (hidden entries too). */
function dataDir(): { dir: string; models: () => string[] } {
  const dir = path.join(root, `data-${++n}`);
  return { dir, models: () => (existsSync(path.join(dir, 'models')) ? readdirSync(path.join(dir, 'models')).sort() : []) };
}

/** A copy of the good folder named `name`, changed by `change`. */
function variant(name: string, change: (dir: string) => void): string {
  const dir = path.join(root, name);
  cpSync(good, dir, { recursive: true });
  change(dir);
  return dir;
}

/** Run `models <args>` on a fresh data dir: it must fail with one line matching `message`, leaving no model. */
async function refused(args: string[], message: RegExp): Promise<void> {
  const d = dataDir();
  const r = await runCli(['models', ...args, '--data-dir', d.dir]);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(d.models()).toEqual([]);
}

describe('ids and aliases', () => {
  // Found by this probe: the id named the work folder before it was checked, so `--id ../../../victim` removed (and
  // unpacked into) `<data dir>/../victim.unpack`, outside the models directory, before failing.
  it('an --id that climbs out of the models directory is refused before any folder is touched', async () => {
    const victim = path.join(root, 'victim.unpack');
    mkdirSync(victim);
    writeFileSync(path.join(victim, 'keep.txt'), 'precious');
    execFileSync('tar', ['-czf', `${good}.tar.gz`, '-C', root, 'good']);
    const d = dataDir();
    // <data dir>/models/.downloads/../../../victim.unpack is <root>/victim.unpack: a folder import and an archive's.
    for (const source of [good, `${good}.tar.gz`]) {
      const r = await runCli(['models', 'import', source, ...flags, '--id', '../../../victim', '--data-dir', d.dir]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/the id "\.\.\/\.\.\/\.\.\/victim" is not a model id/);
      expect(readFileSync(path.join(victim, 'keep.txt'), 'utf8')).toBe('precious');
    }
    expect(readdirSync(root)).not.toContain('victim.unpack.good.tar.gz');
  });

  it.each([['BAD ID'], ['x'], ['a/b-v1'], ['-v1'], ['Upper-v1']])('a malformed --id %j', async (id) => {
    await refused(['import', good, ...flags, '--id', id], /is not a model id/);
  });

  it.each([['../x'], ['a b'], ['/etc/passwd']])('a malformed --alias %j', async (alias) => {
    await refused(['import', good, ...flags, '--alias', alias], /the alias ".*" is not a model id/);
  });

  it('remove: an id that is no model, or climbs out, removes nothing', async () => {
    const d = dataDir();
    expect((await runCli(['models', 'import', good, ...flags, '--id', 'keep-me-v1', '--data-dir', d.dir])).code).toBe(0);
    for (const id of ['../../etc', '', 'keep-me-v1/..', '.downloads']) {
      const r = await runCli(['models', 'remove', id, '--data-dir', d.dir]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no model .* in the models directory/);
    }
    expect(d.models()).toEqual(['keep-me-v1']);
  });
});

describe('links and entries that are no files', () => {
  // Found by this probe: a link to a file outside was installed as it was (the server would read that file as the
  // model's), and a relative link inside came out pointing back into the source folder.
  it('a folder whose link leads outside it (to a file that would pass as the model file) is refused', async () => {
    const outside = path.join(root, 'outside-tokens.txt');
    cpSync(path.join(good, 'tokens.txt'), outside);
    const src = variant('link-out', (dir) => {
      rmSync(path.join(dir, 'tokens.txt'));
      symlinkSync(outside, path.join(dir, 'tokens.txt'));
    });
    await refused(['import', src, ...flags], /link-out: tokens\.txt is a link to .*outside-tokens\.txt; a model's links must be relative/);
    const relative = variant('link-up', (dir) => {
      rmSync(path.join(dir, 'tokens.txt'));
      symlinkSync('../outside-tokens.txt', path.join(dir, 'tokens.txt'));
    });
    await refused(['import', relative, ...flags], /tokens\.txt is a link to \.\.\/outside-tokens\.txt/);
  });

  it('an archive whose link leads outside is refused; an absolute link and a link to nothing too', async () => {
    const src = variant('arch-out', (dir) => {
      rmSync(path.join(dir, 'tokens.txt'));
      symlinkSync('../../../../etc/hostname', path.join(dir, 'tokens.txt'));
    });
    execFileSync('tar', ['-cjf', `${src}.tar.bz2`, '-C', root, 'arch-out']);
    await refused(['import', `${src}.tar.bz2`, ...flags], /arch-out\/tokens\.txt is a link to/);
    const absolute = variant('abs-in', (dir) => symlinkSync(path.join(dir, 'model.onnx'), path.join(dir, 'copy.onnx')));
    await refused(['import', absolute, ...flags], /copy\.onnx is a link to \//);
    const dangling = variant('dangling', (dir) => symlinkSync('nothing.onnx', path.join(dir, 'extra.onnx')));
    await refused(['import', dangling, ...flags], /extra\.onnx is a link to nothing\.onnx/);
  });

  it('a relative link inside the folder is kept as it is: the copy stands alone', async () => {
    const src = variant('link-in', (dir) => {
      execFileSync('mv', [path.join(dir, 'model.onnx'), path.join(dir, 'real.onnx')]);
      symlinkSync('real.onnx', path.join(dir, 'model.onnx'));
    });
    const d = dataDir();
    const r = await runCli(['models', 'import', src, ...flags, '--id', 'link-in-v1', '--data-dir', d.dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(readlinkSync(path.join(d.dir, 'models', 'link-in-v1', 'model.onnx'))).toBe('real.onnx');
    rmSync(src, { recursive: true });
    expect(readFileSync(path.join(d.dir, 'models', 'link-in-v1', 'model.onnx')).length).toBeGreaterThan(0);
  });

  // Found by this probe: cpSync stopped at the pipe, and the command died with its stack trace (exit 1).
  it('a folder holding a named pipe is refused in one line, before anything is copied', async () => {
    const src = variant('fifo', (dir) => execFileSync('mkfifo', [path.join(dir, 'pipe')]));
    await refused(['import', src, ...flags], /fifo: pipe is not a file, a folder or a link/);
  });
});

describe('archives and model files cut short, garbage or huge', () => {
  it('an archive cut short, and garbage named like an archive', async () => {
    execFileSync('tar', ['-cjf', path.join(root, 'whole.tar.bz2'), '-C', root, 'good']);
    writeFileSync(path.join(root, 'cut.tar.bz2'), readFileSync(path.join(root, 'whole.tar.bz2')).subarray(0, 300));
    await refused(['import', path.join(root, 'cut.tar.bz2'), ...flags], /could not unpack .*cut\.tar\.bz2/);
    writeFileSync(path.join(root, 'garbage.tar.bz2'), Buffer.alloc(5000, 0x5a));
    await refused(['import', path.join(root, 'garbage.tar.bz2'), ...flags], /could not unpack .*garbage\.tar\.bz2/);
  });

  it('a model file cut short, empty, or huge and empty (a sparse 256 MiB of zeros): named, nothing left behind', async () => {
    const cut = variant('cut-onnx', (dir) => writeFileSync(path.join(dir, 'model.onnx'), readFileSync(path.join(good, 'model.onnx')).subarray(0, 600)));
    await refused(['import', cut, ...flags], /files\.model: model\.onnx is cut short/);
    const empty = variant('empty-onnx', (dir) => writeFileSync(path.join(dir, 'model.onnx'), ''));
    await refused(['import', empty, ...flags], /files\.model: model\.onnx is empty/);
    const huge = variant('huge-onnx', (dir) => {
      writeFileSync(path.join(dir, 'model.onnx'), '');
      truncateSync(path.join(dir, 'model.onnx'), 256 * 1024 * 1024);
    });
    await refused(['import', huge, ...flags], /files\.model: model\.onnx is not an ONNX model/);
  }, 60_000);
});
