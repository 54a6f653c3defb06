import { describe, expect, it } from 'vitest';
import { channelsOf, joinedText, mergeChannels } from './channels.js';

const tok = (text: string, start_ms?: number) => ({ text, ...(start_ms !== undefined ? { start_ms, end_ms: start_ms + 200 } : {}), confidence: 1 });

describe('multichannel transcripts', () => {
  it('recognises each channel of a multichannel job, else the mix', () => {
    expect(channelsOf(true, 2)).toEqual([0, 1]);
    expect(channelsOf(false, null)).toEqual([undefined]);
  });

  it('merges the channels in time order, a translation after the token before it in its channel', () => {
    const left = [tok('hello', 0), tok(' there', 300), tok(' hola'), tok(' fine', 2000)];
    const right = [tok('hi', 250), tok(' yes', 300)];
    const merged = mergeChannels([left, right]);
    expect(merged.map((t) => [t.channel, t.text])).toEqual([
      [0, 'hello'],
      [1, 'hi'],
      [0, ' there'],
      [0, ' hola'],
      [1, ' yes'],
      [0, ' fine'],
    ]);
  });

  it("joins the text with a space before each channel's first token", () => {
    expect(joinedText(mergeChannels([[tok('hello', 0), tok(' there', 500)], [tok('hi', 250)]]))).toBe('hello hi there');
  });
});
