// Pronunciations for words the dictionary lacks ("kubernetes", "soniox"): espeak-ng's US English phonemes (IPA,
// `--ipa=3`) mapped to the CMU ARPAbet phones of pocketsphinx's en-us acoustic model. espeak-ng is already a
// dependency (the default TTS engine) and has letter-to-sound rules for any spelling, which the dictionary does not.
import { runChild } from '../../../lib/spawner/spawn-child.js';

/** IPA (after stress marks and ties are dropped) → ARPAbet, longest match first. */
const IPA_TO_ARPABET: ReadonlyArray<readonly [string, string]> = (
  [
    // Diphthongs and r-coloured vowels first: they start with a plain vowel symbol.
    ['aɪə', 'AY AH'],
    ['aɪɚ', 'AY ER'],
    ['aʊ', 'AW'],
    ['aɪ', 'AY'],
    ['eɪ', 'EY'],
    ['oʊ', 'OW'],
    ['əʊ', 'OW'],
    ['ɔɪ', 'OY'],
    ['ɑːɹ', 'AA R'],
    ['ɔːɹ', 'AO R'],
    ['ɛɹ', 'EH R'],
    ['ɪɹ', 'IH R'],
    ['ʊɹ', 'UH R'],
    ['iə', 'IY AH'],
    ['ɜː', 'ER'],
    ['ɑː', 'AA'],
    ['ɔː', 'AO'],
    ['iː', 'IY'],
    ['uː', 'UW'],
    ['ɚ', 'ER'],
    ['ɝ', 'ER'],
    ['ɑ', 'AA'],
    ['ɒ', 'AA'],
    ['æ', 'AE'],
    ['ʌ', 'AH'],
    ['ə', 'AH'],
    ['ɐ', 'AH'],
    ['ɔ', 'AO'],
    ['ɛ', 'EH'],
    ['e', 'EH'],
    ['ɪ', 'IH'],
    ['ᵻ', 'IH'],
    ['i', 'IY'],
    ['ʊ', 'UH'],
    ['u', 'UW'],
    ['o', 'OW'],
    ['a', 'AA'],
    // Consonants.
    ['tʃ', 'CH'],
    ['dʒ', 'JH'],
    ['b', 'B'],
    ['d', 'D'],
    ['ð', 'DH'],
    ['f', 'F'],
    ['ɡ', 'G'],
    ['g', 'G'],
    ['h', 'HH'],
    ['k', 'K'],
    ['x', 'K'],
    ['l', 'L'],
    ['ɫ', 'L'],
    ['m', 'M'],
    ['n', 'N'],
    ['ŋ', 'NG'],
    ['p', 'P'],
    ['ɹ', 'R'],
    ['r', 'R'],
    ['ɾ', 'T'],
    ['ʔ', 'T'],
    ['s', 'S'],
    ['ʃ', 'SH'],
    ['t', 'T'],
    ['θ', 'TH'],
    ['v', 'V'],
    ['w', 'W'],
    ['ʍ', 'W'],
    ['j', 'Y'],
    ['z', 'Z'],
    ['ʒ', 'ZH'],
    ['ç', 'HH'],
  ] as const
)
  .slice()
  .sort((a, b) => b[0].length - a[0].length);

/** espeak-ng IPA of one word → ARPAbet phones ("K Y UW B ER N IY T S"), or undefined when a symbol has no mapping. */
export function ipaToArpabet(ipa: string): string | undefined {
  // Stress (ˈ ˌ), the tie espeak puts inside multi-letter phonemes (U+200D), syllabic and other diacritics, and
  // word spaces carry nothing the phone set can express.
  const s = ipa.replace(/[ˈˌ\s.-]|\u200d|\u0329|\u0361|\u031a|\u02de/gu, '');
  const phones: string[] = [];
  for (let i = 0; i < s.length;) {
    const hit = IPA_TO_ARPABET.find(([sym]) => s.startsWith(sym, i));
    if (!hit) {
      if (s[i] === 'ː') {
        i++; // a length mark after a vowel the table has no long form for
        continue;
      }
      return undefined;
    }
    phones.push(hit[1]);
    i += hit[0].length;
  }
  return phones.length > 0 ? phones.join(' ') : undefined;
}

/** US English letter names in ARPAbet, for acronyms said letter by letter. */
const LETTER_NAMES: Readonly<Record<string, string>> = {
  A: 'EY',
  B: 'B IY',
  C: 'S IY',
  D: 'D IY',
  E: 'IY',
  F: 'EH F',
  G: 'JH IY',
  H: 'EY CH',
  I: 'AY',
  J: 'JH EY',
  K: 'K EY',
  L: 'EH L',
  M: 'EH M',
  N: 'EH N',
  O: 'OW',
  P: 'P IY',
  Q: 'K Y UW',
  R: 'AA R',
  S: 'EH S',
  T: 'T IY',
  U: 'Y UW',
  V: 'V IY',
  W: 'D AH B AH L Y UW',
  X: 'EH K S',
  Y: 'W AY',
  Z: 'Z IY',
};

/** "IAX" → "AY EY EH K S"; undefined for anything but capital letters A–Z. */
export function spelledLetters(word: string): string | undefined {
  if (!/^[A-Z]+$/.test(word)) return undefined;
  return [...word].map((c) => LETTER_NAMES[c]).join(' ');
}

/**
 * Words asked about: Latin letters with inner apostrophes or hyphens. The model is English; espeak-ng would read other
 * scripts out as descriptions of the characters.
 */
export const SPEAKABLE_WORD = /^\p{Script=Latin}[\p{Script=Latin}'-]*$/u;

/**
 * ARPAbet pronunciations of `words` from espeak-ng (one child process for all of them; a line per word). Words it
 * cannot pronounce in this phone set are left out of the map.
 */
export async function pronounce(words: readonly string[], options: { espeakPath?: string; timeoutMs?: number } = {}): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const asked = words.filter((w) => SPEAKABLE_WORD.test(w));
  if (asked.length === 0) return out;
  // One word per line: espeak-ng answers each line (a clause) on a line of its own.
  const input = asked.map((w) => `${w.replace(/-/g, ' ')}\n`).join('');
  const run = await runChild(options.espeakPath ?? 'espeak-ng', ['-q', '--ipa=3', '-v', 'en-us'], { input, timeoutMs: options.timeoutMs ?? 10_000 });
  if (run.code !== 0) throw new Error(`espeak-ng exited with ${run.code ?? run.signal}: ${run.stderr.trim().split('\n')[0] ?? ''}`);
  const stdout = run.stdout;
  const lines = stdout.split('\n').map((l) => l.trim());
  if (lines.filter((l) => l.length > 0).length !== asked.length) {
    // Out of step (a word espeak split into clauses): ask one by one rather than pair the wrong lines.
    if (asked.length === 1) return out;
    for (const w of asked) for (const [k, v] of await pronounce([w], options)) out.set(k, v);
    return out;
  }
  const answered = lines.filter((l) => l.length > 0);
  asked.forEach((w, i) => {
    const phones = ipaToArpabet(answered[i]!);
    if (phones) out.set(w, phones);
  });
  return out;
}
