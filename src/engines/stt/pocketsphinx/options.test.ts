import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { BASE_DECODER_ARGS, resolvePocketsphinxOptions, STREAM_DECODER_ARGS } from './options.js';

describe('pocketsphinx options', () => {
  it('streams get the pruning profile over the batch arguments; batch decoders keep the plain ones', () => {
    const o = resolvePocketsphinxOptions({ decoderArgs: { '-beam': '1e-45', '-maxwpf': '20' } });
    expect(o.decoderArgs).toEqual({ ...BASE_DECODER_ARGS, '-beam': '1e-45', '-maxwpf': '20' });
    expect(o.streamDecoderArgs).toEqual({ ...BASE_DECODER_ARGS, '-beam': '1e-45', ...STREAM_DECODER_ARGS });
    expect(resolvePocketsphinxOptions({ streamDecoderArgs: {} }).streamDecoderArgs).toEqual(BASE_DECODER_ARGS);
  });

  it('allows 8 live streams per core unless told otherwise', () => {
    expect(resolvePocketsphinxOptions().maxStreams).toBe(8 * availableParallelism());
    expect(resolvePocketsphinxOptions({ maxStreams: 3 }).maxStreams).toBe(3);
  });
});
