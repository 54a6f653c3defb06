import { describe, expect, it } from 'vitest';
import { COMMA_PAUSE_MS, SENTENCE_PAUSE_MS, TranscriptFormatter, formatTranscript, isEnglish } from './format.js';
import type { WordToken } from './types.js';
import { fmt, textOf, tokensOf } from './test-tokens.js';

describe('timestamps', () => {
  it('a formatted token spans the words it replaces, with the lowest confidence', () => {
    const tokens = tokensOf('it cost two hundred dollars', 1000, [0.9, 0.8, 0.7, 0.95, 0.6]);
    const out = formatTranscript(tokens);
    expect(out).toEqual([
      { text: 'It', start_ms: 1000, end_ms: 1250, confidence: 0.9 },
      { text: 'cost', start_ms: 1300, end_ms: 1550, confidence: 0.8 },
      { text: '$200.', start_ms: 1600, end_ms: 2450, confidence: 0.6 },
    ]);
  });

  it('the example keeps every time from the input, in order', () => {
    const raw = 'my flight leaves at seven thirty on march third and the ticket cost two hundred dollars';
    const tokens = tokensOf(raw);
    const out = formatTranscript(tokens);
    expect(textOf(out)).toBe('My flight leaves at 7:30 on March 3rd and the ticket cost $200.');
    expect(out.length).toBeLessThan(tokens.length);
    const starts = new Set(tokens.map((t) => t.start_ms));
    const ends = new Set(tokens.map((t) => t.end_ms));
    for (let k = 0; k < out.length; k++) {
      expect(starts.has(out[k]!.start_ms)).toBe(true);
      expect(ends.has(out[k]!.end_ms)).toBe(true);
      expect(out[k]!.end_ms).toBeGreaterThan(out[k]!.start_ms);
      if (k > 0) expect(out[k]!.start_ms).toBeGreaterThanOrEqual(out[k - 1]!.end_ms);
    }
    expect(out.find((t) => t.text === '7:30')).toMatchObject({ start_ms: tokens[4]!.start_ms, end_ms: tokens[5]!.end_ms });
  });

  it('tokens never contain spaces; multi-part units are several tokens', () => {
    const out = formatTranscript(tokensOf('at seven thirty p m ask mister smith about five million dollars'));
    expect(out.map((t) => t.text)).toEqual(['At', '7:30', 'PM', 'ask', 'Mr.', 'Smith', 'about', '$5', 'million.']);
    expect(out[2]).toMatchObject({ start_ms: 900, end_ms: 1450 }); // "p" + "m"
  });

  it('does not modify its input', () => {
    const tokens = tokensOf('twenty three');
    const copy = structuredClone(tokens);
    formatTranscript(tokens);
    expect(tokens).toEqual(copy);
  });
});

describe('sentences', () => {
  it('a long pause ends a sentence; the next word is capitalised', () => {
    expect(fmt('hello there | how are you | i am fine')).toBe('Hello there. How are you? I am fine.');
    expect(SENTENCE_PAUSE_MS).toBe(700);
  });

  it('question marks follow question openings', () => {
    expect(fmt('what time is it')).toBe('What time is it?');
    expect(fmt('so what do you think')).toBe('So what do you think?');
    expect(fmt('do you know him')).toBe('Do you know him?');
    expect(fmt('can the store deliver')).toBe('Can the store deliver?');
    expect(fmt('who wants pizza')).toBe('Who wants pizza?');
    expect(fmt('how about tomorrow')).toBe('How about tomorrow?');
    expect(fmt('do it now')).toBe('Do it now.');
    expect(fmt('have a seat')).toBe('Have a seat.');
    expect(fmt('when i was young i played')).toBe('When I was young I played.');
    expect(fmt('what a day')).toBe('What a day.');
  });

  it('a medium pause is a comma, except where a clause cannot end', () => {
    expect(COMMA_PAUSE_MS).toBe(400);
    expect(fmt('well , i think so')).toBe('Well, I think so.');
    expect(fmt('i went to the , store')).toBe('I went to the store.');
    expect(fmt('i went home and')).toBe('I went home and.'); // the end of a file always closes
    expect(fmt('seven thirty , p m')).toBe('7:30 PM.');
  });

  it('a long pause after "the" or "and" is hesitation, not a full stop', () => {
    expect(fmt('i bought the | red one | and | then left')).toBe('I bought the red one. And then left.');
  });

  it('capitalises i and its contractions', () => {
    expect(fmt("yes i know i'm late and i'll hurry i've said i'd")).toBe("Yes I know I'm late and I'll hurry I've said I'd.");
  });

  it('lower-cases an utterance written in capitals before formatting it', () => {
    expect(fmt('WHAT TIME IS IT IN LONDON')).toBe('What time is it in London?');
    expect(fmt('NASA said hello')).toBe('NASA said hello.');
  });
});

describe('session state (TranscriptFormatter)', () => {
  it('a sentence continues into the next utterance when endsUtterance is false', () => {
    const f = new TranscriptFormatter();
    const a = f.format(tokensOf('what time'), { endsUtterance: false });
    const b = f.format(tokensOf('is it', 2000), { endsUtterance: true });
    const c = f.format(tokensOf('i see', 4000), { endsUtterance: true });
    expect(textOf(a)).toBe('What time');
    expect(textOf(b)).toBe('is it?');
    expect(textOf(c)).toBe('I see.');
  });

  it('an endpoint after "the" keeps the sentence open', () => {
    const f = new TranscriptFormatter();
    expect(textOf(f.format(tokensOf('i went to the'), { endsUtterance: true }))).toBe('I went to the');
    expect(textOf(f.format(tokensOf('store', 3000), { endsUtterance: true }))).toBe('store.');
  });

  it('earlier utterances are left context', () => {
    const f = new TranscriptFormatter();
    expect(textOf(f.format(tokensOf('meet me at'), { endsUtterance: false }))).toBe('Meet me at');
    expect(textOf(f.format(tokensOf('seven thirty', 2000), { endsUtterance: true }))).toBe('7:30.');
    expect(textOf(f.format(tokensOf('in'), { endsUtterance: false }))).toBe('In');
    expect(textOf(f.format(tokensOf('may', 2000), { endsUtterance: true }))).toBe('May.');
  });

  it('formatTranscript equals a formatter fed the utterances one by one', () => {
    const raw = "so what do you think | i think we should meet at ten o'clock , in london | is that fine | yes";
    const tokens = tokensOf(raw);
    const f = new TranscriptFormatter();
    const parts: WordToken[][] = [[]];
    for (let k = 0; k < tokens.length; k++) {
      if (k > 0 && tokens[k]!.start_ms - tokens[k - 1]!.end_ms >= SENTENCE_PAUSE_MS) parts.push([]);
      parts[parts.length - 1]!.push(tokens[k]!);
    }
    const oneByOne = parts.flatMap((p, k) => f.format(p, { endsUtterance: true, endsStream: k === parts.length - 1 }));
    expect(formatTranscript(tokens)).toEqual(oneByOne);
    expect(textOf(oneByOne)).toBe("So what do you think? I think we should meet at 10 o'clock, in London. Is that fine? Yes.");
  });
});

describe('languages and edge cases', () => {
  it('passes non-English tokens through unchanged (as copies)', () => {
    const tokens = tokensOf('ich habe zwei hundert euro');
    for (const language of ['de', 'fr-FR', 'es']) {
      const out = formatTranscript(tokens, { language });
      expect(out).toEqual(tokens);
      expect(out[0]).not.toBe(tokens[0]);
    }
    expect(isEnglish(undefined)).toBe(true);
    expect(isEnglish('en-US')).toBe(true);
    expect(isEnglish('EN_gb')).toBe(true);
    expect(isEnglish('eng')).toBe(false);
  });

  it('empty input and a single token', () => {
    expect(formatTranscript([])).toEqual([]);
    expect(new TranscriptFormatter().format([], { endsUtterance: true })).toEqual([]);
    expect(formatTranscript([{ text: 'hello', start_ms: 5, end_ms: 9, confidence: 0.5 }])).toEqual([
      { text: 'Hello.', start_ms: 5, end_ms: 9, confidence: 0.5 },
    ]);
    expect(new TranscriptFormatter().format(tokensOf('hello'))).toEqual([{ text: 'Hello', start_ms: 0, end_ms: 250, confidence: 0.9 }]);
  });

  it('formats an hour of speech (9,000 words) in one call exactly as it formats each of its sentences', () => {
    const sentence =
      'my flight leaves at seven thirty on march third and the ticket cost two hundred dollars | what time is it | ' +
      'call me at five five five one two three four , said john in london | ';
    const tokens = tokensOf(sentence.repeat(270));
    expect(tokens.length).toBeGreaterThan(9000);
    const once = textOf(formatTranscript(tokensOf(sentence)));
    const out = formatTranscript(tokens);
    // Nothing carries over from one sentence to the next, and no rule gives up on a long input. (How long it takes
    // is not a test's business: no bench times this alone; `npm run bench -- stt` includes formatting in the server
    // overhead of async transcriptions.)
    expect(textOf(out)).toBe(Array.from({ length: 270 }, () => once).join(' '));
    expect(out.length).toBe(270 * formatTranscript(tokensOf(sentence)).length);
    for (let i = 1; i < out.length; i++) expect(out[i]!.start_ms).toBeGreaterThanOrEqual(out[i - 1]!.end_ms);
  });
});
