import { describe, expect, it } from 'vitest';
import { baseWord, isWord, segmentsToTokens } from './tokens.js';

describe('pocketsphinx segments → tokens', () => {
  it('recognises fillers and pronunciation variants', () => {
    for (const w of ['<s>', '</s>', '<sil>', '[NOISE]', '[SPEECH]', '++UM++', '+BREATH+', '']) expect(isWord(w), w).toBe(false);
    for (const w of ['the', "don't", 'read(2)', 'a']) expect(isWord(w), w).toBe(true);
    expect(baseWord('the(2)')).toBe('the');
    expect(baseWord('the')).toBe('the');
  });

  it('drops non-words, converts frames to ms relative to the leading <s>, clips to the audio', () => {
    const segs = [
      { word: '<s>', startFrame: 540, endFrame: 559, prob: 1 },
      { word: 'hello', startFrame: 560, endFrame: 599, prob: 0.9 },
      { word: '<sil>', startFrame: 600, endFrame: 619, prob: 1 },
      { word: 'world(2)', startFrame: 620, endFrame: 669, prob: 1.0000001 },
      { word: '[NOISE]', startFrame: 670, endFrame: 689, prob: 0.5 },
      { word: 'again', startFrame: 690, endFrame: 739, prob: -0.1 },
      { word: '</s>', startFrame: 740, endFrame: 749, prob: 1 },
    ];
    // 'again' (frames 150–199 after <s>, so 2500–3000 ms) lies past the end of the audio (2450 ms): dropped.
    expect(segmentsToTokens(segs, 1000, 2450)).toEqual([
      { text: 'hello', start_ms: 1200, end_ms: 1600, confidence: 0.9 },
      { text: 'world', start_ms: 1800, end_ms: 2300, confidence: 1 },
    ]);
    // A word running past the end is clipped, and probabilities are clamped to [0, 1].
    expect(segmentsToTokens(segs, 1000, 2700).at(-1)).toEqual({ text: 'again', start_ms: 2500, end_ms: 2700, confidence: 0 });
    expect(segmentsToTokens([], 0)).toEqual([]);
  });
});
