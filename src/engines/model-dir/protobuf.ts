// The protobuf wire format, as far as reading model files needs it: a message's fields, each with its number, wire
// type and where its bytes lie. ONNX models (onnx-file.ts) and SentencePiece models (sentencepiece-vocab.ts) are
// protobuf messages; the few fields read here need no schema.

export class ProtobufError extends Error {}

/** Wire types (3 and 4, the deprecated groups, appear in none of these formats). */
export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;

export interface Field {
  number: number;
  wire: number;
  /** A varint's value, or a length-delimited field's length. */
  value: number;
  /** Where the field's payload starts and ends (a varint's own bytes). */
  start: number;
  end: number;
}

/** The varint at `pos`, and the position after it. */
export function readVarint(buf: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0;
  // Multiplication, not shifts: lengths and 64-bit values pass 2^31.
  for (let i = 0, scale = 1; i < 10; i++, scale *= 128) {
    const byte = buf[pos + i];
    if (byte === undefined) throw new ProtobufError(`a number at byte ${pos} runs past the end`);
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos + i + 1];
  }
  throw new ProtobufError(`a number at byte ${pos} is longer than 10 bytes`);
}

/** The field whose tag is at `pos`. Only its header is read: its end may lie past `buf` (fields() checks it). */
export function readField(buf: Uint8Array, pos: number): Field {
  const [tag, at] = readVarint(buf, pos);
  const number = Math.floor(tag / 8);
  const wire = tag % 8;
  if (number === 0) throw new ProtobufError(`byte ${pos} is not a field (number 0)`);
  if (wire === VARINT) {
    const [value, end] = readVarint(buf, at);
    return { number, wire, value, start: at, end };
  }
  if (wire === LEN) {
    const [length, start] = readVarint(buf, at);
    return { number, wire, value: length, start, end: start + length };
  }
  if (wire === I64 || wire === I32) return { number, wire, value: 0, start: at, end: at + (wire === I64 ? 8 : 4) };
  throw new ProtobufError(`byte ${pos} is not a field (wire type ${wire})`);
}

/** The fields of the message in buf[start, end); a ProtobufError when one runs past `end`. */
export function* fields(buf: Uint8Array, start = 0, end = buf.length): Generator<Field> {
  for (let pos = start; pos < end;) {
    const field = readField(buf, pos);
    if (field.end > end) throw new ProtobufError(`field ${field.number} at byte ${pos} runs ${field.end - end} bytes past the end`);
    yield field;
    pos = field.end;
  }
}
