// sherpa-onnx splits hotwords into a BPE model's pieces with a vocabulary file (its bpe_vocab): one "piece<TAB>score"
// line per piece, as sentencepiece's spm_export_vocab and sherpa-onnx's scripts/export_bpe_vocab.py write it, read
// by splitting each line at white space. Archives often ship only the bpe.model it comes from: a SentencePiece
// ModelProto (protobuf) whose field 1 holds the pieces in id order, each a message with the piece (field 1, a
// string) and its score (field 2, a float); the vocabulary is read from that here.
import { readFileSync, writeFileSync } from 'node:fs';
import { fields, I32, LEN, ProtobufError } from './protobuf.js';

const PIECES = 1;
const PIECE = 1;
const SCORE = 2;

export interface SentencePiece {
  piece: string;
  score: number;
}

/** The pieces of a SentencePiece model, in id order; a ProtobufError when `model` is not one. */
export function sentencePieces(model: Uint8Array): SentencePiece[] {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const pieces: SentencePiece[] = [];
  for (const entry of fields(model)) {
    if (entry.number !== PIECES) continue;
    if (entry.wire !== LEN) throw new ProtobufError(`field ${PIECES} at byte ${entry.start} is not a piece`);
    const piece: SentencePiece = { piece: '', score: 0 };
    for (const f of fields(model, entry.start, entry.end)) {
      if (f.number === PIECE && f.wire === LEN) piece.piece = decode(utf8, model.subarray(f.start, f.end), pieces.length);
      else if (f.number === SCORE && f.wire === I32) piece.score = new DataView(model.buffer, model.byteOffset + f.start, 4).getFloat32(0, true);
    }
    if (!Number.isFinite(piece.score)) throw new ProtobufError(`piece ${pieces.length} has no finite score`);
    pieces.push(piece);
  }
  if (!pieces.length) throw new ProtobufError('it holds no pieces');
  return pieces;
}

function decode(utf8: TextDecoder, bytes: Uint8Array, id: number): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProtobufError(`piece ${id} is not UTF-8 text`);
  }
}

/** The vocabulary file's text. A piece with white space in it (the reader splits there) is left out: none is written so. */
export function vocabText(pieces: readonly SentencePiece[]): string {
  return pieces
    .filter((p) => p.piece && !/\s/u.test(p.piece))
    .map((p) => `${p.piece}\t${p.score}\n`)
    .join('');
}

/** Write the vocabulary of the SentencePiece model `modelFile` to `vocabFile`; a ProtobufError when it is not one. */
export function writeBpeVocab(modelFile: string, vocabFile: string): void {
  writeFileSync(vocabFile, vocabText(sentencePieces(readFileSync(modelFile))));
}
