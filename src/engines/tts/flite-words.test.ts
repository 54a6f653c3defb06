import { describe, expect, it } from 'vitest';
import { fliteWordTimes, parseFliteSegments } from './flite-words.js';
import { textWords } from './word-timings.js';

describe('fliteWordTimes', () => {
  const psdur = 'pau:0.184 dh:0.228 ax:0.258 b:0.339 er:0.454 ch:0.563 pau:0.700 k:0.800 ax:0.850 n:0.900 uw:1.000 pau:1.100 ';

  it('reads the segments, each from the previous end', () => {
    expect(parseFliteSegments(psdur).slice(0, 2)).toEqual([
      { phone: 'pau', start: 0, end: 0.184 },
      { phone: 'dh', start: 0.184, end: 0.228 },
    ]);
  });

  it('gives each word the span of its phones, a differently pronounced one included', () => {
    const words = textWords('The birch, canoe.');
    // "canoe" with another vowel than flite spoke in context.
    const phones = [
      ['dh', 'ax'],
      ['b', 'er', 'ch'],
      ['k', 'ae', 'n', 'uw'],
    ];
    expect(fliteWordTimes(words, phones, parseFliteSegments(psdur), 1.05)).toEqual([
      { text: 'The', start: 0.184, end: 0.258 },
      { text: 'birch', start: 0.258, end: 0.563 },
      { text: 'canoe', start: 0.7, end: 1 },
    ]);
  });

  it('keeps a word flite could not say between its neighbours and bounds times by the audio', () => {
    const words = textWords('The zzz birch');
    const t = fliteWordTimes(words, [['dh', 'ax'], [], ['b', 'er', 'ch']], parseFliteSegments('pau:0.1 dh:0.2 ax:0.3 b:0.4 er:0.5 ch:0.9'), 0.8);
    expect(t).toEqual([
      { text: 'The', start: 0.1, end: 0.3 },
      { text: 'zzz', start: 0.3, end: 0.3 },
      { text: 'birch', start: 0.3, end: 0.8 },
    ]);
  });
});
