// Model folders: a good manifest is read with its files resolved; every way a folder can be broken (an .onnx file cut
// short among them) names the file and the fix; folders without a manifest are left alone; two models cannot claim
// one name.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { identityOnnxModel } from '../../../test/fixtures/sherpa-models.js';
import { tempDir } from '../../../test/harness.js';
import { MANIFEST_FILE, ModelManifestError, readManifest } from './manifest.js';
import { scanModelsDir } from './scan.js';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A model folder: its .onnx files whole ONNX models, unless `contents` has theirs. */
function folder(name: string, manifest: unknown, files: string[] = ['model.onnx', 'tokens.txt'], contents: Record<string, Uint8Array | string> = {}): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(path.join(dir, f), contents[f] ?? (f.endsWith('.onnx') ? identityOnnxModel() : 'x'));
  writeFileSync(path.join(dir, MANIFEST_FILE), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  return dir;
}

const ctc = (over: Record<string, unknown> = {}) => ({
  id: 'tiny-ctc-v1',
  family: 'stt-offline',
  type: 'nemo-ctc',
  files: { model: 'model.onnx', tokens: 'tokens.txt' },
  languages: ['en'],
  ...over,
});

describe('model folders', () => {
  it('reads a manifest with its files as absolute paths', () => {
    root = tempDir('models-');
    const dir = folder('ctc', ctc({ aliases: ['stt-async-v4'] }));
    const m = readManifest(dir);
    expect(m).toMatchObject({ id: 'tiny-ctc-v1', family: 'stt-offline', type: 'nemo-ctc', aliases: ['stt-async-v4'], dir });
    expect(m.paths).toEqual({ model: path.join(dir, 'model.onnx'), tokens: path.join(dir, 'tokens.txt') });
  });

  it("reads a streaming transducer's BPE modeling unit and vocabulary", () => {
    root = tempDir('models-');
    const files = { encoder: 'encoder.int8.onnx', decoder: 'decoder.onnx', joiner: 'joiner.int8.onnx', tokens: 'tokens.txt', bpe_vocab: 'bpe.vocab' };
    const dir = folder('zipformer', { ...ctc({ family: 'stt-streaming', type: 'transducer', files }), modeling_unit: 'bpe' }, Object.values(files));
    expect(readManifest(dir)).toMatchObject({ modeling_unit: 'bpe', paths: { bpe_vocab: path.join(dir, 'bpe.vocab') } });
  });

  it.each<[string, unknown, RegExp, Record<string, Uint8Array | string>?]>([
    ['not JSON', '{"id": ', /not readable JSON.*fix the JSON/],
    ['an id without a version', ctc({ id: 'tiny' }), /field id: .*end in a version, like whisper-tiny-en-v1/],
    ['an unknown family', ctc({ family: 'music' }), /field family/],
    ['a type the family lacks', ctc({ type: 'wav2vec' }), /type "wav2vec" is not a stt-offline model type.*use one of: whisper/],
    ['a missing file role', ctc({ files: { model: 'model.onnx' } }), /files\.tokens is missing.*add "tokens"/],
    ['a file that is not there', ctc({ files: { model: 'model.onnx', tokens: 'vocab.txt' } }), /files\.tokens: vocab\.txt does not exist.*copy the file/],
    ['an unknown field', ctc({ colour: 'blue' }), /colour|additional/i],
    ['a BPE modeling unit without its vocabulary', ctc({ modeling_unit: 'bpe' }), /modeling_unit "bpe" needs files\.bpe_vocab.*add the model's bpe\.vocab/],
    [
      'a language-id model without its decoder',
      ctc({ family: 'language-id', type: 'whisper', files: { encoder: 'model.onnx' } }),
      /files\.decoder is missing \(a whisper model needs encoder, decoder\).*add "decoder"/,
    ],
    [
      'an .onnx file cut short',
      ctc(),
      /files\.model: model\.onnx is cut short \(it ends inside a field, at \d+ bytes\).*replace it with a whole copy/,
      { 'model.onnx': identityOnnxModel().subarray(0, 30) },
    ],
    ['an .onnx file that is no model', ctc(), /files\.model: model\.onnx is not an ONNX model/, { 'model.onnx': '<html>Not Found</html>' }],
  ])('stops at %s, naming the file and the fix', (_what, manifest, message, contents) => {
    root = tempDir('models-');
    const dir = folder('bad', manifest, undefined, contents);
    const err = (() => {
      try {
        readManifest(dir);
      } catch (e) {
        return e as ModelManifestError;
      }
    })();
    expect(err).toBeInstanceOf(ModelManifestError);
    expect(err!.file).toBe(path.join(dir, MANIFEST_FILE));
    expect(err!.message).toContain(path.join(dir, MANIFEST_FILE));
    expect(err!.message).toMatch(message);
  });

  it('scans one folder per model, skips folders without a manifest, and refuses two claims of one name', () => {
    root = tempDir('models-');
    expect(scanModelsDir(path.join(root, 'none'))).toEqual([]);
    folder('a', ctc());
    folder('b', ctc({ id: 'other-ctc-v2' }));
    mkdirSync(path.join(root, 'downloading'));
    expect(scanModelsDir(root).map((m) => m.id)).toEqual(['tiny-ctc-v1', 'other-ctc-v2']);
    folder('c', ctc({ id: 'third-v1', aliases: ['other-ctc-v2'] }));
    expect(() => scanModelsDir(root)).toThrow(/c\/parlance-model\.json: "other-ctc-v2" is also claimed by .*b\/parlance-model\.json/);
  });
});
