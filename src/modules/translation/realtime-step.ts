// Real-time translation post-step: each utterance the engine closes (endpoint, finalize, end of stream) is
// translated off the event loop and its translation tokens follow its originals. Translations are chained, so
// utterances come out in order; finalize and end of stream wait for `drained()` before `<fin>` / `finished`.
import type { TranslationRegistry } from '../../engines/translate/registry.js';
import {
  type LanguageOptions,
  meanConfidence,
  type OriginalLabels,
  originalLabels,
  targetOf,
  type TranslationToken,
  translationTokens,
  type Word,
} from './tokens.js';

export interface RealtimeTranslationIO {
  /** Translation tokens of one utterance, ready to send. */
  emit(tokens: TranslationToken[]): void;
  /** The engine failed: the session ends with an error. */
  fail(err: unknown): void;
}

export class RealtimeTranslationStep {
  private chain: Promise<void> = Promise.resolve();
  readonly labels: OriginalLabels;
  private readonly target: string | undefined;

  constructor(
    private readonly opts: LanguageOptions,
    private readonly registry: TranslationRegistry,
    private readonly signal: AbortSignal,
    private readonly io: RealtimeTranslationIO,
  ) {
    this.labels = originalLabels(opts);
    this.target = targetOf(opts);
    // Load the pair while the first utterance is being spoken.
    if (this.target) registry.prepare(opts.language, this.target);
  }

  /**
   * Final tokens of a closed utterance. `then` runs once the utterance is complete, its translation included (at
   * once when it is not translated): the caller's `<end>` goes there, since SDK utterance buffers end at `<end>`.
   */
  final(words: readonly Word[], then?: () => void, language?: string): void {
    const source = language ?? this.opts.language;
    const target = language === undefined ? this.target : targetOf({ ...this.opts, language });
    // Untranslated speech in a translated session (another identified language) keeps the utterances' order too.
    if (!target && (language === undefined || !this.opts.plan)) return then?.();
    if (!target || words.length === 0) {
      // Keep the order of earlier utterances whose translation is still running.
      if (then) this.chain = this.chain.then(() => (this.signal.aborted ? undefined : then()));
      return;
    }
    const text = words.map((w) => w.text).join(' ');
    const confidence = meanConfidence(words);
    this.chain = this.chain.then(async () => {
      if (this.signal.aborted) return;
      try {
        const [out] = await this.registry.translate(source, target, [text], { signal: this.signal });
        if (this.signal.aborted) return;
        this.io.emit(translationTokens(out ?? '', source, target, confidence, words[0]!.speaker));
        then?.();
      } catch (err) {
        if (!this.signal.aborted) this.io.fail(err);
      }
    });
  }

  /** Labels of original tokens heard in `language` (identified per utterance). */
  labelsFor(language: string): OriginalLabels {
    return originalLabels({ ...this.opts, language });
  }

  /** Resolves once every utterance so far has been translated and emitted (or the session ended). */
  drained(): Promise<void> {
    return this.chain;
  }
}
