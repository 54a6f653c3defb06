// The attribute values of the SSML subset (ssml/parse.ts), read into numbers: break durations, and the prosody
// rate (a speed multiplier), pitch (semitones) and volume (decibels). A value outside what is accepted throws a
// plain Error whose message the parser places at the attribute's position.

/** The longest break one <break> may ask for. */
export const MAX_BREAK_SECONDS = 10;

/** `strength` → seconds (SSML leaves the durations to the processor; these follow common practice). */
export const BREAK_STRENGTH: Readonly<Record<string, number>> = {
  none: 0,
  'x-weak': 0.1,
  weak: 0.25,
  medium: 0.4,
  strong: 0.7,
  'x-strong': 1,
};

const RATE_WORDS: Readonly<Record<string, number>> = { 'x-slow': 0.5, slow: 0.75, medium: 1, default: 1, fast: 1.5, 'x-fast': 2 };
const PITCH_WORDS: Readonly<Record<string, number>> = { 'x-low': -4, low: -2, medium: 0, default: 0, high: 2, 'x-high': 4 };
const VOLUME_WORDS: Readonly<Record<string, number>> = {
  silent: -Infinity,
  'x-soft': -12,
  soft: -6,
  medium: 0,
  default: 0,
  loud: 3,
  'x-loud': 6,
};

const NUMBER = String.raw`(?:\d+(?:\.\d*)?|\.\d+)`;
const TIME_RE = new RegExp(`^(${NUMBER})(ms|s)$`);
const SIGNED_RE = (units: string) => new RegExp(`^([+-]?)(${NUMBER})(${units})$`);
const RATE_RE = SIGNED_RE('%|');
const PITCH_RE = SIGNED_RE('%|st|Hz');
const VOLUME_RE = SIGNED_RE('dB|%|');

const words = (table: Readonly<Record<string, number>>) => Object.keys(table).join(', ');

/** A break's `time` ("700ms", "1.5s") in seconds. */
export function breakTime(value: string): number {
  const m = TIME_RE.exec(value.trim());
  if (!m) throw new Error(`time="${value}" is not a duration such as "700ms" or "1.5s"`);
  const seconds = Number(m[1]) / (m[2] === 'ms' ? 1000 : 1);
  if (seconds > MAX_BREAK_SECONDS) throw new Error(`time="${value}" is longer than the ${MAX_BREAK_SECONDS} s a break may last`);
  return seconds;
}

/** A break's `strength` in seconds. */
export function breakStrength(value: string): number {
  const s = BREAK_STRENGTH[value.trim()];
  if (s === undefined) throw new Error(`strength="${value}" is not one of ${words(BREAK_STRENGTH)}`);
  return s;
}

/** prosody `rate`: a multiplier of the speaking rate ("x-slow" … "x-fast", "80%", "+20%", "-20%", "1.5"). */
export function prosodyRate(value: string): number {
  const v = value.trim();
  const word = RATE_WORDS[v];
  if (word !== undefined) return word;
  const m = RATE_RE.exec(v);
  if (!m) throw new Error(`rate="${value}" is not one of ${words(RATE_WORDS)}, a percentage ("80%", "+20%") or a multiplier ("1.5")`);
  const n = Number(m[2]);
  const rate = m[3] === '%' ? (m[1] ? 1 + (m[1] === '-' ? -n : n) / 100 : n / 100) : m[1] === '-' ? -n : n;
  if (!(rate > 0) || rate > 10) throw new Error(`rate="${value}" is out of range (a multiplier above 0 and at most 10)`);
  return rate;
}

/** prosody `pitch`: semitones relative to the voice ("x-low" … "x-high", "+10%", "-2st"). */
export function prosodyPitch(value: string): number {
  const v = value.trim();
  const word = PITCH_WORDS[v];
  if (word !== undefined) return word;
  const m = PITCH_RE.exec(v);
  if (!m || !m[1] || m[3] === 'Hz' || m[3] === '')
    throw new Error(
      `pitch="${value}" is not one of ${words(PITCH_WORDS)} or a relative change such as "+10%" or "-2st" (absolute and Hz values are not supported)`,
    );
  const n = (m[1] === '-' ? -1 : 1) * Number(m[2]);
  if (m[3] === '%' && n <= -100) throw new Error(`pitch="${value}" lowers the pitch by 100 % or more`);
  const semitones = m[3] === '%' ? 12 * Math.log2(1 + n / 100) : n;
  if (Math.abs(semitones) > 12) throw new Error(`pitch="${value}" is out of range (at most an octave, 12st, either way)`);
  return semitones;
}

/** prosody `volume`: decibels relative to the voice ("silent" … "x-loud", "+6dB", "-6dB", "50%", 0–100). */
export function prosodyVolume(value: string): number {
  const v = value.trim();
  const word = VOLUME_WORDS[v];
  if (word !== undefined) return word;
  const m = VOLUME_RE.exec(v);
  if (!m)
    throw new Error(`volume="${value}" is not one of ${words(VOLUME_WORDS)}, a change in decibels ("-6dB"), a percentage ("50%") or a level from 0 to 100`);
  const n = Number(m[2]);
  let db: number;
  if (m[3] === 'dB') db = m[1] === '-' ? -n : n;
  else if (m[3] === '%') {
    const gain = m[1] ? 1 + (m[1] === '-' ? -n : n) / 100 : n / 100;
    db = gain > 0 ? 20 * Math.log10(gain) : -Infinity;
  } else {
    // SSML 1.1's absolute level: 0 (silent) to 100 (the voice's own level, the default).
    if (m[1] || n > 100) throw new Error(`volume="${value}" is out of range (a level from 0 to 100)`);
    db = n > 0 ? 20 * Math.log10(n / 100) : -Infinity;
  }
  if (db > 20) throw new Error(`volume="${value}" is out of range (at most +20dB)`);
  return db;
}
