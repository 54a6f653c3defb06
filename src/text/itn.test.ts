import { describe, expect, it } from 'vitest';
import { normalizeForScoring } from './format.js';
import { fmt } from './test-tokens.js';

/**
 * [raw words, formatted text, raw is the canonical spoken reading (normalizeForScoring(formatted) === raw)].
 * Non-canonical ones still satisfy normalizeForScoring(formatted) === normalizeForScoring(raw).
 */
type Example = [string, string, boolean?];

const CATEGORIES: Record<string, Example[]> = {
  cardinals: [
    ['i counted twenty three birds', 'I counted 23 birds.'],
    ['we need two hundred and five chairs', 'We need 205 chairs.', false],
    ['we need two hundred five chairs', 'We need 205 chairs.'],
    ['about one thousand two hundred people came', 'About 1200 people came.', false],
    ['about twelve hundred people came', 'About 1200 people came.'],
    ['ten thousand people', '10,000 people.'],
    ['two million three hundred thousand and five', '2,300,005.', false],
    ['a hundred and fifty pages', '150 pages.', false],
    ['five million people', '5 million people.'],
    ['three point five billion years', '3.5 billion years.'],
    ['ten people and eleven dogs', '10 people and 11 dogs.'],
    ['twenty-one guns', '21 guns.', false],
    ['five ten fifteen twenty', '5 10 15 20.'],
  ],
  'small numbers stay words': [
    ['i have two kids', 'I have two kids.'],
    ['one of them', 'One of them.'],
    ['it weighs five pounds', 'It weighs 5 pounds.'],
    ['we drove seven miles', 'We drove 7 miles.'],
  ],
  ordinals: [
    ['the first time', 'The first time.'],
    ['the twenty first century', 'The 21st century.'],
    ['the eleventh hour', 'The 11th hour.'],
    ['the one hundred and first day', 'The 101st day.', false],
    ['two thirds of it', 'Two thirds of it.'],
  ],
  years: [
    ['born in nineteen ninety nine', 'Born in 1999.'],
    ['in twenty twenty four', 'In 2024.'],
    ['since two thousand and eight', 'Since 2008.', false],
    ['since two thousand eight', 'Since 2008.'],
    ['built in nineteen oh five', 'Built in 1905.'],
    ['the year eleven fifty', 'The year 1150.'],
    ['music of the nineteen eighties', 'Music of the 1980s.'],
  ],
  dates: [
    ['on march third', 'On March 3rd.'],
    ['june fifth twenty twenty four', 'June 5th, 2024.'],
    ['june five twenty twenty four', 'June 5, 2024.'],
    ['the third of march', 'The 3rd of March.'],
    ['in may nineteen ninety nine', 'In May 1999.'],
    ['on may first', 'On May 1st.'],
    ['they march in march', 'They march in March.'],
    ['you may first want to eat', 'You may first want to eat.'],
    ['see you on monday', 'See you on Monday.'],
  ],
  times: [
    ['meet me at seven thirty', 'Meet me at 7:30.'],
    ['seven thirty p m', '7:30 PM.'],
    ['at nine oh five a m', 'At 9:05 AM.'],
    ['at seven pm', 'At 7 PM.', false],
    ["at ten o'clock", "At 10 o'clock."],
    ['from seven thirty to eight thirty', 'From 7:30 to 8:30.'],
    ['the twelve fifteen train', 'The 12:15 train.'],
    ['at twenty thirty', 'At 20:30.'],
    ['meet me at seven', 'Meet me at seven.'],
    ["it's two thirty", "It's 2:30."],
    ['room four oh four', 'Room four oh four.'],
  ],
  money: [
    ['it cost two hundred dollars', 'It cost $200.'],
    ['one dollar', '$1.'],
    ['five dollars and fifty cents', '$5.50.'],
    ['five dollars fifty cents', '$5.50.', false],
    ['twenty cents', '20¢.'],
    ['twenty five euros', '€25.'],
    ['five million dollars', '$5 million.'],
    ['a hundred dollars', '$100.', false],
  ],
  percentages: [
    ['fifty percent', '50%.'],
    ['fifty per cent', '50%.', false],
    ['three point five percent', '3.5%.'],
    ['zero percent', '0%.'],
  ],
  decimals: [
    ['three point five', '3.5.'],
    ['zero point two five', '0.25.'],
    ['pi is three point one four one five', 'Pi is 3.1415.'],
    ['at one point two things happened', 'At one point two things happened.'],
    ['at one point two percent', 'At 1.2%.'],
  ],
  'digit strings': [
    ['call five five five one two three four', 'Call 555-1234.'],
    ['call five five five oh one two three', 'Call 555-0123.', false],
    ['call five five five zero one two three', 'Call 555-0123.'],
    ['five five five one two three four five six seven', '555-123-4567.'],
    ['the code is one two three four', 'The code is 1234.', false],
    ['call nine one one', 'Call nine one one.'],
  ],
  abbreviations: [
    ['ask mister smith', 'Ask Mr. Smith.'],
    ['missus jones is here', 'Mrs. Jones is here.'],
    ['mister and missus smith', 'Mr. and Mrs. Smith.'],
    ['call misses smith', 'Call Mrs. Smith.', false],
    ['she misses john', 'She misses John.'],
    ['doctor john will see you', 'Dr. John will see you.'],
    ['the doctor will see you', 'The doctor will see you.'],
    ['thank you mister', 'Thank you mister.'],
  ],
  'proper nouns': [
    ['i flew from london to new york', 'I flew from London to New York.'],
    ['she speaks english and french', 'She speaks English and French.'],
    ["john's car", "John's car."],
    ['closed on mondays', 'Closed on Mondays.'],
  ],
};

describe('inverse text normalisation', () => {
  for (const [category, examples] of Object.entries(CATEGORIES)) {
    describe(category, () => {
      for (const [raw, formatted, canonical = true] of examples) {
        it(`"${raw}" → "${formatted}"`, () => {
          expect(fmt(raw)).toBe(formatted);
          expect(normalizeForScoring(formatted)).toBe(normalizeForScoring(raw));
          if (canonical) expect(normalizeForScoring(formatted)).toBe(raw.replace(/-/g, ' '));
        });
      }
    });
  }

  it('the example from the issue', () => {
    const raw = 'my flight leaves at seven thirty on march third and the ticket cost two hundred dollars';
    expect(fmt(raw)).toBe('My flight leaves at 7:30 on March 3rd and the ticket cost $200.');
    expect(normalizeForScoring(fmt(raw))).toBe(raw);
  });
});

describe('edge cases', () => {
  it('"a", "one", "hundred" alone stay words', () => {
    expect(fmt('a')).toBe('A.');
    expect(fmt('one')).toBe('One.');
    expect(fmt('hundred')).toBe('Hundred.');
    expect(fmt('a hundred')).toBe('A hundred.');
    expect(fmt('a million')).toBe('A million.');
    expect(fmt('hundreds of people')).toBe('Hundreds of people.');
  });

  it('"oh" is zero inside a digit string only', () => {
    expect(fmt('oh five five five one two three four')).toBe('Oh 555-1234.');
    expect(fmt('five five five one two three oh')).toBe('555-1230.');
    expect(fmt('oh no')).toBe('Oh no.');
  });

  it('huge numbers', () => {
    const words =
      'nine hundred ninety nine trillion nine hundred ninety nine billion nine hundred ninety nine million ' +
      'nine hundred ninety nine thousand nine hundred ninety nine';
    expect(fmt(words)).toBe('999,999,999,999,999.');
    expect(normalizeForScoring(fmt(words))).toBe(words);
    expect(fmt('one trillion')).toBe('1 trillion.');
    // Scale words must shrink: the second "billion" starts nothing.
    expect(fmt('a billion billion')).toBe('A billion billion.');
    expect(fmt('five thousand thousand')).toBe('5000 thousand.');
  });

  it('numbers do not join across a sentence pause', () => {
    expect(fmt('twenty | three')).toBe('20. Three.');
  });
});
