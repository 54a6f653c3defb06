// The look at an .onnx file before sherpa-onnx loads it: a whole model passes; a file cut short anywhere, one that is
// not protobuf, and a protobuf message without a model's fields are named for what they are.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { identityOnnxModel } from '../../../test/fixtures/sherpa-models.js';
import { hasRealModel, REAL_STREAMING_MODEL } from '../../../test/real-model.js';
import { tempDir } from '../../../test/harness.js';
import { onnxProblem } from './onnx-file.js';

if (!hasRealModel) console.warn(`onnx-file.test.ts: the tests on the real model are skipped: ${REAL_STREAMING_MODEL} does not exist`);
const root = tempDir('onnx-file-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const write = (name: string, bytes: Uint8Array | string) => {
  const file = path.join(root, name);
  writeFileSync(file, bytes);
  return file;
};

describe('onnxProblem', () => {
  const model = identityOnnxModel();

  it('passes a whole model', () => {
    expect(onnxProblem(write('whole.onnx', model))).toBeUndefined();
  });

  it('finds a model cut short at every length', () => {
    for (let n = 1; n < model.length; n++) expect(onnxProblem(write('cut.onnx', model.subarray(0, n))), `cut at ${n}`).toMatch(/is cut short|is not/);
    expect(onnxProblem(write('cut.onnx', model.subarray(0, model.length - 3)))).toMatch(/^is cut short \(it ends inside a field/);
  });

  it.each<[string, Uint8Array | string, RegExp]>([
    ['an empty file', '', /^is empty$/],
    ['an HTML page', '<!DOCTYPE html><html><body>Not Found</body></html>', /^is not an ONNX model \(no protobuf field at byte \d+\)$/],
    // Field 1 (a varint) alone: protobuf, but no graph.
    ['a message without a graph', new Uint8Array([0x08, 0x08]), /^is not an ONNX model \(it has no graph\)$/],
    // A graph (field 7, empty) but no IR version.
    ['a graph without an IR version', new Uint8Array([0x3a, 0x00, 0x42, 0x00]), /^is not an ONNX model \(it has no IR version\)$/],
    // IR version and graph, nothing after: a file cut right after its graph.
    ['a model without its opset imports', new Uint8Array([0x08, 0x08, 0x3a, 0x00]), /^is not a whole ONNX model \(it has no opset import\)/],
  ])('names %s', (_what, bytes, problem) => {
    expect(onnxProblem(write('bad.onnx', bytes))).toMatch(problem);
  });

  it.skipIf(!hasRealModel)('passes the real model files, and finds their truncated copies', () => {
    const encoder = path.join(REAL_STREAMING_MODEL, 'encoder-epoch-12-avg-2-chunk-16-left-64.int8.onnx');
    expect(onnxProblem(encoder)).toBeUndefined();
    expect(onnxProblem(path.join(REAL_STREAMING_MODEL, 'decoder-epoch-12-avg-2-chunk-16-left-64.onnx'))).toBeUndefined();
    const bytes = readFileSync(encoder);
    expect(onnxProblem(write('encoder-half.onnx', bytes.subarray(0, bytes.length >> 1)))).toMatch(/^is cut short/);
    expect(onnxProblem(write('encoder-short.onnx', bytes.subarray(0, bytes.length - 100)))).toMatch(/is cut short|has no opset import/);
  });
});
