// Token display helpers shared by the transcript view and the live view.

export interface Token {
  text: string;
  start_ms?: number;
  end_ms?: number;
  confidence: number;
  speaker?: string;
  language?: string;
  translation_status?: 'original' | 'translation' | 'none';
  is_final?: boolean;
}

// Distinguishable, and readable as text colours (contrast >= 4.5:1) on white and on the strongest confidence shade
// below (4.6:1 at the least, checked by axe-core in the console tests).
const SPEAKER_COLOURS = ['#184c98', '#8f1e18', '#156131', '#623280', '#804900', '#00575f', '#6e244e', '#3b4800'];

/** A stable colour per speaker label ("1", "2", ... or any string). */
export function speakerColour(speaker: string | undefined): string | undefined {
  if (speaker === undefined) return undefined;
  const n = Number(speaker);
  const i = Number.isInteger(n) ? n - 1 : [...speaker].reduce((a, c) => a + c.charCodeAt(0), 0);
  return SPEAKER_COLOURS[((i % SPEAKER_COLOURS.length) + SPEAKER_COLOURS.length) % SPEAKER_COLOURS.length];
}

/** Low confidence shows as a warmer background: fully confident words stay plain. */
export const confidenceShade = (confidence: number): string => `rgba(255, 170, 0, ${(Math.max(0, Math.min(1, 1 - confidence)) * 0.7).toFixed(2)})`;

/** Tokens carry their own spacing (" word"); split it off so the word alone is the clickable part. */
export function splitSpace(text: string): [string, string] {
  const m = /^(\s*)(.*)$/s.exec(text)!;
  return [m[1]!, m[2]!];
}

export const isTranslation = (t: Token): boolean => t.translation_status === 'translation';
export const isMarker = (t: Token): boolean => t.text === '<end>' || t.text === '<fin>';
