import { describe, expect, it } from 'vitest';
import { placeWords } from './word-times.js';

const words = [
  { text: 'one', start: 0.1, end: 0.4 },
  { text: 'two', start: 0.4, end: 0.9 },
  { text: 'three', start: 1.0, end: 1.5 },
];

describe('placeWords', () => {
  it('puts the words on the stream clock in milliseconds, after what was trimmed', () => {
    expect(placeWords(words, { cut: 0.1, kept: 1.4, offset: 2, truncated: false, previousEndMs: 0 })).toEqual([
      { text: 'one', start_ms: 2000, end_ms: 2300 },
      { text: 'two', start_ms: 2300, end_ms: 2800 },
      { text: 'three', start_ms: 2900, end_ms: 3400 },
    ]);
  });

  it('drops the words the audio cap cut off and bounds the last one', () => {
    expect(placeWords(words, { cut: 0, kept: 0.6, offset: 0, truncated: true, previousEndMs: 0 })).toEqual([
      { text: 'one', start_ms: 100, end_ms: 400 },
      { text: 'two', start_ms: 400, end_ms: 600 },
    ]);
  });

  it('never starts before the previous segment ended', () => {
    expect(placeWords([{ text: 'a', start: 0, end: 0.2 }], { cut: 0, kept: 1, offset: 1, truncated: false, previousEndMs: 1100 })).toEqual([
      { text: 'a', start_ms: 1100, end_ms: 1200 },
    ]);
  });
});
