import { describe, expect, it } from 'vitest';
import { decodeFestivalOutput, festivalWordTimes } from './festival-words.js';

// What the hook printed for "The birch canoe, 42 Dr. Smith's. It is done!" (two utterances, 16 kHz).
const OUTPUT = [
  'PARLANCE_UTT 48000 16000',
  'PARLANCE_WORD 1 0.220000 0.300801 The',
  'PARLANCE_WORD 3 0.300801 0.609868 birch',
  'PARLANCE_WORD 5 0.609868 1.021579 canoe',
  'PARLANCE_WORD 7 1.241579 1.701526 42',
  'PARLANCE_WORD 7 1.701526 1.925514 42',
  'PARLANCE_WORD 9 1.925514 2.268276 Dr',
  'PARLANCE_WORD 11 2.268276 2.675857 Smith\u0027s',
  'PARLANCE_WORD 11 0.000000 0.000000 Smith\u0027s',
  'PARLANCE_UTT 16000 16000',
  'PARLANCE_WORD 1 0.220000 0.363492 It',
  'PARLANCE_WORD 3 0.363492 0.516036 is',
  'PARLANCE_WORD 5 0.516036 0.823771 done',
].join('\n');

describe('festivalWordTimes', () => {
  it('times each token from its words, utterances one after the other', () => {
    const t = festivalWordTimes('The birch canoe, 42 Dr. Smith\u0027s. It is done!', OUTPUT)!;
    expect(t.map((w) => w.text)).toEqual(['The', 'birch', 'canoe', '42', 'Dr', 'Smith\u0027s', 'It', 'is', 'done']);
    expect(t[3]).toEqual({ text: '42', start: 1.241579, end: 1.925514 });
    expect(t[6]!.start).toBeCloseTo(3.22, 5);
    expect(t[8]!.end).toBeCloseTo(3.823771, 5);
  });

  it('scales the times by a tempo change', () => {
    expect(festivalWordTimes('It', 'PARLANCE_UTT 1600 16000\nPARLANCE_WORD 1 0.1 0.2 It', 0.5)).toEqual([{ text: 'It', start: 0.05, end: 0.1 }]);
  });

  it('is undefined when festival printed nothing', () => {
    expect(festivalWordTimes('It', '')).toBeUndefined();
  });

  it('reads the output in the voice coding', () => {
    expect(decodeFestivalOutput(Buffer.from([0x50, 0xe8]), 'ISO-8859-2')).toBe('P\u010d');
  });
});
