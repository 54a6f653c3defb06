import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeForFestival, FestivalEngine, festivalSpeaks, festivalTtsEngine } from './festival.js';
import { TtsRegistry } from './registry.js';

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

describe('festivalSpeaks', () => {
  it("needs the Indian voices' own script (or digits), and a letter the coding carries for the others", () => {
    const hi = { coding: 'UTF-8', languages: ['hi'] };
    expect(festivalSpeaks('नमस्ते Google', hi)).toBe(true);
    expect(festivalSpeaks('123', hi)).toBe(true);
    expect(festivalSpeaks('Hello world', hi)).toBe(false);
    expect(festivalSpeaks('నమస్కారం', hi)).toBe(false);
    const cs = { coding: 'ISO-8859-2', languages: ['cs'] };
    expect(festivalSpeaks('Příliš', cs)).toBe(true);
    expect(festivalSpeaks('Привет — !', cs)).toBe(false);
    expect(festivalSpeaks('Привет', { coding: 'utf-8', languages: ['ru'] })).toBe(true);
  });
});

describe('FestivalEngine voice discovery (real festival)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'festival-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** festival started with only these voices known: as if the other festvox packages were not installed. */
  function festivalWith(voices: string[]): string {
    const scm = path.join(dir, `only-${voices.join('-')}.scm`);
    writeFileSync(scm, `(set! voice-locations (list ${voices.map((v) => `(assoc '${v} voice-locations)`).join(' ')}))\n`);
    const bin = path.join(dir, `festival-${voices.join('-')}`);
    writeFileSync(bin, `#!/bin/sh\nexec festival ${scm} "$@"\n`);
    chmodSync(bin, 0o755);
    return bin;
  }

  it('reads every installed voice with its language, gender and coding', async () => {
    const e = await new FestivalEngine().init();
    expect(e.languages.map((l) => l.code)).toEqual(['ca', 'cs', 'en', 'fi', 'hi', 'it', 'mr', 'ru', 'te']);
    expect(e.voices.find((v) => v.id === 'czech_dita')).toMatchObject({ gender: 'female', languages: ['cs'], coding: 'ISO-8859-2', sampleRate: 32000 });
    expect(e.voices.find((v) => v.id === 'msu_ru_nsh_clunits')).toMatchObject({ gender: 'male', languages: ['ru'], coding: 'utf-8' });
    // No coding proclaimed: festival's default, Latin-1.
    expect(e.voices.find((v) => v.id === 'kal_diphone')).toMatchObject({ languages: ['en'], coding: 'ISO-8859-1' });
  });

  it('offers only the voices festival knows: a missing package is a missing voice and language', async () => {
    const e = await new FestivalEngine('text2wave', festivalWith(['czech_dita', 'kal_diphone'])).init();
    expect(e.voices.map((v) => v.id).sort()).toEqual(['czech_dita', 'kal_diphone']);
    expect(e.languages.map((l) => l.code)).toEqual(['cs', 'en']);
    // And it still speaks with the voices it has.
    let samples = 0;
    for await (const ch of e.synthesize('Dobrý den.', 'czech_dita', 'cs')) samples += ch.pcm.length / 2;
    expect(samples / 32000).toBeGreaterThan(0.4);
  });

  it('a festival that cannot list voices gives no voices (the model is then not offered), not a crash', async () => {
    const broken = path.join(dir, 'festival-broken');
    writeFileSync(broken, '#!/bin/sh\nexit 3\n');
    chmodSync(broken, 0o755);
    const e = await new FestivalEngine('text2wave', broken).init();
    expect(e.voices).toEqual([]);
    expect(e.languages).toEqual([]);
    expect(await new FestivalEngine('text2wave', path.join(dir, 'no-such-festival')).available()).toBe(false);
  });

  it('the registry maps curated names onto installed voices only, each with its one language', async () => {
    const reg = await TtsRegistry.create([festivalTtsEngine]);
    const m = reg.resolve('parlance-tts-festival-v1')!;
    expect(m.voices.find((v) => v.id === 'Dita')).toMatchObject({ engineVoice: 'czech_dita', languages: ['cs'], gender: 'female', accent: 'czech' });
    expect(m.voices.find((v) => v.id === 'Leena')!.gender).toBe('female'); // festival proclaims lj male; the speaker is a woman
    expect(m.voices.every((v) => v.languages?.length === 1 && !v.variant)).toBe(true);
  });
});
