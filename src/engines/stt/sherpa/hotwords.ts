// A request's context terms as sherpa-onnx hotwords: phrases the decoder favours while searching. Only transducer
// models (Zipformer, NeMo transducers such as Parakeet TDT; offline ones per stream, streaming ones per recognizer)
// take them, and only when decoded with modified_beam_search and told how to split words into their tokens (the
// manifest's `modeling_unit`, with the `bpe_vocab` file for BPE models). Other model types ignore context;
// sherpa-onnx would end the process if given hotwords for them, so they never are.
import { readFileSync } from 'node:fs';
import { type InstalledModel, TRANSDUCER_TYPES } from '../../model-dir/manifest.js';
import type { RecognitionContext } from '../interface.js';

/** Bonus per token of a context term in the beam search (sherpa-onnx's default; higher biases harder). */
export const HOTWORDS_SCORE = 1.5;
/** Most phrases sent per stream (each adds states to the search's context graph). */
const MAX_PHRASES = 100;

/** The model can be biased toward context terms. */
export function takesHotwords(model: InstalledModel): boolean {
  return (model.family === 'stt-offline' || model.family === 'stt-streaming') && TRANSDUCER_TYPES.has(model.type) && model.modeling_unit !== undefined;
}

/** How the model writes Latin letters: its tokens are all upper case (older LibriSpeech models), all lower, or mixed. */
export function tokenCase(tokensFile: string): 'upper' | 'lower' | 'mixed' {
  // Special symbols (<blk>, <unk>, <sos/eos>) say nothing of the model's letters.
  const symbols = readFileSync(tokensFile, 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((s) => !/^<.*>$/.test(s))
    .join('');
  const upper = /[A-Z]/.test(symbols);
  const lower = /[a-z]/.test(symbols);
  return upper && !lower ? 'upper' : lower && !upper ? 'lower' : 'mixed';
}

/**
 * The hotwords of a context, as sherpa-onnx takes them per stream: phrases separated by "/", each in the model's
 * case. Characters that would change the meaning of the line (":" starts a score, "/" separates phrases) or that
 * no model spells are dropped; undefined when no term is left.
 */
export function hotwordsOf(context: RecognitionContext | undefined, letters: 'upper' | 'lower' | 'mixed'): string | undefined {
  if (!context) return undefined;
  const phrases = new Set<string>();
  for (const term of context.terms) {
    let phrase = term
      .normalize('NFC')
      .replace(/[^\p{L}\p{N}'\s-]/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (letters === 'upper') phrase = phrase.toUpperCase();
    else if (letters === 'lower') phrase = phrase.toLowerCase();
    if (phrase) phrases.add(phrase);
    if (phrases.size === MAX_PHRASES) break;
  }
  return phrases.size ? [...phrases].join('/') : undefined;
}
