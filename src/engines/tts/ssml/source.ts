// What a synthesis reads: plain text (whole, or streamed as it is written) or an SSML document, and the one call
// that has an engine speak either. An SSML document is handed over as a promise-maker: a WebSocket stream's document
// is complete (and parsed) only once its text ends.
import type { SynthesisChunk, SynthesisOptions, TtsEngine } from '../interface.js';
import type { SsmlDocument } from './parse.js';
import { translateSsml } from './translate.js';

export interface SsmlSource {
  /** The parsed document; rejects (with the request's error) when it is not valid SSML. */
  ssml(): Promise<SsmlDocument>;
}

export type SpeechSource = string | AsyncIterable<string> | SsmlSource;

export const isSsmlSource = (source: SpeechSource): source is SsmlSource => typeof source === 'object' && 'ssml' in source;

/** An SSML document spoken by the engine's own SSML support, else through the translator. */
export function synthesizeSsml(
  engine: TtsEngine,
  doc: SsmlDocument,
  voice: string,
  language: string,
  opts: SynthesisOptions = {},
): AsyncIterable<SynthesisChunk> {
  return engine.synthesizeSsml ? engine.synthesizeSsml(doc, voice, language, opts) : translateSsml(engine, doc, voice, language, opts);
}

/** Plain text or SSML through `engine`. */
export async function* synthesizeSource(
  engine: TtsEngine,
  source: SpeechSource,
  voice: string,
  language: string,
  opts: SynthesisOptions = {},
): AsyncGenerator<SynthesisChunk> {
  if (!isSsmlSource(source)) return yield* engine.synthesize(source, voice, language, opts);
  yield* synthesizeSsml(engine, await source.ssml(), voice, language, opts);
}
