// The text of a Wyoming streamed synthesis (synthesize-chunk after synthesize-chunk). It is plain text, spoken
// sentence by sentence as it arrives, or an SSML document: synthesize-start says which with `text_format`, or the
// reply's first characters that are not space do (`<speak`, an XML declaration allowed before it, as `synthesize`
// reads it). Until they arrive nothing is spoken. A document cannot be cut at the sentence ends of its raw text
// (inside a tag, a sentence end means nothing), so it is spoken once complete: at its closing </speak>, or at
// synthesize-stop. The SSML machinery then still makes audio sentence by sentence and break by break.
import { parseSsml, SsmlError } from '../../engines/tts/ssml/parse.js';
import type { TtsConfig } from '../tts/request-config.js';
import type { TtsService } from '../tts/service.js';
import type { LiveText, SpeechText } from '../tts/speech-text.js';
import type { TextFormat } from '../tts/ssml-text.js';

/** A reply that has not shown its format within this many characters is plain text. */
const MAX_UNDECIDED = 1024;
const XML_DECLARATION = /^<\?xml[^>]*\?>\s*/;

/** Whether the text received so far is SSML, plain text, or too short to tell. */
export function sniffFormat(received: string): TextFormat | undefined {
  let rest = received.trimStart();
  const declaration = XML_DECLARATION.exec(rest);
  if (declaration) rest = rest.slice(declaration[0].length);
  else if (rest.startsWith('<?xml') ? !rest.includes('>') : '<?xml'.startsWith(rest)) return undefined;
  if (/^<speak[\s>/]/.test(rest)) return 'ssml';
  // "<speak" itself needs the character after it ("<speaker" is text).
  return '<speak'.startsWith(rest) ? undefined : 'text';
}

/** Whether an SSML document's text so far is a whole document: its </speak> seen, and it parses. */
function isWholeDocument(doc: string): boolean {
  if (!/<\/speak\s*>\s*$/.test(doc)) return false;
  try {
    parseSsml(doc);
    return true;
  } catch (err) {
    // A </speak> inside a comment, or an error the whole text will report at synthesize-stop.
    if (err instanceof SsmlError) return false;
    throw err;
  }
}

export class WyomingStreamText {
  private format: TextFormat | undefined;
  /** Text received before its format is known. */
  private pending = '';
  private live: LiveText | undefined;
  /** SSML: the document so far, and whether it is whole (only space may follow). */
  private doc = '';
  private whole = false;
  private readonly decided: Promise<SpeechText>;
  private settle!: { resolve(text: SpeechText): void; reject(err: unknown): void };

  constructor(
    private readonly tts: TtsService,
    private readonly cfg: TtsConfig,
    format?: TextFormat,
  ) {
    this.decided = new Promise<SpeechText>((resolve, reject) => (this.settle = { resolve, reject }));
    // A stream that fails before its text is read: no unhandled rejection.
    this.decided.catch(() => undefined);
    if (format) this.open(format);
  }

  /** What the synthesis speaks, once its format is known (at the latest when the text ends). */
  text(): Promise<SpeechText> {
    return this.decided;
  }

  /** A chunk's text. Throws (an invalid_request) for text over the cap, or for text after a whole document. */
  push(text: string): void {
    if (!this.format) {
      this.pending += text;
      const format = sniffFormat(this.pending) ?? (this.pending.length > MAX_UNDECIDED ? 'text' : undefined);
      if (!format) return;
      text = this.pending;
      this.pending = '';
      this.open(format);
    }
    if (this.format === 'text') return this.live!.push(text);
    this.pushSsml(text);
  }

  /** No more text (synthesize-stop, or the stream stopped): what is left is spoken. */
  end(): void {
    if (!this.format) {
      const rest = this.pending;
      this.pending = '';
      try {
        // Only space or the start of a tag: what it makes is the text's error, or nothing to speak.
        this.open(sniffFormat(rest) ?? 'text', rest);
      } catch {
        // text() rejects with it.
      }
    }
    this.live!.end();
  }

  /** The format is known: the synthesis gets its text, `first` pushed into it already (or its error). */
  private open(format: TextFormat, first = ''): void {
    this.format = format;
    const live = (this.live = this.tts.liveText(format));
    try {
      if (first) live.push(first);
    } catch (err) {
      this.settle.reject(err);
      throw err;
    }
    this.settle.resolve(this.tts.streamText(live, this.cfg, format));
  }

  private pushSsml(text: string): void {
    // Capped with its markup; what follows a whole document still counts toward the cap.
    this.live!.push(text);
    this.doc += text;
    if (this.whole) {
      // Only space (or a comment) may follow </speak>: anything else is the parser's error, naming its position.
      if (text.trim()) this.tts.checkText(this.doc, this.cfg, 'ssml');
      return;
    }
    if (isWholeDocument(this.doc)) {
      this.whole = true;
      this.live!.end();
    }
  }
}
