// `parlance models pull`: an archive in the shape of sherpa-onnx's releases (one top folder, int8 and float files
// side by side) served over HTTP is unpacked into the models directory with a manifest whose files are found by
// name (checked against --sha256); the server then offers it, and `models remove` takes it away. A missing URL, an
// unreachable host, a cut-off download, a wrong checksum, a non-archive, an archive without the type's files and a
// full disk fail with one line (exit 2) and leave the models directory as it was; a cut-off download keeps its
// partial file in the download area and the next pull continues it with a Range request. Catalogue names resolve
// through the built-in catalogue, pointed at the local server by PARLANCE_MODELS_CATALOGUE. Progress goes to stderr:
// a bar on a terminal (run under script(1)), plain periodic lines otherwise, nothing with --json.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canMountTmpfs, fillDisk, mountTmpfs, unmount } from '../disk-full.js';
import { identityOnnxModel, writeCtcModelWithoutMetadata, writeEnergyCtcModel } from '../fixtures/sherpa-models.js';
import { CLI, runCli, startParlance, tempDir } from '../harness.js';

const root = tempDir('parlance-pull-');
const ARCHIVE = 'sherpa-onnx-energy-yes-en.tar.bz2';
let server: Server;
let base: string;
let whole: Buffer;
let wholeSha: string;
let catalogueFile: string;
/** Every request: its URL and Range / If-Range headers. */
const requests: { url: string; range?: string; ifRange?: string }[] = [];
const hits = new Map<string, number>();
/** The vocoder's bytes as served. */
const vocoder = identityOnnxModel();

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const modelsOf = (dataDir: string) => (existsSync(path.join(dataDir, 'models')) ? readdirSync(path.join(dataDir, 'models')).sort() : []);

/**
 * GET /<mode>/.../<file>: `plain` serves the file; `cut` sends half of it and drops the connection; `resume` cuts the
 * first request of a URL and honours Range after (416 past the end), `ranged` honours it from the first; `norange`
 * cuts the first and ignores Range after; `slow` sends the file in eight pieces 150 ms apart.
 */
function serve(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  requests.push({ url: `${base}${url}`, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined });
  const hit = (hits.get(url) ?? 0) + 1;
  hits.set(url, hit);
  const { pathname } = new URL(url, 'http://x');
  const mode = pathname.split('/')[1];
  const file = path.join(root, path.basename(pathname));
  if (!existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end();
  const body = readFileSync(file);
  const head = { 'content-type': 'application/octet-stream', 'content-length': String(body.length), etag: '"v1"' };
  if (mode === 'cut' || ((mode === 'resume' || mode === 'norange') && hit === 1)) {
    res.writeHead(200, head);
    // The drop comes a moment after the bytes, as it would mid-transfer (a stream that errors drops unread chunks).
    return void res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.destroy(), 300));
  }
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  if ((mode === 'resume' || mode === 'ranged') && range) {
    const start = Number(range[1]);
    if (start >= body.length) return void res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
    res.writeHead(206, { ...head, 'content-length': String(body.length - start), 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` });
    return void res.end(body.subarray(start));
  }
  res.writeHead(200, head);
  if (mode !== 'slow') return void res.end(body);
  const piece = Math.ceil(body.length / 8);
  let at = 0;
  const next = () => {
    res.write(body.subarray(at, at + piece));
    at += piece;
    if (at >= body.length) res.end();
    else setTimeout(next, 150);
  };
  next();
}

beforeAll(async () => {
  // sherpa-onnx-<name>/ with a float and an int8 model and the tokens, packed as .tar.bz2.
  const top = path.join(root, 'pack', 'sherpa-onnx-energy-yes-en');
  mkdirSync(top, { recursive: true });
  const files = writeEnergyCtcModel(top);
  copyFileSync(files.model, path.join(top, 'model.int8.onnx'));
  writeFileSync(path.join(top, 'README.md'), 'a test model\n');
  execFileSync('tar', ['-cjf', path.join(root, ARCHIVE), '-C', path.join(root, 'pack'), 'sherpa-onnx-energy-yes-en']);
  whole = readFileSync(path.join(root, ARCHIVE));
  wholeSha = sha256(whole);
  const onlyTokens = path.join(root, 'pack2', 'tokens-only');
  mkdirSync(onlyTokens, { recursive: true });
  writeFileSync(path.join(onlyTokens, 'tokens.txt'), '<blk> 0\n');
  execFileSync('tar', ['-czf', path.join(root, 'tokens-only.tar.gz'), '-C', path.join(root, 'pack2'), 'tokens-only']);
  writeFileSync(path.join(root, 'not-an-archive.tar.bz2'), 'hello');
  // The energy model with its int8 file cut short; a model sherpa-onnx cannot load (no metadata).
  const cut = path.join(root, 'pack-cut', 'cut-model');
  mkdirSync(cut, { recursive: true });
  writeFileSync(path.join(cut, 'model.int8.onnx'), readFileSync(files.model).subarray(0, 100));
  copyFileSync(files.tokens, path.join(cut, 'tokens.txt'));
  execFileSync('tar', ['-czf', path.join(root, 'cut-model.tar.gz'), '-C', path.join(root, 'pack-cut'), 'cut-model']);
  const unloadable = path.join(root, 'pack-unloadable', 'unloadable');
  writeCtcModelWithoutMetadata(unloadable);
  execFileSync('tar', ['-czf', path.join(root, 'unloadable.tar.gz'), '-C', path.join(root, 'pack-unloadable'), 'unloadable']);
  // A Matcha archive's layout (two acoustic models, tokens, espeak-ng-data) and its separately released vocoder;
  // single-file speaker embedding models. Nothing loads them here: their .onnx files need only be whole ONNX files.
  const matcha = path.join(root, 'pack3', 'matcha-icefall-en_US-ljspeech');
  mkdirSync(path.join(matcha, 'espeak-ng-data'), { recursive: true });
  for (const f of ['model-steps-2.onnx', 'model-steps-3.onnx', 'tokens.txt', 'espeak-ng-data/phontab'])
    writeFileSync(path.join(matcha, f), f.endsWith('.onnx') ? identityOnnxModel() : f);
  execFileSync('tar', ['-cjf', path.join(root, 'matcha-icefall-en_US-ljspeech.tar.bz2'), '-C', path.join(root, 'pack3'), 'matcha-icefall-en_US-ljspeech']);
  writeFileSync(path.join(root, 'vocos-22khz-univ.onnx'), vocoder);
  writeFileSync(path.join(root, 'wespeaker_en_voxceleb_resnet34.onnx'), 'not the real wespeaker model');
  writeFileSync(path.join(root, 'campplus-test.onnx'), identityOnnxModel());
  writeFileSync(path.join(root, 'big.tar.bz2'), randomBytes(256 * 1024));

  server = createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const energy = { title: 'Energy yes', url: `${base}/plain/${ARCHIVE}`, family: 'stt-offline', type: 'nemo-ctc', languages: ['en'], size_mb: 0.01 };
  catalogueFile = path.join(root, 'catalogue.json');
  writeFileSync(
    catalogueFile,
    JSON.stringify({
      // Built-in entries now download from the test server (their file names, their checksums).
      base_url: `${base}/plain`,
      entries: [
        { ...energy, name: 'energy-yes-en', id: 'energy-yes-en-v1', aliases: ['stt-async-v3'] },
        { ...energy, name: 'energy-checked', id: 'energy-checked-v1', aliases: ['stt-async-v3'], sha256: wholeSha },
        { ...energy, name: 'energy-wrong-sum', id: 'energy-wrong-v1', sha256: '0'.repeat(64) },
        { name: 'matcha-en-ljspeech', extras: [{ url: `${base}/plain/vocos-22khz-univ.onnx` }] },
        { name: '3dspeaker-campplus-en', url: `${base}/plain/campplus-test.onnx` },
        {
          name: 'matcha-resume',
          title: 'Matcha, its vocoder cut off',
          url: `${base}/ranged/matcha-icefall-en_US-ljspeech.tar.bz2?t=416`,
          family: 'tts',
          type: 'matcha',
          languages: ['en'],
          id: 'matcha-resume-v1',
          extras: [{ url: `${base}/resume/vocos-22khz-univ.onnx?t=416` }],
        },
      ],
    }),
  );
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

const pullArgs = (url: string, dataDir: string, ...extra: string[]) => [
  'models',
  'pull',
  url,
  '--family',
  'stt-offline',
  '--type',
  'nemo-ctc',
  ...extra,
  '--data-dir',
  dataDir,
];

describe('parlance models pull', () => {
  it('unpacks a release archive into the models directory with a manifest, and the server offers the model', async () => {
    const dataDir = path.join(root, 'data');
    const r = await runCli(pullArgs(`${base}/plain/${ARCHIVE}`, dataDir, '--alias', 'stt-async-v3', '--sha256', wholeSha, '--json'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      model: { id: string; dir: string; files: Record<string, string> };
      archive: { sha256: string; checked: boolean; resumed_from: number };
    };
    const { model } = out;
    expect(model.id).toBe('sherpa-onnx-energy-yes-en-v1');
    expect(model.dir).toBe(path.join(dataDir, 'models', 'sherpa-onnx-energy-yes-en-v1'));
    expect(out.archive).toMatchObject({ sha256: wholeSha, checked: true, resumed_from: 0 });
    // The int8 file is chosen; the rest of the archive stays beside it.
    expect(model.files).toEqual({ model: 'model.int8.onnx', tokens: 'tokens.txt' });
    expect(readdirSync(model.dir).sort()).toEqual(['README.md', 'model.int8.onnx', 'model.onnx', 'parlance-model.json', 'tokens.txt']);
    // The download area is gone once the pull is done.
    expect(modelsOf(dataDir)).toEqual(['sherpa-onnx-energy-yes-en-v1']);
    // Pulling it again does not overwrite it.
    const again = await runCli(pullArgs(`${base}/plain/${ARCHIVE}`, dataDir));
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
    expect(modelsOf(dataDir)).toEqual([]);
    const unknown = await runCli(['models', 'remove', 'sherpa-onnx-energy-yes-en-v1', '--data-dir', dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no model sherpa-onnx-energy-yes-en-v1/);
  }, 60_000);

  it.each<[string, string, string, RegExp, string[]]>([
    ['a URL that answers 404', 'plain/missing.tar.bz2', 'nemo-ctc', /could not download .*HTTP 404/, []],
    ['a file that is not an archive', 'plain/not-an-archive.tar.bz2', 'nemo-ctc', /could not unpack/, []],
    ['an archive without the files of its type', 'plain/tokens-only.tar.gz', 'nemo-ctc', /the archive has no file for model/, []],
    ['an archive whose model file is cut short', 'plain/cut-model.tar.gz', 'nemo-ctc', /cut-model\.tar\.gz: files\.model: model\.int8\.onnx is cut short/, []],
    ['an archive sherpa-onnx cannot load', 'plain/unloadable.tar.gz', 'nemo-ctc', /unloadable\.tar\.gz\) could not be loaded by sherpa-onnx \(exit 255\)/, []],
    ['a type the family lacks', `plain/${ARCHIVE}`, 'wav2vec', /not a stt-offline model type/, []],
    ['a checksum that does not match', `plain/${ARCHIVE}`, 'nemo-ctc', /checksum mismatch/, ['--sha256', '0'.repeat(64)]],
    ['a download cut off', `cut/${ARCHIVE}`, 'nemo-ctc', /cut off at .* MB .*pull again to resume/, []],
    ['an unreachable host', 'closed-port', 'nemo-ctc', /could not download .*ECONNREFUSED/, []],
  ])(
    'fails with one line (exit 2) and leaves the models directory as it was: %s',
    async (_what, file, type, message, extra) => {
      const dataDir = path.join(root, `bad-${file.replace(/\W+/g, '-')}-${type}-${extra.length}`);
      const url = file === 'closed-port' ? `http://127.0.0.1:${await closedPort()}/x.tar.bz2` : `${base}/${file}`;
      const r = await runCli(['models', 'pull', url, '--family', 'stt-offline', '--type', type, ...extra, '--data-dir', dataDir]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      if (file.startsWith('cut/')) {
        // Only the partial file stays, in the download area, for the next pull to continue.
        expect(modelsOf(dataDir)).toEqual(['.downloads']);
        const parts = readdirSync(path.join(dataDir, 'models', '.downloads'));
        expect(parts.filter((f) => f.endsWith('.part'))).toHaveLength(1);
        expect(
          statSync(
            path.join(
              dataDir,
              'models',
              '.downloads',
              parts.find((f) => f.endsWith('.part'))!,
            ),
          ).size,
        ).toBe(whole.length >> 1);
      } else {
        expect(modelsOf(dataDir)).toEqual([]);
      }
    },
    30_000,
  );
});

describe('resuming an interrupted download', () => {
  it('continues a cut-off download with a Range request; the checksum covers the whole file', async () => {
    const dataDir = path.join(root, 'resume');
    const url = `${base}/resume/${ARCHIVE}?t=resume`;
    const first = await runCli(pullArgs(url, dataDir, '--sha256', wholeSha));
    expect(first.code).toBe(2);
    expect(first.stderr.trim().split('\n')).toHaveLength(1);
    expect(first.stderr).toMatch(/cut off/);
    expect(modelsOf(dataDir)).toEqual(['.downloads']);
    const second = await runCli(pullArgs(url, dataDir, '--sha256', wholeSha, '--json'));
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    const half = whole.length >> 1;
    // The second request asked for the rest, if the file is still the one the first answer's ETag named.
    expect(requests.filter((q) => q.url === url).map((q) => [q.range, q.ifRange])).toEqual([
      [undefined, undefined],
      [`bytes=${half}-`, '"v1"'],
    ]);
    const out = JSON.parse(second.stdout) as { model: { id: string }; archive: { sha256: string; checked: boolean; resumed_from: number } };
    expect(out.archive).toMatchObject({ sha256: wholeSha, checked: true, resumed_from: half });
    expect(modelsOf(dataDir)).toEqual([out.model.id]);
  }, 30_000);

  it('downloads the whole file again when the server ignores the range (200 instead of 206)', async () => {
    const dataDir = path.join(root, 'norange');
    const url = `${base}/norange/${ARCHIVE}?t=norange`;
    expect((await runCli(pullArgs(url, dataDir))).code).toBe(2);
    const second = await runCli(pullArgs(url, dataDir, '--sha256', wholeSha, '--json'));
    expect(second.code).toBe(0);
    expect(requests.filter((q) => q.url === url).map((q) => q.range)).toEqual([undefined, `bytes=${whole.length >> 1}-`]);
    expect((JSON.parse(second.stdout) as { archive: { resumed_from: number } }).archive.resumed_from).toBe(0);
    expect(modelsOf(dataDir)).toEqual(['sherpa-onnx-energy-yes-en-v1']);
  }, 30_000);

  it('resumes each file of a pull: a complete archive (416 to its range) and the extra file cut off after it', async () => {
    const dataDir = path.join(root, 'resume-extra');
    const env = { PARLANCE_MODELS_CATALOGUE: catalogueFile };
    const first = await runCli(['models', 'pull', 'matcha-resume', '--data-dir', dataDir], env);
    expect(first.code).toBe(2);
    expect(first.stderr).toMatch(/the download of .*vocos-22khz-univ\.onnx\?t=416 was cut off/);
    expect(modelsOf(dataDir)).toEqual(['.downloads']);
    const second = await runCli(['models', 'pull', 'matcha-resume', '--data-dir', dataDir, '--json'], env);
    expect(second.code).toBe(0);
    const archiveSize = statSync(path.join(root, 'matcha-icefall-en_US-ljspeech.tar.bz2')).size;
    const ranges = (file: string) => requests.filter((q) => q.url.includes(file) && q.url.endsWith('?t=416')).map((q) => q.range);
    expect(ranges('matcha-icefall')).toEqual([undefined, `bytes=${archiveSize}-`]);
    expect(ranges('vocos')).toEqual([undefined, `bytes=${vocoder.length >> 1}-`]);
    const out = JSON.parse(second.stdout) as { model: { dir: string }; archive: { resumed_from: number } };
    expect(out.archive.resumed_from).toBe(archiveSize);
    expect(readFileSync(path.join(out.model.dir, 'vocos-22khz-univ.onnx'))).toEqual(Buffer.from(vocoder));
    expect(modelsOf(dataDir)).toEqual(['matcha-resume-v1']);
  }, 30_000);
});

describe('download progress', () => {
  it('prints plain lines on stderr every few seconds when stderr is not a terminal, none with --json', async () => {
    const env = { PARLANCE_PULL_PROGRESS_SECONDS: '0.2' };
    const r = await runCli(pullArgs(`${base}/slow/${ARCHIVE}?t=lines`, path.join(root, 'lines')), env);
    expect(r.code).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const l of lines) expect(l).toMatch(new RegExp(`^downloading ${ARCHIVE.replace(/\./g, '\\.')}: \\d+% \\d+\\.\\d of \\d+\\.\\d MB, \\d+\\.\\d MB/s$`));
    expect(r.stdout).not.toMatch(/downloading|%/);
    const quiet = await runCli([...pullArgs(`${base}/slow/${ARCHIVE}?t=json`, path.join(root, 'lines-json')), '--json'], env);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
  }, 30_000);

  const hasScript = (() => {
    try {
      execFileSync('script', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!hasScript)(
    'draws a bar redrawn in place on a terminal, and nothing of it on stdout',
    async () => {
      const out = path.join(root, 'tty-stdout.txt');
      // script(1) gives the CLI a terminal for stderr; stdout goes to a file.
      const command =
        [process.execPath, CLI, ...pullArgs(`${base}/slow/${ARCHIVE}?t=tty`, path.join(root, 'tty'))].map((a) => `'${a}'`).join(' ') + ` > '${out}'`;
      const { stdout: terminal } = await promisify(execFile)('script', ['-qefc', command, '/dev/null']);
      expect(terminal).toMatch(/\r\S+ \[#+-*\] \d+% /);
      expect(terminal).toMatch(/\[#{20}\] 100% \d+\.\d of \d+\.\d MB/);
      const result = readFileSync(out, 'utf8');
      expect(result).toMatch(/^sherpa-onnx-energy-yes-en-v1: stt-offline nemo-ctc model in /);
      expect(result).not.toMatch(/%|\r/);
    },
    30_000,
  );
});

describe('the catalogue', () => {
  it('lists the known sherpa-onnx archives', async () => {
    const r = await runCli(['models', 'catalogue', '--json', '--data-dir', path.join(root, 'cat')]);
    expect(r.code).toBe(0);
    const { catalogue } = JSON.parse(r.stdout) as {
      catalogue: { name: string; url: string; family: string; type: string; sha256: string | null; size_mb: number; installed: boolean }[];
    };
    const names = catalogue.map((e) => e.name);
    for (const n of [
      'whisper-tiny.en',
      'whisper-base.en',
      'moonshine-tiny-en',
      'moonshine-base-en',
      'parakeet-tdt-0.6b-v2',
      'zipformer-en-2023-06-26',
      'sense-voice-2024-07-17',
      'piper-en-amy-low',
      'kokoro-en-v0_19',
      'matcha-en-ljspeech',
      '3dspeaker-campplus-en',
      'wespeaker-resnet34-en',
    ]) {
      expect(names).toContain(n);
    }
    for (const e of catalogue) {
      expect(e.url).toMatch(/^https:\/\/github\.com\/k2-fsa\/sherpa-onnx\/releases\/download\/(asr-models|kws-models|tts-models|speaker-recongition-models)\//);
      expect(e.sha256 === null || /^[0-9a-f]{64}$/.test(e.sha256)).toBe(true);
      expect(e.installed).toBe(false);
    }
    const human = await runCli(['models', 'catalogue', '--data-dir', path.join(root, 'cat')]);
    expect(human.stdout).toMatch(/^parakeet-tdt-0\.6b-v2 +stt-offline nemo-transducer +en +482 MB +stt-async-v4$/m);
  });

  it('pulls by name: family, type, languages and suggested aliases from the entry, the checksum computed and shown', async () => {
    const env = { PARLANCE_MODELS_CATALOGUE: catalogueFile };
    const dataDir = path.join(root, 'by-name');
    const r = await runCli(['models', 'pull', 'energy-yes-en', '--data-dir', dataDir], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [first, second] = r.stdout.trim().split('\n');
    expect(first).toBe(
      `energy-yes-en-v1: stt-offline nemo-ctc model in ${path.join(dataDir, 'models', 'energy-yes-en-v1')} (the server offers it from its next start)`,
    );
    expect(second).toMatch(new RegExp(`^sha256 ${wholeSha} \\(nothing to check it against`));
    const manifest = JSON.parse(readFileSync(path.join(dataDir, 'models', 'energy-yes-en-v1', 'parlance-model.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      id: 'energy-yes-en-v1',
      name: 'Energy yes',
      family: 'stt-offline',
      type: 'nemo-ctc',
      languages: ['en'],
      aliases: ['stt-async-v3'],
    });
    // A known checksum is checked; a suggested alias another model holds is left out (said so).
    const checked = await runCli(['models', 'pull', 'energy-checked', '--data-dir', dataDir, '--json'], env);
    expect(checked.code).toBe(0);
    const out = JSON.parse(checked.stdout) as { model: { aliases: string[] }; archive: { checked: boolean }; skipped_aliases: string[] };
    expect(out).toMatchObject({ model: { aliases: [] }, archive: { checked: true }, skipped_aliases: ['stt-async-v3'] });
    // An alias asked for that another model holds is an error; flags override the entry.
    const taken = await runCli(['models', 'pull', 'energy-yes-en', '--id', 'energy-other-v1', '--alias', 'stt-async-v3', '--data-dir', dataDir], env);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/stt-async-v3 is claimed by energy-yes-en-v1/);
    const bare = await runCli(
      ['models', 'pull', 'energy-yes-en', '--id', 'energy-bare-v2', '--no-aliases', '--language', 'de', '--data-dir', dataDir, '--json'],
      env,
    );
    expect(bare.code).toBe(0);
    const manifest2 = JSON.parse(readFileSync(path.join(dataDir, 'models', 'energy-bare-v2', 'parlance-model.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest2).toMatchObject({ id: 'energy-bare-v2', languages: ['de'] });
    expect(manifest2.aliases).toBeUndefined();
    expect(modelsOf(dataDir)).toEqual(['energy-bare-v2', 'energy-checked-v1', 'energy-yes-en-v1']);
    // A URL the catalogue knows takes its entry.
    const byUrl = await runCli(['models', 'pull', `${base}/plain/${ARCHIVE}`, '--data-dir', path.join(root, 'by-url'), '--json'], env);
    expect(byUrl.code).toBe(0);
    expect((JSON.parse(byUrl.stdout) as { model: { id: string } }).model.id).toBe('energy-yes-en-v1');
  }, 60_000);

  it('installs a single-file speaker embedding model, and Matcha with its separately released vocoder', async () => {
    const env = { PARLANCE_MODELS_CATALOGUE: catalogueFile };
    const dataDir = path.join(root, 'kinds');
    const emb = await runCli(['models', 'pull', '3dspeaker-campplus-en', '--data-dir', dataDir, '--json'], env);
    expect(emb.code).toBe(0);
    const e = JSON.parse(emb.stdout) as { model: { id: string; dir: string; family: string; files: Record<string, string> }; archive: { checked: boolean } };
    expect(e.model).toMatchObject({ id: '3dspeaker-campplus-en-v1', family: 'speaker-embedding', files: { model: 'campplus-test.onnx' } });
    // The entry's URL changed, so its built-in checksum no longer applies.
    expect(e.archive.checked).toBe(false);
    expect(readdirSync(e.model.dir).sort()).toEqual(['campplus-test.onnx', 'parlance-model.json']);
    const matcha = await runCli(['models', 'pull', 'matcha-en-ljspeech', '--data-dir', dataDir, '--json'], env);
    expect(matcha.code).toBe(0);
    const m = JSON.parse(matcha.stdout) as { model: { family: string; type: string; files: Record<string, string> } };
    expect(m.model).toMatchObject({ family: 'tts', type: 'matcha' });
    // The entry names the acoustic model among several; the vocoder joins the folder; espeak-ng-data is found.
    expect(m.model.files).toEqual({ acoustic_model: 'model-steps-3.onnx', vocoder: 'vocos-22khz-univ.onnx', tokens: 'tokens.txt', data_dir: 'espeak-ng-data' });
    expect(modelsOf(dataDir)).toEqual(['3dspeaker-campplus-en-v1', 'matcha-en-ljspeech-v1']);
  }, 30_000);

  it.each<[string, string, RegExp]>([
    ['an unknown name', 'no-such-model', /unknown model "no-such-model": `parlance models catalogue` lists the names/],
    ['a checksum in the catalogue that does not match', 'energy-wrong-sum', /checksum mismatch for .*: expected 0{64}/],
    [
      'a built-in checksum (from a mirror serving another file)',
      'wespeaker-resnet34-en',
      /checksum mismatch for .*wespeaker_en_voxceleb_resnet34\.onnx: expected 5ef208a9/,
    ],
  ])('fails with one line (exit 2) and leaves nothing behind: %s', async (_what, name, message) => {
    const dataDir = path.join(root, `bad-name-${name}`);
    const r = await runCli(['models', 'pull', name, '--data-dir', dataDir], { PARLANCE_MODELS_CATALOGUE: catalogueFile });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(modelsOf(dataDir)).toEqual([]);
  });
});

const mountable = await canMountTmpfs();
if (!mountable) console.warn('models-pull: the full-disk scenario is skipped, this process cannot mount a tmpfs (needs root)');

describe.skipIf(!mountable)('a full disk', () => {
  it('fails with one line (exit 2), drops the partial file and leaves the models directory as it was', async () => {
    const disk = tempDir('parlance-pull-disk-');
    expect(await mountTmpfs(disk, 1)).toBe(true);
    try {
      // Four pages left: the download starts, and its file meets ENOSPC long before its 256 KiB.
      const filler = path.join(disk, 'filler');
      fillDisk(filler);
      truncateSync(filler, statSync(filler).size - 16 * 1024);
      const r = await runCli(pullArgs(`${base}/plain/big.tar.bz2`, path.join(root, 'disk-data')), { PARLANCE_MODELS_DIR: disk });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/could not write in .*\.downloads: ENOSPC/);
      expect(readdirSync(disk)).toEqual(['filler']);
    } finally {
      await unmount(disk);
      rmSync(disk, { recursive: true, force: true });
    }
  }, 30_000);
});
