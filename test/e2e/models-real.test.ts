// `parlance models import` of a real model, the streaming Zipformer transducer kept beside the project (read only):
// it installs with its fp32 decoder, its int8 encoder and joiner, and a BPE vocabulary written from its bpe.model;
// `models list` offers it under the alias it took. Broken copies (made in temporary folders) are refused at import
// with one line naming the file: an encoder cut short; an int8 encoder sherpa-onnx cannot load (in a child process),
// naming the fp32 encoder beside it, which --file then chooses. The server's start refuses an installed model whose
// encoder was cut short since. An archive with the catalogue entry's file name takes the entry, whose pinned fp32
// encoder it lacks: the int8 one is taken instead.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasRealModel, importRealModel, REAL_STREAMING_MODEL } from '../real-model.js';
import { runCli, tempDir } from '../harness.js';

if (!hasRealModel) console.warn(`models-real.test.ts: the tests on the real model are skipped: ${REAL_STREAMING_MODEL} does not exist`);
const root = tempDir('parlance-real-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ENCODER = 'encoder-epoch-12-avg-2-chunk-16-left-64';
const DECODER = 'decoder-epoch-12-avg-2-chunk-16-left-64';
const JOINER = 'joiner-epoch-12-avg-2-chunk-16-left-64';
const streaming = ['--family', 'stt-streaming', '--type', 'transducer'];

const modelsOf = (dataDir: string) => (existsSync(path.join(dataDir, 'models')) ? readdirSync(path.join(dataDir, 'models')).sort() : []);
const manifestOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'parlance-model.json'), 'utf8')) as Record<string, unknown>;

/** A writable copy of the real model's folder, `name` under the test's root. */
function copyOfModel(name: string): string {
  const dir = path.join(root, name);
  cpSync(REAL_STREAMING_MODEL, dir, { recursive: true });
  for (const f of ['', ...(readdirSync(dir, { recursive: true }) as string[])]) chmodSync(path.join(dir, f), statSync(path.join(dir, f)).mode | 0o200);
  return dir;
}

describe.skipIf(!hasRealModel)('a real streaming transducer', () => {
  it('imports with its fp32 decoder, int8 encoder and joiner and a BPE vocabulary, and is listed under its alias', async () => {
    const dataDir = path.join(root, 'data');
    await importRealModel(dataDir, 'kws-zipformer-v1', ['--alias', 'stt-rt-v4']);
    const dir = path.join(dataDir, 'models', 'kws-zipformer-v1');
    expect(manifestOf(dir)).toEqual({
      id: 'kws-zipformer-v1',
      family: 'stt-streaming',
      type: 'transducer',
      files: {
        encoder: `${ENCODER}.int8.onnx`,
        decoder: `${DECODER}.onnx`,
        joiner: `${JOINER}.int8.onnx`,
        tokens: 'tokens.txt',
        bpe_vocab: 'bpe.vocab',
      },
      languages: ['en'],
      aliases: ['stt-rt-v4'],
      modeling_unit: 'bpe',
    });
    const vocab = readFileSync(path.join(dir, 'bpe.vocab'), 'utf8').trimEnd().split('\n');
    expect(vocab).toHaveLength(500);
    expect(vocab).toContain('▁THE\t-3.6791045665740967');
    // The source is left as it was.
    expect(existsSync(path.join(REAL_STREAMING_MODEL, 'bpe.vocab'))).toBe(false);

    const list = await runCli(['models', 'list', '--data-dir', dataDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^kws-zipformer-v1 +real_time +kws-zipformer-v1$/m);
    expect(list.stdout).toMatch(/^stt-rt-v4 +real_time +→ kws-zipformer-v1$/m);

    // An encoder cut short after the import stops the server's start, naming the file.
    truncateSync(path.join(dir, `${ENCODER}.int8.onnx`), 1_000_000);
    const serve = await runCli(['serve', '--port', '0', '--data-dir', dataDir]);
    expect(serve.code).toBe(2);
    expect(serve.stderr.trim().split('\n')).toHaveLength(1);
    expect(serve.stderr).toContain(`${path.join(dir, 'parlance-model.json')}: files.encoder: ${ENCODER}.int8.onnx is cut short`);
  }, 90_000);

  it('refuses a copy whose encoder is cut short, with one line naming the file', async () => {
    const dir = copyOfModel('cut');
    truncateSync(path.join(dir, `${ENCODER}.int8.onnx`), 2_000_000);
    const dataDir = path.join(root, 'cut-data');
    const r = await runCli(['models', 'import', dir, ...streaming, '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${dir}: files.encoder: ${ENCODER}.int8.onnx is cut short (it ends inside a field, at 2000000 bytes)`);
    expect(modelsOf(dataDir)).toEqual([]);
  }, 30_000);

  it('refuses an int8 encoder sherpa-onnx cannot load, naming the fp32 encoder beside it, which --file then chooses', async () => {
    // The int8 name holds a joiner (a whole ONNX file that is no encoder); the fp32 name holds the working encoder.
    const dir = copyOfModel('int8-fails');
    copyFileSync(path.join(REAL_STREAMING_MODEL, `${ENCODER}.int8.onnx`), path.join(dir, `${ENCODER}.onnx`));
    copyFileSync(path.join(REAL_STREAMING_MODEL, `${JOINER}.int8.onnx`), path.join(dir, `${ENCODER}.int8.onnx`));
    const dataDir = path.join(root, 'int8-data');
    const r = await runCli(['models', 'import', dir, ...streaming, '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(
      `the int8 encoder ${ENCODER}.int8.onnx could not be loaded, the fp32 encoder ${ENCODER}.onnx beside it can: bring the model again with --file encoder=${ENCODER}.onnx`,
    );
    expect(r.stderr).toMatch(/could not be loaded by sherpa-onnx/);
    expect(modelsOf(dataDir)).toEqual([]);

    const chosen = await runCli(['models', 'import', dir, ...streaming, '--file', `encoder=${ENCODER}.onnx`, '--data-dir', dataDir, '--json']);
    expect(chosen.stderr).toBe('');
    expect(chosen.code).toBe(0);
    const { model } = JSON.parse(chosen.stdout) as { model: { files: Record<string, string> } };
    expect(model.files).toMatchObject({ encoder: `${ENCODER}.onnx`, decoder: `${DECODER}.onnx`, joiner: `${JOINER}.int8.onnx` });
  }, 60_000);

  it("installs an archive named like the catalogue entry's with the entry, taking the int8 encoder when the fp32 one is not in it", async () => {
    const top = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01';
    copyOfModel(path.join('pack', top));
    const archive = path.join(root, `${top}.tar.bz2`);
    execFileSync('tar', ['-cjf', archive, '-C', path.join(root, 'pack'), top]);
    const dataDir = path.join(root, 'archive-data');
    const r = await runCli(['models', 'import', archive, '--data-dir', dataDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^zipformer-gigaspeech-3m-streaming-en-v1: stt-streaming transducer model in /);
    const manifest = manifestOf(path.join(dataDir, 'models', 'zipformer-gigaspeech-3m-streaming-en-v1'));
    expect(manifest).toMatchObject({
      name: 'icefall streaming Zipformer transducer, 3.3M (English, GigaSpeech, 320 ms chunks)',
      files: { encoder: `${ENCODER}.int8.onnx`, decoder: `${DECODER}.onnx`, joiner: `${JOINER}.int8.onnx`, tokens: 'tokens.txt', bpe_vocab: 'bpe.vocab' },
      modeling_unit: 'bpe',
    });
  }, 60_000);
});
