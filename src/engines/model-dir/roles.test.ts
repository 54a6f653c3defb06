// Which file plays which role: int8 files first, except a transducer's decoder (fp32 first); a catalogue's names
// when the archive has them, an operator's (--file) always; a transducer's BPE vocabulary, written from bpe.model
// when the folder has no bpe.vocab.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasRealModel, REAL_STREAMING_MODEL } from '../../../test/real-model.js';
import { tempDir } from '../../../test/harness.js';
import { PullError } from './pull-error.js';
import { findRoles } from './roles.js';

if (!hasRealModel) console.warn(`roles.test.ts: the tests on the real model are skipped: ${REAL_STREAMING_MODEL} does not exist`);
const root = tempDir('roles-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let folders = 0;
/** A folder holding `files` (contents do not matter: roles are found by name). */
function folder(...files: string[]): string {
  const dir = path.join(root, String(++folders));
  mkdirSync(dir);
  for (const f of files) writeFileSync(path.join(dir, f), f);
  return dir;
}

const E = 'encoder-epoch-12-avg-2-chunk-16-left-64';
const D = 'decoder-epoch-12-avg-2-chunk-16-left-64';
const J = 'joiner-epoch-12-avg-2-chunk-16-left-64';
/** sherpa-onnx's transducer archives: every file in both precisions. */
const transducerFiles = [`${E}.onnx`, `${E}.int8.onnx`, `${D}.onnx`, `${D}.int8.onnx`, `${J}.onnx`, `${J}.int8.onnx`, 'tokens.txt'];

describe('findRoles', () => {
  it.each<[string, 'stt-streaming' | 'stt-offline']>([
    ['transducer', 'stt-streaming'],
    ['transducer', 'stt-offline'],
    ['nemo-transducer', 'stt-offline'],
  ])("takes a %s's (%s) fp32 decoder, and the int8 encoder and joiner", (type, family) => {
    expect(findRoles(folder(...transducerFiles), family, type, 'the folder')).toEqual({
      encoder: `${E}.int8.onnx`,
      decoder: `${D}.onnx`,
      joiner: `${J}.int8.onnx`,
      tokens: 'tokens.txt',
    });
  });

  it.each<[string, 'stt-streaming' | 'stt-offline', string]>([
    ['whisper', 'stt-offline', 'tiny-'],
    ['paraformer', 'stt-streaming', ''],
  ])('keeps int8 first for the decoder of a %s (%s)', (type, family, prefix) => {
    const dir = folder(...['encoder.onnx', 'encoder.int8.onnx', 'decoder.onnx', 'decoder.int8.onnx'].map((f) => prefix + f), 'tokens.txt');
    expect(findRoles(dir, family, type, 'x')).toMatchObject({ encoder: `${prefix}encoder.int8.onnx`, decoder: `${prefix}decoder.int8.onnx` });
  });

  it("takes a catalogue's names where the folder has them, and the operator's in any case", () => {
    const pinned = { encoder: `${E}.onnx`, joiner: `${J}.onnx` };
    const withoutFp32Encoder = folder(...transducerFiles.filter((f) => f !== `${E}.onnx`));
    expect(findRoles(withoutFp32Encoder, 'stt-streaming', 'transducer', 'x', pinned)).toMatchObject({ encoder: `${E}.int8.onnx`, joiner: `${J}.onnx` });
    const all = folder(...transducerFiles);
    expect(findRoles(all, 'stt-streaming', 'transducer', 'x', pinned, { joiner: `${J}.int8.onnx` })).toMatchObject({
      encoder: `${E}.onnx`,
      joiner: `${J}.int8.onnx`,
    });
    expect(() => findRoles(withoutFp32Encoder, 'stt-streaming', 'transducer', 'the folder', {}, { encoder: `${E}.onnx` })).toThrow(
      new PullError(`the folder has no ${E}.onnx (files: ${readdirSync(withoutFp32Encoder).join(', ')})`),
    );
    expect(() => findRoles(all, 'stt-streaming', 'transducer', 'x', {}, { model: 'model.onnx' })).toThrow(
      /^--file model=\.\.\.: a transducer model's files are encoder, decoder, joiner, tokens$/,
    );
  });

  it("uses a transducer's bpe.vocab as its BPE vocabulary, and no other type's", () => {
    const dir = folder(...transducerFiles, 'bpe.vocab', 'bpe.model');
    expect(findRoles(dir, 'stt-offline', 'transducer', 'x').bpe_vocab).toBe('bpe.vocab');
    expect(readFileSync(path.join(dir, 'bpe.vocab'), 'utf8')).toBe('bpe.vocab');
    expect(findRoles(folder('model.onnx', 'tokens.txt', 'bpe.model'), 'stt-streaming', 'zipformer2-ctc', 'x').bpe_vocab).toBeUndefined();
  });

  it('refuses a bpe.model that is not a SentencePiece model, naming it', () => {
    expect(() => findRoles(folder(...transducerFiles, 'bpe.model'), 'stt-streaming', 'transducer', 'the archive')).toThrow(
      /^the archive's bpe\.model is not a SentencePiece model \(/,
    );
  });

  it.skipIf(!hasRealModel)('writes bpe.vocab from the real bpe.model', () => {
    const dir = folder(...transducerFiles);
    copyFileSync(path.join(REAL_STREAMING_MODEL, 'bpe.model'), path.join(dir, 'bpe.model'));
    expect(findRoles(dir, 'stt-streaming', 'transducer', 'x').bpe_vocab).toBe('bpe.vocab');
    const lines = readFileSync(path.join(dir, 'bpe.vocab'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(500);
    expect(lines[5]).toMatch(/^▁THE\t-\d\.\d+$/);
  });
});
