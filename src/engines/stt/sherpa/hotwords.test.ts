// Context terms as sherpa-onnx hotwords: which models take them, and the per-stream hotwords string built from terms.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { InstalledModel } from '../../model-dir/manifest.js';
import { hotwordsOf, takesHotwords, tokenCase } from './hotwords.js';

const dir = mkdtempSync(path.join(tmpdir(), 'hotwords-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const model = (over: Partial<InstalledModel>): InstalledModel =>
  ({ id: 'm-v1', family: 'stt-offline', type: 'transducer', files: {}, languages: ['en'], dir, paths: {}, ...over }) as InstalledModel;

describe('takesHotwords', () => {
  it('is true only for transducers (offline and streaming) whose manifest names a modeling unit', () => {
    expect(takesHotwords(model({ modeling_unit: 'bpe' }))).toBe(true);
    expect(takesHotwords(model({ type: 'nemo-transducer', modeling_unit: 'bpe' }))).toBe(true);
    expect(takesHotwords(model({}))).toBe(false);
    expect(takesHotwords(model({ type: 'whisper', modeling_unit: 'bpe' }))).toBe(false);
    expect(takesHotwords(model({ type: 'nemo-ctc', modeling_unit: 'bpe' }))).toBe(false);
    expect(takesHotwords(model({ family: 'stt-streaming', modeling_unit: 'bpe' }))).toBe(true);
    expect(takesHotwords(model({ family: 'stt-streaming', type: 'paraformer', modeling_unit: 'bpe' }))).toBe(false);
  });
});

describe('tokenCase', () => {
  it.each([
    ['upper', ['<blk>', '▁THE', 'S', "'"]],
    ['lower', ['<blk>', '▁the', 's']],
    ['mixed', ['<blk>', '▁The', 's']],
    ['mixed', ['<blk>', '你', '好']],
  ])('reads %s from the symbols of tokens.txt (%j)', (expected, symbols) => {
    const file = path.join(dir, `tokens-${symbols.join('')}.txt`);
    writeFileSync(file, symbols.map((s, i) => `${s} ${i}`).join('\n') + '\n');
    expect(tokenCase(file)).toBe(expected);
  });
});

describe('hotwordsOf', () => {
  it('joins the terms with "/" in the model’s case, without the characters that would change the line', () => {
    const context = { terms: ['Kubernetes', 'Parlance API', 'C3PO: droid', 'a/b', "O'Neil"], text: 'ignored' };
    expect(hotwordsOf(context, 'upper')).toBe("KUBERNETES/PARLANCE API/C3PO DROID/A B/O'NEIL");
    expect(hotwordsOf(context, 'lower')).toBe("kubernetes/parlance api/c3po droid/a b/o'neil");
    expect(hotwordsOf(context, 'mixed')).toBe("Kubernetes/Parlance API/C3PO droid/a b/O'Neil");
  });

  it('gives nothing without terms, and each phrase once', () => {
    expect(hotwordsOf(undefined, 'lower')).toBeUndefined();
    expect(hotwordsOf({ terms: [], text: 'only text' }, 'lower')).toBeUndefined();
    expect(hotwordsOf({ terms: ['::', '//'], text: '' }, 'lower')).toBeUndefined();
    expect(hotwordsOf({ terms: ['Foo', 'FOO', 'foo'], text: '' }, 'upper')).toBe('FOO');
  });
});
