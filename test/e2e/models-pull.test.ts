// `parlance models pull`: an archive in the shape of sherpa-onnx's releases (one top folder, int8 and float files
// side by side) served over HTTP is unpacked into the models directory with a manifest whose files are found by
// name (checked against --sha256); the server then offers it, and `models remove` takes it away. A missing URL, an
// unreachable host, a cut-off download, a wrong checksum, a non-archive and an archive without the type's files fail
// with one line (exit 2) and leave nothing behind.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { runCli, startParlance, tempDir } from '../harness.js';

const root = tempDir('parlance-pull-');
let server: Server;
let base: string;

beforeAll(async () => {
  // sherpa-onnx-<name>/ with a float and an int8 model and the tokens, packed as .tar.bz2.
  const top = path.join(root, 'pack', 'sherpa-onnx-energy-yes-en');
  mkdirSync(top, { recursive: true });
  const files = writeEnergyCtcModel(top);
  copyFileSync(files.model, path.join(top, 'model.int8.onnx'));
  writeFileSync(path.join(top, 'README.md'), 'a test model\n');
  execFileSync('tar', ['-cjf', path.join(root, 'sherpa-onnx-energy-yes-en.tar.bz2'), '-C', path.join(root, 'pack'), 'sherpa-onnx-energy-yes-en']);
  const onlyTokens = path.join(root, 'pack2', 'tokens-only');
  mkdirSync(onlyTokens, { recursive: true });
  writeFileSync(path.join(onlyTokens, 'tokens.txt'), '<blk> 0\n');
  execFileSync('tar', ['-czf', path.join(root, 'tokens-only.tar.gz'), '-C', path.join(root, 'pack2'), 'tokens-only']);
  writeFileSync(path.join(root, 'not-an-archive.tar.bz2'), 'hello');
  server = createServer((req, res) => {
    if (req.url === '/cut.tar.bz2') {
      // Half the archive, then the connection drops.
      const whole = readFileSync(path.join(root, 'sherpa-onnx-energy-yes-en.tar.bz2'));
      res.writeHead(200, { 'content-length': String(whole.length) });
      res.write(whole.subarray(0, whole.length >> 1), () => res.destroy());
      return;
    }
    const file = path.join(root, path.basename(req.url ?? ''));
    if (!existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

/** A port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

describe('parlance models pull', () => {
  it('unpacks a release archive into the models directory with a manifest, and the server offers the model', async () => {
    const dataDir = path.join(root, 'data');
    const sha256 = createHash('sha256').update(readFileSync(path.join(root, 'sherpa-onnx-energy-yes-en.tar.bz2'))).digest('hex');
    const r = await runCli(['models', 'pull', `${base}/sherpa-onnx-energy-yes-en.tar.bz2`, '--family', 'stt-offline', '--type', 'nemo-ctc', '--alias', 'stt-async-v3', '--sha256', sha256, '--data-dir', dataDir, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { model } = JSON.parse(r.stdout) as { model: { id: string; dir: string; files: Record<string, string> } };
    expect(model.id).toBe('sherpa-onnx-energy-yes-en-v1');
    expect(model.dir).toBe(path.join(dataDir, 'models', 'sherpa-onnx-energy-yes-en-v1'));
    // The int8 file is chosen; the rest of the archive stays beside it.
    expect(model.files).toEqual({ model: 'model.int8.onnx', tokens: 'tokens.txt' });
    expect(readdirSync(model.dir).sort()).toEqual(['README.md', 'model.int8.onnx', 'model.onnx', 'parlance-model.json', 'tokens.txt']);
    expect(readdirSync(path.join(dataDir, 'models'))).toEqual(['sherpa-onnx-energy-yes-en-v1']);
    // Pulling it again does not overwrite it.
    const again = await runCli(['models', 'pull', `${base}/sherpa-onnx-energy-yes-en.tar.bz2`, '--family', 'stt-offline', '--type', 'nemo-ctc', '--data-dir', dataDir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists already/);
    const s = await startParlance({ dataDir, keepDataDir: true });
    try {
      const { models } = (await (await s.request('/v1/models')).json()) as { models: { id: string; aliased_model_id: string | null }[] };
      expect(models.find((m) => m.id === 'stt-async-v3')?.aliased_model_id).toBe('sherpa-onnx-energy-yes-en-v1');
    } finally {
      await s.stop();
    }
    // Removed: its folder is gone; an unknown id is an error.
    const removed = await runCli(['models', 'remove', 'sherpa-onnx-energy-yes-en-v1', '--data-dir', dataDir]);
    expect(removed.code).toBe(0);
    expect(readdirSync(path.join(dataDir, 'models'))).toEqual([]);
    const unknown = await runCli(['models', 'remove', 'sherpa-onnx-energy-yes-en-v1', '--data-dir', dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no model sherpa-onnx-energy-yes-en-v1/);
  }, 60_000);

  it.each<[string, string, string, RegExp, string[]]>([
    ['a URL that answers 404', 'missing.tar.bz2', 'nemo-ctc', /could not download .*HTTP 404/, []],
    ['a file that is not an archive', 'not-an-archive.tar.bz2', 'nemo-ctc', /could not unpack/, []],
    ['an archive without the files of its type', 'tokens-only.tar.gz', 'nemo-ctc', /no file for model/, []],
    ['a type the family lacks', 'sherpa-onnx-energy-yes-en.tar.bz2', 'wav2vec', /not a stt-offline model type/, []],
    ['a checksum that does not match', 'sherpa-onnx-energy-yes-en.tar.bz2', 'nemo-ctc', /checksum mismatch/, ['--sha256', '0'.repeat(64)]],
    ['a download cut off', 'cut.tar.bz2', 'nemo-ctc', /cut off|could not download|could not unpack/, []],
    ['an unreachable host', 'closed-port', 'nemo-ctc', /could not download .*ECONNREFUSED/, []],
  ])('fails with one line (exit 2) and leaves nothing behind: %s', async (_what, file, type, message, extra) => {
    const dataDir = path.join(root, `bad-${path.basename(file)}-${type}-${extra.length}`);
    const url = file === 'closed-port' ? `http://127.0.0.1:${await closedPort()}/x.tar.bz2` : `${base}/${file}`;
    const r = await runCli(['models', 'pull', url, '--family', 'stt-offline', '--type', type, ...extra, '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(existsSync(path.join(dataDir, 'models')) ? readdirSync(path.join(dataDir, 'models')) : []).toEqual([]);
  }, 30_000);
});
