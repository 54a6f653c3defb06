// SSML as a request's text (`text_format: "ssml"`): the document checked and parsed before any audio, its errors
// as invalid_request at `text` naming the line and column. Caps count the spoken text (markup removed, a <sub>'s
// alias in place of its content): at most PARLANCE_TTS_MAX_TEXT_CHARS of it, in a document of at most
// SSML_MARKUP_FACTOR times that with its markup; usage meters the spoken characters. A WebSocket stream's document
// arrives in pieces and is parsed once its text ends.
import { parseSsml, SsmlError, type SsmlDocument } from '../../engines/tts/ssml/parse.js';
import { invalidField } from '../../wire/api-error.js';
import type { TtsConfig } from './request-config.js';
import type { LiveText, SpeechText } from './speech-text.js';

export type TextFormat = 'text' | 'ssml';

/** How much longer than the spoken-text cap an SSML document may be with its markup. */
export const SSML_MARKUP_FACTOR = 4;

/** A request's SSML, parsed, or invalid_request located at `text`. */
export function checkSsmlText(text: unknown, maxTextChars: number, cfg?: TtsConfig): SsmlDocument {
  if (text === undefined || text === null) throw invalidField('text', 'is required', 'missing');
  if (typeof text !== 'string') throw invalidField('text', 'must be string', 'invalid_type');
  const maxDocument = maxTextChars * SSML_MARKUP_FACTOR;
  if (text.length > maxDocument) throw invalidField('text', `must NOT have more than ${maxDocument} characters of SSML, markup included`, 'invalid_length');
  let doc: SsmlDocument;
  try {
    doc = parseSsml(text);
  } catch (err) {
    if (err instanceof SsmlError) throw invalidField('text', `is not valid SSML at ${err.message}`);
    throw err;
  }
  if (!/[\p{L}\p{N}]/u.test(doc.text)) throw invalidField('text', 'must contain something to speak');
  if (doc.text.length > maxTextChars)
    throw invalidField('text', `must NOT have more than ${maxTextChars} characters of spoken text (SSML markup not counted)`, 'invalid_length');
  if (cfg?.model.engine.speaks && !cfg.model.engine.speaks(doc.text, cfg.voice.engineVoice))
    throw invalidField('text', `has nothing voice "${cfg.voice.id}" can pronounce in "${cfg.language}" (check the text's script and the language)`);
  return doc;
}

/** A request's whole SSML document, already checked; metered by its spoken characters. */
export function ssmlText(doc: SsmlDocument): SpeechText {
  return { source: { ssml: () => Promise.resolve(doc) }, characters: () => doc.text.length };
}

/** A stream's SSML: the document is its whole text, checked once the text ends; nothing is metered before. */
export function liveSsmlText(live: LiveText, maxTextChars: number, cfg?: TtsConfig): SpeechText {
  let doc: SsmlDocument | undefined;
  const ssml = async (): Promise<SsmlDocument> => {
    let raw = '';
    for await (const piece of live.source) raw += piece;
    return (doc = checkSsmlText(raw, maxTextChars, cfg));
  };
  return { source: { ssml }, characters: () => doc?.text.length ?? 0 };
}
