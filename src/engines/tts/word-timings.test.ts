import { describe, expect, it } from 'vitest';
import { alignSequences, alignWordTimes, fillGaps, textWords, wordKey, wordsFromCharacters } from './word-timings.js';

describe('textWords', () => {
  it('keeps words whole and puts punctuation after them', () => {
    expect(textWords(`"Hello," she said — don't stop: 3.5 well-known U.S.A.`)).toEqual([
      { text: 'Hello', after: '," ' },
      { text: 'she', after: ' ' },
      { text: 'said', after: ' — ' },
      { text: 'don\u0027t', after: ' ' },
      { text: 'stop', after: ': ' },
      { text: '3.5', after: ' ' },
      { text: 'well-known', after: ' ' },
      { text: 'U.S.A', after: '.' },
    ]);
  });

  it('splits unspaced scripts into characters', () => {
    expect(textWords('你好，世界。').map((w) => w.text)).toEqual(['你', '好', '世', '界']);
    expect(textWords('你好，世界。')[1]!.after).toBe('，');
  });

  it('has no words for punctuation alone', () => {
    expect(textWords(' -- ... ')).toEqual([]);
  });
});

describe('wordsFromCharacters', () => {
  it('spans each word from its first to its last character', () => {
    const chars = Array.from('Hi, you.');
    const start = chars.map((_, i) => i / 10);
    const end = chars.map((_, i) => (i + 1) / 10);
    expect(wordsFromCharacters({ characters: chars, start, end })).toEqual([
      { text: 'Hi', start: 0, end: 0.2 },
      { text: 'you', start: 0.4, end: 0.7 },
    ]);
  });
});

describe('alignWordTimes', () => {
  const words = textWords('The 42 cats, meow.');
  it('matches engine words by their keys and fills the ones it lacks', () => {
    const timed = [
      { text: 'the', start: 0.1, end: 0.2 },
      { text: 'cats', start: 0.6, end: 0.9 },
      { text: 'meow', start: 1.1, end: 1.4 },
    ];
    expect(alignWordTimes(words, timed)).toEqual([
      { text: 'The', start: 0.1, end: 0.2 },
      { text: '42', start: 0.2, end: 0.6 },
      { text: 'cats', start: 0.6, end: 0.9 },
      { text: 'meow', start: 1.1, end: 1.4 },
    ]);
  });

  it('takes a substituted word in the same place', () => {
    const timed = [
      { text: 'the', start: 0, end: 0.1 },
      { text: 'forty-two', start: 0.1, end: 0.5 },
      { text: 'cats', start: 0.5, end: 0.8 },
      { text: 'meow', start: 0.8, end: 1 },
    ];
    expect(alignWordTimes(words, timed)[1]).toEqual({ text: '42', start: 0.1, end: 0.5 });
  });

  it('never lets times go backwards', () => {
    const w = textWords('a b');
    expect(fillGaps(w, [0, 0.2], [0.5, 0.6])).toEqual([
      { text: 'a', start: 0, end: 0.5 },
      { text: 'b', start: 0.5, end: 0.6 },
    ]);
  });
});

describe('alignSequences', () => {
  it('pairs equal elements and marks insertions and deletions', () => {
    const same = (x: string, y: string) => (x === y ? 0 : 1);
    expect(alignSequences(['a', 'b', 'c'], ['a', 'c'], same)).toEqual([
      [0, 0],
      [1, undefined],
      [2, 1],
    ]);
    expect(alignSequences(['a'], ['x', 'a'], same)).toEqual([
      [undefined, 0],
      [0, 1],
    ]);
  });

  it('compares words without case, accents or punctuation', () => {
    expect(wordKey('Élan’s')).toBe('elans');
  });
});
