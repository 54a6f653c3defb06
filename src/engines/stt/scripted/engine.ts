// A scripted speech-to-text engine for tests: it recognises no audio, it plays a script of timed words against the
// amount of audio it is given. Everything it emits follows from the script and the audio time, never from the
// wall clock, so tests of what sits above an engine (live sessions, their renderers, async jobs) are fast and
// deterministic. It keeps the StreamingSession contract as the real engines do:
// - a word is heard once the audio reaches its end; the open utterance's heard words go out as a `partial` at most
//   every `partialIntervalMs` of audio, and only when they changed;
// - the utterance ends by itself (`final` with endpoint) once `endpointSilenceMs` of audio passed after its last
//   word with no next word started; 0 turns that off;
// - `finalize()` makes the heard words final (endpoint false); a word under way is cut at the audio received;
// - `end()` finalizes and closes; `abort()` drops everything; a word may carry `failAt` to raise an engine error.
// Not registered in production: a test adds it to the engine list with the words it wants (descriptor.ts), or
// registers it in an SttRegistry.
import { ListenedStream } from '../stream-listeners.js';
import type { FinalInfo, Recognizer, StreamingSession, StreamOptions, SttEngine, SttFeatures, Token, TranscribeOptions } from '../interface.js';
import { STT_SAMPLE_RATE } from '../interface.js';

export interface ScriptedWord {
  text: string;
  start_ms: number;
  end_ms: number;
  /** Default 0.9. */
  confidence?: number;
}

export interface Script {
  /** The words of the audio in time order (they must not overlap). */
  words: readonly ScriptedWord[];
  /** The session fails with this message once the audio reaches `atMs`. */
  failure?: { atMs: number; message: string };
}

export const SCRIPTED_FEATURES: SttFeatures = { timestamps: true, confidence: true, streaming: true, diarization: false, translation: false };

const BYTES_PER_MS = (STT_SAMPLE_RATE * 2) / 1000;
const DEFAULT_ENDPOINT_MS = 600;
const DEFAULT_PARTIAL_MS = 200;

function checkScript(script: Script): void {
  let lastEnd = -Infinity;
  for (const w of script.words) {
    if (!(w.end_ms > w.start_ms) || w.start_ms < lastEnd) throw new Error(`scripted word "${w.text}" overlaps or has no length`);
    lastEnd = w.end_ms;
  }
}

const token = (w: ScriptedWord, endMs = w.end_ms): Token => ({ text: w.text, start_ms: w.start_ms, end_ms: endMs, confidence: w.confidence ?? 0.9 });

class ScriptedStream extends ListenedStream implements StreamingSession {
  private bytes = 0;
  /** Index of the first word not yet final. */
  private next = 0;
  private lastPartial = '';
  private lastPartialAtMs = 0;
  private ended = false;
  private readonly endpointMs: number;
  private readonly partialMs: number;

  constructor(
    private readonly script: Script,
    options: StreamOptions,
  ) {
    super();
    this.endpointMs = options.endpointSilenceMs ?? DEFAULT_ENDPOINT_MS;
    this.partialMs = options.partialIntervalMs ?? DEFAULT_PARTIAL_MS;
  }

  get audioMs(): number {
    return Math.floor(this.bytes / BYTES_PER_MS);
  }

  get closed(): boolean {
    return this.ended;
  }

  write(pcm: Uint8Array): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.bytes += pcm.byteLength;
    const now = this.audioMs;
    const failure = this.script.failure;
    if (failure && now >= failure.atMs) {
      this.ended = true;
      this.listeners.emit('error', new Error(failure.message));
      return Promise.resolve();
    }
    this.endpointIfDue(now);
    if (now - this.lastPartialAtMs >= this.partialMs) this.partial(now);
    return Promise.resolve();
  }

  finalize(): Promise<void> {
    if (!this.ended) this.emitFinal(this.audioMs, { endpoint: false }, true);
    return Promise.resolve();
  }

  async end(): Promise<void> {
    await this.finalize();
    this.ended = true;
  }

  abort(): void {
    this.ended = true;
  }

  /** Words of the open utterance heard by `now` (ended by then). */
  private heard(now: number): ScriptedWord[] {
    const out: ScriptedWord[] = [];
    for (let i = this.next; i < this.script.words.length && this.script.words[i]!.end_ms <= now; i++) out.push(this.script.words[i]!);
    return out;
  }

  private partial(now: number): void {
    this.lastPartialAtMs = now;
    const words = this.heard(now);
    const text = words.map((w) => `${w.text}@${w.start_ms}`).join(' ');
    if (!words.length || text === this.lastPartial) return;
    this.lastPartial = text;
    this.listeners.emit(
      'partial',
      words.map((w) => token(w)),
    );
  }

  private endpointIfDue(now: number): void {
    if (this.endpointMs <= 0) return;
    const words = this.heard(now);
    const last = words.at(-1);
    if (!last) return;
    const following = this.script.words[this.next + words.length];
    const startedAgain = following !== undefined && following.start_ms < now;
    if (!startedAgain && now - last.end_ms >= this.endpointMs) this.emitFinal(now, { endpoint: true }, false);
  }

  /** Make the heard words final; with `cut`, also the word under way, ended at the audio received. */
  private emitFinal(now: number, info: FinalInfo, cut: boolean): void {
    const tokens = this.heard(now).map((w) => token(w));
    this.next += tokens.length;
    const underWay = this.script.words[this.next];
    if (cut && underWay && underWay.start_ms < now) {
      tokens.push(token(underWay, now));
      this.next += 1;
    }
    this.lastPartial = '';
    if (tokens.length) this.listeners.emit('final', tokens, info);
  }
}

class ScriptedRecognizer implements Recognizer {
  readonly engineId = 'scripted';

  constructor(
    readonly engineModel: string,
    private readonly script: Script,
  ) {}

  async transcribe(pcm: AsyncIterable<Uint8Array>, options?: TranscribeOptions): Promise<Token[]> {
    let bytes = 0;
    for await (const chunk of pcm) {
      options?.signal?.throwIfAborted();
      bytes += chunk.byteLength;
    }
    const tokens = this.script.words.filter((w) => w.end_ms <= bytes / BYTES_PER_MS).map((w) => token(w));
    if (tokens.length) options?.onTokens?.(tokens);
    return tokens;
  }

  stream(options: StreamOptions & { signal?: AbortSignal } = {}): Promise<StreamingSession> {
    options.signal?.throwIfAborted();
    return Promise.resolve(new ScriptedStream(this.script, options));
  }
}

/** An engine whose every model plays `script`; `languages` are the ones it claims. */
export function scriptedEngine(script: Script, languages: readonly string[] = ['en']): SttEngine {
  checkScript(script);
  const loaded = new Map<string, ScriptedRecognizer>();
  return {
    id: 'scripted',
    languages,
    features: SCRIPTED_FEATURES,
    load(engineModel: string): Promise<Recognizer> {
      let r = loaded.get(engineModel);
      if (!r) loaded.set(engineModel, (r = new ScriptedRecognizer(engineModel, script)));
      return Promise.resolve(r);
    },
    close(): Promise<void> {
      loaded.clear();
      return Promise.resolve();
    },
  };
}
