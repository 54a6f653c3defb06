// The API's `context` (a string, or {general, text, terms, translation_terms}) as what a recogniser can use: terms
// to expect, written as given, and text about the audio. Validation (lengths, token caps) happens where the request
// is accepted; this only reads a valid value.
import type { RecognitionContext } from './interface.js';

export function recognitionContext(context: unknown): RecognitionContext | undefined {
  if (typeof context === 'string') return context.trim() ? { terms: [], text: context } : undefined;
  if (context === null || typeof context !== 'object') return undefined;
  const c = context as { general?: unknown; text?: unknown; terms?: unknown; translation_terms?: unknown };
  const terms: string[] = [];
  if (Array.isArray(c.terms)) for (const t of c.terms) if (typeof t === 'string' && t.trim()) terms.push(t.trim());
  // A translation term's source side is a word spoken in the audio.
  if (Array.isArray(c.translation_terms))
    for (const t of c.translation_terms) if (t && typeof t === 'object' && typeof t.source === 'string' && t.source.trim()) terms.push(t.source.trim());
  const texts: string[] = [];
  if (typeof c.text === 'string') texts.push(c.text);
  if (Array.isArray(c.general)) for (const g of c.general) if (g && typeof g === 'object' && typeof g.value === 'string') texts.push(g.value);
  const text = texts.join('\n').trim();
  return terms.length > 0 || text ? { terms: [...new Set(terms)], text } : undefined;
}
