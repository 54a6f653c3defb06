import { describe, expect, it } from 'vitest';
import { normalizeWords, wordErrorRate } from './wer.js';

describe('wordErrorRate', () => {
  it('is 0 for identical text after normalisation', () => {
    expect(wordErrorRate('The quick, brown fox!', 'the quick brown fox').wer).toBe(0);
  });

  it('counts substitutions, deletions and insertions', () => {
    const r = wordErrorRate('a b c d', 'a x c d e');
    expect(r).toMatchObject({ substitutions: 1, deletions: 0, insertions: 1, referenceWords: 4, hypothesisWords: 5 });
    expect(r.wer).toBe(0.5);
    const d = wordErrorRate('a b c d', 'a d');
    expect(d).toMatchObject({ deletions: 2, substitutions: 0, insertions: 0 });
    expect(d.wer).toBe(0.5);
  });

  it('handles empty sides', () => {
    expect(wordErrorRate('', '').wer).toBe(0);
    expect(wordErrorRate('', 'noise').wer).toBe(1);
    expect(wordErrorRate('two words', '').wer).toBe(1);
  });

  it('keeps apostrophes inside words only', () => {
    expect(normalizeWords("Don't 'quote' me -- OK?")).toEqual(["don't", 'quote', 'me', 'ok']);
  });

  it('accepts pre-split word arrays', () => {
    expect(wordErrorRate(['hello', 'world'], ['hello']).wer).toBe(0.5);
  });
});
