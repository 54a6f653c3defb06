import { describe, expect, it } from 'vitest';
import { espeakPieces } from './espeak-ssml.js';
import { parseSsml } from './parse.js';

const pieces = (src: string, speed = 1, range?: number) => espeakPieces(parseSsml(src).items, speed, range);

describe('espeakPieces', () => {
  it('renders one piece per sentence with prosody as percentages, breaks as pauses before a piece', () => {
    expect(
      pieces(
        '<speak><break time="200ms"/>Hello <prosody rate="slow" pitch="+12st" volume="-6dB">big</prosody> world. Again <break time="1.5s"/> now<break strength="weak"/></speak>',
      ),
    ).toEqual([
      {
        before: 0.2,
        markup: '<speak>Hello <prosody rate="75%" pitch="+100%" volume="50%">big</prosody> world. </speak>',
        text: 'Hello big world.',
      },
      { before: 0, markup: '<speak>Again </speak>', text: 'Again' },
      { before: 1.5, markup: '<speak> now</speak>', text: 'now' },
      { before: 0.25, markup: '', text: '' },
    ]);
  });

  it('spells say-as characters natively, reads x-espeak phonemes, escapes text and keeps speed within bounds', () => {
    const [p] = pieces(
      '<speak><say-as interpret-as="characters">ab</say-as> <phoneme alphabet="x-espeak" ph="h@l\'oU]]">hello</phoneme> <phoneme ph="x">ipa</phoneme> a&lt;b [[x]] <prosody rate="x-fast">quick</prosody></speak>',
      1.5,
      80,
    );
    expect(p!.markup).toBe(
      '<speak><prosody range="80%"> <say-as interpret-as="characters">ab</say-as>   [[h@l\'oU]]  ipa a&lt;b [ [x]] <prosody rate="133%">quick</prosody></prosody></speak>',
    );
  });

  it('cuts an overlong run without sentence ends at a space', () => {
    const words = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    const out = pieces(`<speak>${words}</speak>`);
    expect(out.length).toBeGreaterThan(1);
    for (const p of out) expect(p.text.length).toBeLessThanOrEqual(310);
    expect(out.map((p) => p.text).join(' ')).toBe(words);
  });
});
