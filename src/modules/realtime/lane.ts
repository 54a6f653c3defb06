// The recognition of one channel of a live session's audio, or of their mix: its engine stream, diarizer, text
// formatting, language identification, translation and token tracker. The engine's partial and final words go
// through the word controls and formatting, wait for their utterance's language where it is identified, are
// translated, and land in the tracker, whose updates the session (session.ts) merges across its lanes and sends.
import type { DiarizationStream } from '../../engines/diarization/interface.js';
import type { FinalInfo, StreamingSession, Token } from '../../engines/stt/interface.js';
import { TranslationError } from '../../engines/translate/interface.js';
import { TranscriptFormatter } from '../../text/format.js';
import { applyWordControls, hasWordControls } from '../../text/word-controls.js';
import { ApiError } from '../../wire/api-error.js';
import type { ResolvedCatalogModel } from '../models/catalog.js';
import type { EnrolledSpeaker } from '../speakers/service.js';
import type { LanguageOptions } from '../translation/tokens.js';
import { RealtimeTranslationStep } from '../translation/realtime-step.js';
import type { IntakeLane } from './audio-intake.js';
import type { RealtimeConfig } from './config.js';
import { openRecognizerStream } from './recognizer-stream.js';
import type { SessionHost } from './session-host.js';
import { liveDiarization } from './speaker-names.js';
import { TokenTracker } from './tokens.js';
import { UtteranceLanguage } from './utterance-language.js';

/** What every lane of a session is opened with (the session's model, languages and enrolled speakers). */
export interface LaneSpec {
  resolved: ResolvedCatalogModel;
  language: LanguageOptions;
  enrolled: EnrolledSpeaker[];
}

/** What a lane sees of its session. */
export interface LaneSession {
  readonly closed: boolean;
  /** The end of the stream is being processed: the finals that come now close the transcript. */
  readonly endingStream: boolean;
  readonly config: RealtimeConfig;
  readonly requestId: string;
  readonly signal: AbortSignal;
  /** The trackers have news: send the merged update. */
  flush(): void;
  fail(err: unknown): void;
  /** The engine is still working on the client's audio: not idle. */
  touch(): void;
}

export class Lane implements IntakeLane {
  readonly tracker: TokenTracker;
  readonly translation: RealtimeTranslationStep;
  readonly diarization: DiarizationStream | undefined;
  /** Speaker of a span of audio, with diarization (for tokens and the translations that follow them). */
  private readonly speakerOf: ((startMs: number, endMs: number) => string) | undefined;
  /** Written form of final tokens (capitals, punctuation, digits), carried across the lane's utterances. */
  private readonly formatter: TranscriptFormatter | undefined;
  /** enable_language_identification with a language-id model: each closed utterance's language. */
  private readonly utteranceLanguage: UtteranceLanguage | undefined;
  /** Final utterances waiting for their language go out in order; finalize and end of stream wait for them. */
  finals: Promise<void> = Promise.resolve();
  readonly audio: ((pcm: Buffer) => void) | undefined;

  /**
   * The recognition of `channel` (undefined: of the mix): its engine stream first (a session that finds every
   * recognizer busy is refused before anything else is made), then the rest. Undefined when the session closed meanwhile.
   */
  static async open(
    host: Pick<SessionHost<unknown>, 'deps' | 'opts'>,
    spec: LaneSpec,
    session: LaneSession,
    channel: number | undefined,
  ): Promise<Lane | undefined> {
    const engine = await openRecognizerStream(spec.resolved, spec.language.language, session.config, host.opts, session.signal);
    if (session.closed) {
      engine.abort();
      return undefined;
    }
    return new Lane(host, spec, session, channel, engine);
  }

  private constructor(
    host: Pick<SessionHost<unknown>, 'deps' | 'opts'>,
    spec: LaneSpec,
    private readonly session: LaneSession,
    readonly channel: number | undefined,
    readonly engine: StreamingSession,
  ) {
    const { deps, opts } = host;
    const { config } = session;
    const { diarizer, speakerMatch } = opts;
    const diarization = config.enableSpeakerDiarization && diarizer ? liveDiarization(diarizer, spec.enrolled, speakerMatch, config.speakerCount) : undefined;
    this.diarization = diarization?.stream;
    this.speakerOf = diarization?.speakerOf;
    this.translation = new RealtimeTranslationStep(spec.language, deps.models.translation, session.signal, {
      emit: (tokens) => {
        this.tracker.translated(tokens);
        session.flush();
      },
      fail: (err) =>
        session.fail(err instanceof TranslationError ? new ApiError('internal_error', 'Internal error: the translation engine failed.', { cause: err }) : err),
    });
    const lid = config.enableLanguageIdentification ? opts.languageId : undefined;
    this.utteranceLanguage = lid
      ? new UtteranceLanguage({
          lid,
          fallback: spec.language.language,
          waitMs: opts.languageIdWaitMs,
          signal: session.signal,
          log: { logger: deps.log, requestId: session.requestId },
        })
      : undefined;
    const identify = this.utteranceLanguage;
    this.audio = identify ? (pcm) => identify.push(pcm) : undefined;
    this.tracker = new TokenTracker(config.enableNonFinalTokens, this.translation.labels, this.speakerOf, config.maxNonFinalTokensDurationMs, channel);
    this.formatter = (config.enableTextFormatting ?? opts.formatText) ? new TranscriptFormatter({ language: spec.resolved.languages[0] }) : undefined;
    engine.on('partial', (t) => this.onPartial(t));
    engine.on('final', (t, info) => this.onFinal(t, info));
    engine.on('error', (err) => session.fail(new ApiError('internal_error', 'Speech recognition failed.', { cause: err })));
  }

  nonFinalStartMs(): number | undefined {
    return this.tracker.nonFinalStartMs;
  }

  async finalizedUpTo(audioMs: number): Promise<void> {
    await this.finals;
    this.tracker.finalizedUpTo(audioMs);
    this.session.flush();
  }

  /** The session asked for redaction or the profanity filter. */
  private get controlled(): boolean {
    return hasWordControls(this.session.config.wordControls);
  }

  private onPartial(tokens: Token[]): void {
    if (this.session.closed) return;
    this.tracker.partial(this.controlled ? applyWordControls(tokens, this.session.config.wordControls, { partial: true }) : tokens);
    this.session.flush();
  }

  private onFinal(words: Token[], info: FinalInfo): void {
    const { session } = this;
    if (session.closed) return;
    session.touch(); // the engine was still working on this client's audio
    // Non-final tokens stay raw words; final ones are written out (a formatted token spans the words it replaced).
    const formatted = this.formatter ? this.formatter.format(words, { endsUtterance: info.endpoint, endsStream: session.endingStream }) : words;
    // Redaction and the profanity filter before the words go anywhere (the client, translation, metering counts).
    const tokens = this.controlled ? applyWordControls(formatted, session.config.wordControls) : formatted;
    // Final tokens the engine closed at a pause are an endpoint, sent once the utterance's translation (if any) is out.
    // A pause just before the end of the stream is one too, even when its final tokens arrive after the end frame: the
    // engine's own close at the end of audio (or at finalize) says endpoint: false.
    const endpoint = session.config.enableEndpointDetection && info.endpoint;
    const identify = this.utteranceLanguage;
    if (!identify) return this.emitFinal(tokens, endpoint);
    // The utterance's audio is cut out now; its finals wait (at most languageIdWaitMs) for its language, in order.
    const language = words.length ? identify.identify(words[0]!.start_ms, words.at(-1)!.end_ms) : undefined;
    const openFrom = words.at(-1)?.end_ms;
    this.finals = this.finals.then(async () => {
      const heard = await language;
      if (!session.closed) this.emitFinal(tokens, endpoint, heard, openFrom);
    });
  }

  /** Final tokens of one utterance (labelled with `language` when it was identified), then its translation and `<end>`. */
  private emitFinal(tokens: Token[], endpoint: boolean, language?: string, openFrom?: number): void {
    this.tracker.final(tokens, language === undefined ? undefined : this.translation.labelsFor(language), openFrom);
    const speakerOf = this.speakerOf;
    this.translation.final(
      speakerOf ? tokens.map((t) => ({ ...t, speaker: speakerOf(t.start_ms, t.end_ms) })) : tokens,
      endpoint
        ? () => {
            this.tracker.mark('endpoint');
            this.session.flush();
          }
        : undefined,
      language,
    );
    this.session.flush();
  }
}
