import { describe, expect, it } from 'vitest';
import { espeakWordTimes } from './espeak-words.js';

// What native/espeak-words printed for this text (en-us+m3, 175 wpm), phonemes within words left out.
const TEXT = 'Hello world, this is 42 tests.';
const EVENTS = [
  'WORD 1 5 0',
  'PHONEME h 11',
  'WORD 7 5 280',
  'PHONEME w 289',
  'PHONEME _: 699',
  'PHONEME _ 849',
  'WORD 14 4 849',
  'WORD 19 2 1048',
  'WORD 22 2 1197',
  'WORD 23 2 1516',
  'WORD 25 5 1702',
  'PHONEME _: 2189',
  'END 2490',
].join('\n');

describe('espeakWordTimes', () => {
  it('runs each word from its event to the next pause or word', () => {
    expect(espeakWordTimes(TEXT, TEXT, EVENTS)).toEqual([
      { text: 'Hello', start: 0, end: 0.28 },
      { text: 'world', start: 0.28, end: 0.699 },
      { text: 'this', start: 0.849, end: 1.048 },
      { text: 'is', start: 1.048, end: 1.197 },
      // "42" is spoken as two words, both its own.
      { text: '42', start: 1.197, end: 1.702 },
      { text: 'tests', start: 1.702, end: 2.189 },
    ]);
  });

  it('counts positions in the SSML the program read', () => {
    const input = '<speak><prosody range="120%">Tom &amp; Jerry</prosody></speak>';
    const t = espeakWordTimes('Tom & Jerry', input, 'WORD 30 3 6\nWORD 38 1 319\nWORD 40 5 523\nEND 1205');
    expect(t.map((w) => [w.text, w.start])).toEqual([
      ['Tom', 0.006],
      ['Jerry', 0.523],
    ]);
    expect(t[1]!.end).toBe(1.205);
  });
});

describe('espeakWordTimes with words spoken as one', () => {
  it('shares one event between the words it covers', () => {
    const t = espeakWordTimes('sat on the mat', 'sat on the mat', 'WORD 1 3 0\nWORD 5 6 300\nWORD 12 3 600\nEND 900');
    expect(t.map((w) => [w.text, Math.round(w.start * 1000), Math.round(w.end * 1000)])).toEqual([
      ['sat', 0, 300],
      ['on', 300, 420],
      ['the', 420, 600],
      ['mat', 600, 900],
    ]);
  });
});
