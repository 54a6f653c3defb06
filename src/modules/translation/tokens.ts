// Token post-step for language identification and translation, shared by async transcripts and real-time sessions.
// Original tokens get `language` (and `translation_status` when translation is configured); each translated segment
// follows its originals as `translation` tokens with the target `language`, the `source_language` and no timings.
import type { Token } from '../../engines/stt/interface.js';
import type { TranslationRegistry } from '../../engines/translate/registry.js';
import type { TranslationPlan } from './plan.js';

export interface OriginalLabels {
  language?: string;
  translation_status?: 'original' | 'none';
}

/** An engine word, possibly labelled with a speaker by the diarization post-step (which runs before this one). */
export type Word = Token & { speaker?: string };

export interface TranslationToken {
  text: string;
  confidence: number;
  /** The speaker of the words translated (SDK translate() pairs an original chunk with a translation of the same speaker). */
  speaker?: string;
  language: string;
  source_language: string;
  translation_status: 'translation';
}

export interface LanguageOptions {
  /** Language the model recognised the speech in. */
  language: string;
  plan?: TranslationPlan;
  /** enable_language_identification: label tokens with their language even without translation. */
  identifyLanguage: boolean;
}

/** Labels of original tokens in the recognised language. */
export function originalLabels(opts: LanguageOptions): OriginalLabels {
  if (opts.plan) return { language: opts.language, translation_status: opts.plan.routes.has(opts.language) ? 'original' : 'none' };
  if (opts.identifyLanguage) return { language: opts.language };
  return {};
}

/** The translation target of speech in the recognised language, if it is translated. */
export const targetOf = (opts: LanguageOptions): string | undefined => opts.plan?.routes.get(opts.language);

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** Mean confidence of the source words, carried by their translation (the engine has none of its own). */
export const meanConfidence = (words: readonly { confidence: number }[]): number =>
  words.length ? round3(words.reduce((s, w) => s + w.confidence, 0) / words.length) : 1;

/** Translated text → tokens, each word with the leading space that joins it to what precedes it. */
export function translationTokens(text: string, source: string, target: string, confidence: number, speaker?: string): TranslationToken[] {
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => ({
      text: ` ${w}`,
      confidence,
      ...(speaker !== undefined ? { speaker } : {}),
      language: target,
      source_language: source,
      translation_status: 'translation',
    }));
}

/** Silence between two words that starts a new segment (a sentence boundary, for want of punctuation). */
export const SEGMENT_GAP_MS = 500;
/** Longest segment, so a pause-less monologue still translates sentence-sized pieces. */
export const SEGMENT_MAX_WORDS = 40;

/** Consecutive words split at pauses, speaker changes and SEGMENT_MAX_WORDS: the units translated in async transcripts. */
export function splitSegments<T extends Pick<Word, 'start_ms' | 'end_ms' | 'speaker'>>(
  words: readonly T[],
  gapMs = SEGMENT_GAP_MS,
  maxWords = SEGMENT_MAX_WORDS,
): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  for (const w of words) {
    const prev = cur[cur.length - 1];
    if (prev && (w.start_ms - prev.end_ms >= gapMs || cur.length >= maxWords || w.speaker !== prev.speaker)) {
      out.push(cur);
      cur = [];
    }
    cur.push(w);
  }
  if (cur.length) out.push(cur);
  return out;
}

export interface TranscriptTokenOut {
  text: string;
  start_ms?: number;
  end_ms?: number;
  confidence: number;
  speaker?: string;
  language?: string;
  source_language?: string;
  translation_status?: string;
}

/**
 * Async transcript tokens from the engine's words: originals labelled, and — with a translation route — each
 * segment followed by its translation. One engine call translates all segments of one source language.
 * `segmentLanguages` (from a language-id model, one per splitSegments() segment) overrides `opts.language` for
 * the labels and the translation source of each segment.
 */
export async function transcriptTokens(
  words: readonly Word[],
  opts: LanguageOptions,
  registry: TranslationRegistry,
  signal?: AbortSignal,
  segmentLanguages?: readonly (string | undefined)[],
): Promise<TranscriptTokenOut[]> {
  const segments = splitSegments(words);
  const segOpts = segments.map((_, i) => ({ ...opts, language: segmentLanguages?.[i] ?? opts.language }));
  const translated = new Map<number, string>();
  for (const language of new Set(segOpts.map((o) => o.language))) {
    const indexes = segOpts.flatMap((o, i) => (o.language === language ? [i] : []));
    const target = targetOf(segOpts[indexes[0]!]!);
    if (!target) continue;
    const texts = await registry.translate(
      language,
      target,
      indexes.map((i) => segments[i]!.map((w) => w.text).join(' ')),
      { signal },
    );
    indexes.forEach((seg, k) => translated.set(seg, texts[k]!));
  }
  let n = 0;
  return segments.flatMap((seg, i) => {
    const o = segOpts[i]!;
    const labels = originalLabels(o);
    const originals = seg.map((w): TranscriptTokenOut => ({
      text: n++ === 0 ? w.text : ` ${w.text}`,
      start_ms: w.start_ms,
      end_ms: w.end_ms,
      confidence: w.confidence,
      ...(w.speaker !== undefined ? { speaker: w.speaker } : {}),
      ...labels,
    }));
    const target = targetOf(o);
    const text = translated.get(i);
    return target && text !== undefined ? [...originals, ...translationTokens(text, o.language, target, meanConfidence(seg), seg[0]!.speaker)] : originals;
  });
}
