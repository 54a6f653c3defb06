import { describe, expect, it } from 'vitest';
import { normalizeForScoring } from './format.js';
import { spellCardinal, spellFourDigits, spellOrdinal } from './spell.js';

describe('normalizeForScoring', () => {
  it('drops punctuation and case, spells written forms out', () => {
    expect(normalizeForScoring('My flight leaves at 7:30 on March 3rd and the ticket cost $200.')).toBe(
      'my flight leaves at seven thirty on march third and the ticket cost two hundred dollars',
    );
    expect(normalizeForScoring('"Hello," she said. (Really?)')).toBe('hello she said really');
  });

  it('each written form', () => {
    const cases: [string, string][] = [
      ['$5.50', 'five dollars and fifty cents'],
      ['$1', 'one dollar'],
      ['$1.01', 'one dollar and one cent'],
      ['$0.20', 'twenty cents'],
      ['$3.5', 'three point five dollars'],
      ['$5 million', 'five million dollars'],
      ['€25', 'twenty five euros'],
      ['20¢', 'twenty cents'],
      ['1¢', 'one cent'],
      ['50%', 'fifty percent'],
      ['3.5%', 'three point five percent'],
      ['7:05 AM', 'seven oh five a m'],
      ['7:00', "seven o'clock"],
      ['10 p.m.', 'ten p m'],
      ['555-1234', 'five five five one two three four'],
      ['1-800-555-0199', 'one eight zero zero five five five zero one nine nine'],
      ['007', 'zero zero seven'],
      ['12345', 'one two three four five'],
      ['12,345', 'twelve thousand three hundred forty five'],
      ['1999', 'nineteen ninety nine'],
      ['1905', 'nineteen oh five'],
      ['1200', 'twelve hundred'],
      ['2008', 'two thousand eight'],
      ['2024', 'twenty twenty four'],
      ['3000', 'three thousand'],
      ['21st', 'twenty first'],
      ['100th', 'one hundredth'],
      ['0.25', 'zero point two five'],
      ['Mr. Smith and Mrs. Jones met Dr. John', 'mister smith and missus jones met doctor john'],
      ['well-known', 'well known'],
    ];
    for (const [written, spoken] of cases) expect(normalizeForScoring(written), written).toBe(spoken);
  });

  it('leaves words alone ("I am here" keeps "am")', () => {
    expect(normalizeForScoring('I am here, aren’t I?')).toBe("i am here aren't i");
    expect(normalizeForScoring("I'm here, aren't I?")).toBe("i'm here aren't i");
  });

  it('raw spoken text normalises to the same canonical reading as its formatted form', () => {
    expect(normalizeForScoring('two hundred and five')).toBe('two hundred five');
    expect(normalizeForScoring('one thousand two hundred')).toBe('twelve hundred');
    expect(normalizeForScoring('five five five oh one two three')).toBe('five five five zero one two three');
    expect(normalizeForScoring('seven thirty pm')).toBe('seven thirty p m');
  });

  it('is idempotent', () => {
    const text = 'At 7:30 PM, Mr. Smith paid $5.50 (50%) on March 3rd, 2024.';
    const once = normalizeForScoring(text);
    expect(normalizeForScoring(once)).toBe(once);
  });

  it('empty text', () => {
    expect(normalizeForScoring('')).toBe('');
    expect(normalizeForScoring('  . , ')).toBe('');
  });
});

describe('spelling numbers', () => {
  it('cardinals, ordinals, four-digit numbers', () => {
    expect(spellCardinal(0)).toBe('zero');
    expect(spellCardinal(205)).toBe('two hundred five');
    expect(spellCardinal(1_000_001)).toBe('one million one');
    expect(spellCardinal(999_999_999_999_999)).toBe(
      'nine hundred ninety nine trillion nine hundred ninety nine billion nine hundred ninety nine million nine hundred ninety nine thousand nine hundred ninety nine',
    );
    expect(spellOrdinal(1)).toBe('first');
    expect(spellOrdinal(12)).toBe('twelfth');
    expect(spellOrdinal(20)).toBe('twentieth');
    expect(spellOrdinal(1000)).toBe('one thousandth');
    expect(spellFourDigits(1100)).toBe('eleven hundred');
    expect(spellFourDigits(2100)).toBe('two thousand one hundred');
  });
});
