// A cheap look at an .onnx file before sherpa-onnx is given it. An ONNX model is a protobuf ModelProto, and
// onnxruntime refuses one without an IR version (field 1), a graph (field 7) or an opset import (field 8); so the
// file's top-level fields must run exactly to its end, and include those three. A download or copy cut short, or another file saved under the name (an
// HTML error page), fails here with the file named, where onnxruntime would abort the process that loads it. Only
// the fields' headers are read: a model of any size costs a few small reads.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { LEN, ProtobufError, readField, VARINT } from './protobuf.js';

const IR_VERSION = 1;
const GRAPH = 7;
const OPSET_IMPORT = 8;
/** Bytes that hold any field's header: a tag and a length of up to 10 bytes each. */
const HEADER_BYTES = 20;

/** What makes `file` no ONNX model ("is cut short ...", said after its name), or undefined when its top level is sound. */
export function onnxProblem(file: string): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 'is empty';
    const head = Buffer.alloc(HEADER_BYTES);
    const found = new Set<number>();
    for (let pos = 0; pos < size;) {
      const read = readSync(fd, head, 0, HEADER_BYTES, pos);
      let field;
      try {
        field = readField(head.subarray(0, read), 0);
      } catch (err) {
        if (!(err instanceof ProtobufError)) throw err;
        return read < HEADER_BYTES ? cutShort(size) : `is not an ONNX model (no protobuf field at byte ${pos})`;
      }
      if (pos + field.end > size) return cutShort(size);
      if (field.wire === (field.number === IR_VERSION ? VARINT : LEN)) found.add(field.number);
      pos += field.end;
    }
    if (!found.has(GRAPH)) return 'is not an ONNX model (it has no graph)';
    if (!found.has(IR_VERSION)) return 'is not an ONNX model (it has no IR version)';
    // The opset imports follow the graph: without them, the file may have been cut right after it.
    if (!found.has(OPSET_IMPORT)) return 'is not a whole ONNX model (it has no opset import): an interrupted download or copy?';
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function cutShort(size: number): string {
  return `is cut short (it ends inside a field, at ${size} bytes): an interrupted download or copy?`;
}
