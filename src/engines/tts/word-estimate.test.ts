import { describe, expect, it } from 'vitest';
import { estimateWordTimings, speechLayout, wordWeight } from './word-estimate.js';
import { textWords } from './word-timings.js';

const RATE = 16000;

/** Tone for each [seconds, loud] part, one after the other. */
function audio(parts: [number, boolean][]): Buffer {
  const samples: number[] = [];
  for (const [sec, loud] of parts) for (let i = 0; i < Math.round(sec * RATE); i++) samples.push(loud ? Math.round(8000 * Math.sin(i / 5)) : 0);
  const buf = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => buf.writeInt16LE(s, i * 2));
  return buf;
}

describe('speechLayout', () => {
  it('finds the speech and the pauses of at least 100 ms inside it', () => {
    const layout = speechLayout(
      audio([
        [0.2, false],
        [0.5, true],
        [0.05, false],
        [0.3, true],
        [0.25, false],
        [0.4, true],
        [0.3, false],
      ]),
      RATE,
    )!;
    expect(layout.start).toBeCloseTo(0.2, 2);
    expect(layout.end).toBeCloseTo(1.7, 2);
    expect(layout.pauses).toHaveLength(1);
    expect(layout.pauses[0]!.start).toBeCloseTo(1.05, 2);
    expect(layout.pauses[0]!.end).toBeCloseTo(1.3, 2);
  });

  it('is undefined for silence', () => {
    expect(speechLayout(audio([[0.5, false]]), RATE)).toBeUndefined();
  });
});

describe('estimateWordTimings', () => {
  it('puts a pause at the punctuation and shares the speech by word length', () => {
    const words = textWords('Hello there, my friend.');
    const pcm = audio([
      [0.1, false],
      [0.8, true],
      [0.3, false],
      [0.9, true],
      [0.2, false],
    ]);
    const t = estimateWordTimings(words, pcm, RATE);
    expect(t.map((w) => w.text)).toEqual(['Hello', 'there', 'my', 'friend']);
    expect(t[0]!.start).toBeCloseTo(0.1, 2);
    expect(t[1]!.end).toBeCloseTo(0.9, 2);
    expect(t[2]!.start).toBeCloseTo(1.2, 2);
    expect(t[3]!.end).toBeCloseTo(2.1, 2);
    for (let i = 1; i < t.length; i++) expect(t[i]!.start).toBeGreaterThanOrEqual(t[i - 1]!.end);
    // "friend" is longer than "my".
    expect(t[3]!.end - t[3]!.start).toBeGreaterThan(t[2]!.end - t[2]!.start);
  });

  it('weighs vowel groups over consonants and digits as words', () => {
    expect(wordWeight('a')).toBeLessThan(wordWeight('strength'));
    expect(wordWeight('42')).toBeGreaterThan(wordWeight('it'));
  });
});
