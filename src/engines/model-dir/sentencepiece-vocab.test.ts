// The BPE vocabulary sherpa-onnx reads (bpe_vocab), from a SentencePiece model: a hand-built model gives its pieces
// in id order with their float32 scores written as export_bpe_vocab.py writes them; the real model's 500 pieces are
// its tokens.txt; a file that is not a SentencePiece model is refused.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasRealModel, REAL_STREAMING_MODEL } from '../../../test/real-model.js';
import { ProtobufError } from './protobuf.js';
import { sentencePieces, vocabText } from './sentencepiece-vocab.js';

if (!hasRealModel) console.warn(`sentencepiece-vocab.test.ts: the tests on the real model are skipped: ${REAL_STREAMING_MODEL} does not exist`);

// Protobuf by hand: a field's tag is its number times 8 plus its wire type (0 varint, 2 bytes, 5 float).
const varint = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...varint(Math.floor(n / 128))]);
const bytes = (field: number, payload: number[]) => [...varint(field * 8 + 2), ...varint(payload.length), ...payload];
const float = (field: number, x: number) => [field * 8 + 5, ...new Uint8Array(new Float32Array([x]).buffer)];
const piece = (text: string, score: number, type: number) =>
  bytes(1, [...bytes(1, [...Buffer.from(text)]), ...float(2, score), ...varint(3 * 8), ...varint(type)]);

describe('the BPE vocabulary of a SentencePiece model', () => {
  it('lists the pieces in id order, each with its score, and skips the other fields', () => {
    const model = new Uint8Array([
      ...piece('<unk>', 0, 2),
      ...piece('▁THE', -3.1, 1),
      ...piece('S', -2.25, 1),
      // trainer_spec (field 2): a message of its own, not pieces.
      ...bytes(2, [...varint(3 * 8), ...varint(500)]),
      ...piece('A B', -9, 4),
    ]);
    const pieces = sentencePieces(model);
    expect(pieces.map((p) => p.piece)).toEqual(['<unk>', '▁THE', 'S', 'A B']);
    // A score is a float32, written as the double it is (as Python prints it in export_bpe_vocab.py).
    expect(vocabText(pieces)).toBe('<unk>\t0\n▁THE\t-3.0999999046325684\nS\t-2.25\n');
  });

  it.each<[string, number[]]>([
    ['no pieces', [...bytes(2, [])]],
    ['a piece cut short', piece('▁THE', -3, 1).slice(0, -2)],
    ['a piece that is not UTF-8', bytes(1, [...bytes(1, [0xff, 0xfe]), ...float(2, -1)])],
    ['a score that is not a number', bytes(1, [...bytes(1, [0x41]), ...float(2, NaN)])],
  ])('refuses a model with %s', (_what, model) => {
    expect(() => sentencePieces(new Uint8Array(model))).toThrow(ProtobufError);
  });

  it.skipIf(!hasRealModel)("gives the real model's 500 pieces, in the order of its tokens.txt", () => {
    const pieces = sentencePieces(readFileSync(path.join(REAL_STREAMING_MODEL, 'bpe.model')));
    const tokens = readFileSync(path.join(REAL_STREAMING_MODEL, 'tokens.txt'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]);
    expect(pieces.map((p) => p.piece)).toEqual(tokens);
    const lines = vocabText(pieces).trimEnd().split('\n');
    expect(lines).toHaveLength(500);
    expect(lines.slice(0, 4)).toEqual(['<blk>\t0', '<sos/eos>\t0', '<unk>\t0', 'S\t-2.97365403175354']);
    for (const l of lines) expect(l).toMatch(/^\S+\t-?\d+(\.\d+)?(e-?\d+)?$/);
  });
});
