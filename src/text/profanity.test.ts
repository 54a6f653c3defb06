import { describe, expect, it } from 'vitest';
import { maskProfanity } from './profanity.js';

const tokens = (...texts: string[]) => texts.map((text, i) => ({ text, start_ms: i * 100, end_ms: i * 100 + 90, confidence: 0.9 }));
const masked = (...texts: string[]) => maskProfanity(tokens(...texts)).map((t) => t.text);

describe('maskProfanity', () => {
  it('masks listed words as their first letter and asterisks, keeping case, punctuation and a leading space', () => {
    expect(masked('you', 'bastard')).toEqual(['you', 'b******']);
    expect(masked('Bastard!', ' bitch,')).toEqual(['B******!', ' b****,']);
  });

  it('masks a listed phrase word by word only when its words come together', () => {
    expect(masked('a', 'blow', 'job')).toEqual(['a', 'b***', 'j**']);
    expect(masked('blow', 'the', 'job')).toEqual(['blow', 'the', 'job']);
  });

  it('leaves other words and their times alone', () => {
    const input = tokens('hello', 'world');
    expect(maskProfanity(input)).toEqual(input);
  });
});
