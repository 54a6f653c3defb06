import { describe, expect, it } from 'vitest';
import { parseSsml, SsmlError } from './parse.js';

function error(src: string): SsmlError {
  try {
    parseSsml(src);
  } catch (err) {
    if (err instanceof SsmlError) return err;
    throw err;
  }
  throw new Error('parsed');
}

describe('parseSsml', () => {
  it('reads text runs and breaks with the prosody in effect', () => {
    const doc = parseSsml(
      '<speak>Hello <break time="700ms"/> <prosody rate="slow" volume="-6dB">big <prosody rate="50%" pitch="+2st">world</prosody></prosody></speak>',
    );
    expect(doc.items).toEqual([
      { kind: 'text', text: 'Hello ', prosody: { rate: 1, pitch: 0, volume: 0 } },
      { kind: 'break', seconds: 0.7 },
      { kind: 'text', text: ' ', prosody: { rate: 1, pitch: 0, volume: 0 } },
      { kind: 'text', text: 'big ', prosody: { rate: 0.75, pitch: 0, volume: -6 } },
      { kind: 'text', text: 'world', prosody: { rate: 0.375, pitch: 2, volume: -6 } },
    ]);
    expect(doc.text).toBe('Hello big world');
  });

  it('reads break durations in ms, s and strengths', () => {
    const breaks = parseSsml(
      '<speak>a<break time="1.5s"/>b<break strength="x-strong"/>c<break/>d<break time="250ms" strength="weak"></break></speak>',
    ).items.filter((i) => i.kind === 'break');
    expect(breaks.map((b) => b.seconds)).toEqual([1.5, 1, 0.4, 0.25]);
  });

  it('expands say-as, sub and keeps a phoneme with its text', () => {
    const doc = parseSsml(
      '<?xml version="1.0"?>\n<speak version="1.1" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US"><say-as interpret-as="characters">abc</say-as> <say-as interpret-as="digits">123</say-as> <sub alias="World Wide Web">WWW</sub> <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme> &amp; &#x41;<!-- note --></speak>',
    );
    const texts = doc.items.map((i) => (i.kind === 'text' ? i.text : '|'));
    expect(texts.join('').replace(/\s+/g, ' ').trim()).toBe('A B C 1 2 3 World Wide Web tomato & A');
    expect(doc.items[0]).toMatchObject({ spell: 'abc' });
    expect(doc.items.find((i) => i.kind === 'text' && i.phoneme)).toMatchObject({ text: 'tomato', phoneme: { alphabet: 'ipa', ph: 'təˈmeɪtoʊ' } });
    expect(doc.text).toBe('abc 123 World Wide Web tomato & A');
  });

  it('names the line and column of each error', () => {
    const cases: [string, number, number, RegExp][] = [
      ['<speak>hello', 1, 1, /<speak> is never closed/],
      ['<speak>\n  <prosody rate="fast">hi</speak>', 2, 26, /<\/speak> where <\/prosody> was expected \(<prosody> opened at line 2, column 3\)/],
      ['<speak>hi <foo/></speak>', 1, 11, /unknown element <foo>/],
      ['<speak>hi <break time="fast"/></speak>', 1, 18, /time="fast" is not a duration/],
      ['<speak>hi <break time="11s"/></speak>', 1, 18, /longer than the 10 s/],
      ['<speak><prosody rate="0%">x</prosody></speak>', 1, 17, /rate="0%" is out of range/],
      ['<speak><prosody pitch="200Hz">x</prosody></speak>', 1, 17, /pitch="200Hz"/],
      ['<speak><prosody volume="loudest">x</prosody></speak>', 1, 17, /volume="loudest"/],
      ['<speak><prosody range="+10%">x</prosody></speak>', 1, 17, /<prosody> has no attribute range/],
      ['<speak><say-as interpret-as="date">1/2</say-as></speak>', 1, 16, /interpret-as="date" is not supported/],
      ['<speak><sub>x</sub></speak>', 1, 8, /<sub> needs the attribute alias/],
      ['<speak><sub alias="y"><break/></sub></speak>', 1, 23, /<sub> may contain only text/],
      ['hello <speak>x</speak>', 1, 1, /text outside <speak>/],
      ['<speak>x</speak> tail', 1, 18, /text after <\/speak>/],
      ['<prosody>x</prosody>', 1, 1, /must be one <speak> element/],
      ['<speak>a & b</speak>', 1, 10, /bare "&"/],
      ['<speak>a &nbsp; b</speak>', 1, 10, /unknown entity/],
      ['<speak>a < b</speak>', 1, 10, /starts no element/],
      ['<speak><break time=700ms/></speak>', 1, 20, /not quoted/],
      ['<speak><break time="1s" time="2s"/></speak>', 1, 25, /given twice/],
      ['<speak><break>x</break></speak>', 1, 15, /<break> must be empty/],
      ['<speak><speak>x</speak></speak>', 1, 8, /<speak> inside <speak>/],
      ['', 1, 1, /must be one <speak> element/],
      ['<!DOCTYPE speak><speak>x</speak>', 1, 1, /DOCTYPE/],
    ];
    for (const [src, line, column, reason] of cases) {
      const err = error(src);
      expect({ src, line: err.line, column: err.column }).toEqual({ src, line, column });
      expect(err.message).toMatch(reason);
      expect(err.message).toMatch(new RegExp(`^line ${line}, column ${column}: `));
    }
  });
});
