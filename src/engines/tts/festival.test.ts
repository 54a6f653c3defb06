import { describe, expect, it } from 'vitest';
import { encodeForFestival } from './festival.js';

describe('encodeForFestival', () => {
  it('converts to single-byte codings that decode back to the same text', () => {
    for (const [coding, text] of [
      ['ISO-8859-2', 'Příliš žluťoučký kůň úpěl ďábelské ódy. ĎŤŇ'],
      ['ISO-8859-15', 'Això és una prova amb força, l·l i 5 €.'],
      ['ISO-8859-1', 'Hyvää päivää, perché è così.'],
    ] as const) {
      const bytes = encodeForFestival(text, coding);
      expect(bytes.length, coding).toBe([...text].length);
      const decoded = coding === 'ISO-8859-1' ? bytes.toString('latin1') : new TextDecoder(coding).decode(bytes);
      expect(decoded, coding).toBe(text);
    }
  });

  it('keeps UTF-8 voices in UTF-8, whatever the spelling of the coding', () => {
    for (const coding of ['UTF-8', 'utf-8', 'utf8']) expect(encodeForFestival('Здравствуйте नमस्ते', coding).toString('utf8')).toBe('Здравствуйте नमस्ते');
  });

  it('falls back to the base letter, then a space, for characters the coding lacks', () => {
    // ő is not in Latin-1 (o is); typographic quotes become ASCII ones; Cyrillic has no Latin-1 form.
    expect(encodeForFestival('ő ’x” Ж', 'ISO-8859-1').toString('latin1')).toBe(`o 'x"  `);
    // A precomposed letter given decomposed (c + combining háček) is composed first.
    expect(new TextDecoder('iso-8859-2').decode(encodeForFestival('c\u030C', 'ISO-8859-2'))).toBe('č');
  });
});
