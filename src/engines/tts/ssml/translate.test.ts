import { describe, expect, it } from 'vitest';
import { parseSsml } from './parse.js';
import { scalePcm, ssmlRuns } from './translate.js';

describe('ssmlRuns', () => {
  it('joins neighbouring text of one prosody and keeps breaks and prosody changes apart', () => {
    const doc = parseSsml(
      '<speak>Call <say-as interpret-as="digits">42</say-as> <sub alias="now">asap</sub>. <break time="300ms"/> <prosody rate="slow">Slowly <prosody volume="-6dB">softly</prosody></prosody> done</speak>',
    );
    expect(ssmlRuns(doc.items)).toEqual([
      { kind: 'text', text: 'Call 4 2 now .', prosody: { rate: 1, pitch: 0, volume: 0 } },
      { kind: 'break', seconds: 0.3 },
      { kind: 'text', text: 'Slowly', prosody: { rate: 0.75, pitch: 0, volume: 0 } },
      { kind: 'text', text: 'softly', prosody: { rate: 0.75, pitch: 0, volume: -6 } },
      { kind: 'text', text: 'done', prosody: { rate: 1, pitch: 0, volume: 0 } },
    ]);
  });
});

describe('scalePcm', () => {
  it('scales by decibels, clips at full scale and silences', () => {
    const pcm = Buffer.alloc(6);
    pcm.writeInt16LE(1000, 0);
    pcm.writeInt16LE(-20000, 2);
    pcm.writeInt16LE(30000, 4);
    const half = scalePcm(pcm, 20 * Math.log10(0.5));
    expect([half.readInt16LE(0), half.readInt16LE(2), half.readInt16LE(4)]).toEqual([500, -10000, 15000]);
    const loud = scalePcm(pcm, 6);
    expect([loud.readInt16LE(2), loud.readInt16LE(4)]).toEqual([-32768, 32767]);
    expect([...scalePcm(pcm, -Infinity)]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(scalePcm(pcm, 0)).toBe(pcm);
  });
});
