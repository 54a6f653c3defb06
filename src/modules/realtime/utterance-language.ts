// Spoken language identification of a live session (enable_language_identification with a language-id model
// installed): the audio of the utterances not yet closed is kept, and each utterance the engine closes is identified
// from its own audio, off the event loop at live priority (engines/language-id). Memory is bounded: audio before the
// last identified utterance is dropped, and never more than Whisper's window (MAX_LID_SAMPLES) plus a margin is kept.
//
// Rule for a slow or failing model: an utterance waits at most `waitMs` for its language; past that, or when the model
// fails (logged), it keeps the speech model's language and the session goes on.
import type { Logger } from 'pino';
import { PcmHistory } from '../../audio/pcm-history.js';
import { S16leReader } from '../../audio/s16le.js';
import type { LanguageIdentifier } from '../../engines/language-id/engine.js';
import { MAX_LID_SAMPLES } from '../../engines/language-id/identify.js';
import { STT_SAMPLE_RATE } from '../../engines/stt/interface.js';

const SAMPLES_PER_MS = STT_SAMPLE_RATE / 1000;
/** Audio kept either side of an utterance's words, as the async path (transcriptions/language-labels.ts). */
const MARGIN_MS = 100;
/** Most audio held: Whisper's window plus the margins. */
const MAX_KEPT_SAMPLES = MAX_LID_SAMPLES + 2 * MARGIN_MS * SAMPLES_PER_MS;

export interface UtteranceLanguageOptions {
  lid: LanguageIdentifier;
  /** Language of the speech model: the label when the model cannot tell in time. */
  fallback: string;
  waitMs: number;
  signal: AbortSignal;
  log: { logger: Logger; requestId: string };
}

export class UtteranceLanguage {
  /** Engine audio of the utterances not identified yet (at most MAX_KEPT_SAMPLES). */
  private readonly history = new PcmHistory();
  private readonly reader = new S16leReader();

  constructor(private readonly opts: UtteranceLanguageOptions) {}

  /** Engine audio (s16le mono), in the order the engine takes it. */
  push(pcm: Buffer): void {
    // A copy: the source may reuse its buffer.
    this.history.push(this.reader.read(pcm));
    this.history.drop(this.history.end - MAX_KEPT_SAMPLES);
  }

  /** The language of the utterance in [startMs, endMs) of audio; audio before its end is no longer kept. */
  async identify(startMs: number, endMs: number): Promise<string> {
    const { history } = this;
    const from = Math.max(history.start, Math.floor((startMs - MARGIN_MS) * SAMPLES_PER_MS));
    const to = Math.min(history.end, Math.ceil((endMs + MARGIN_MS) * SAMPLES_PER_MS), from + MAX_LID_SAMPLES);
    const samples = history.slice(from, to);
    history.drop(Math.floor((endMs - MARGIN_MS) * SAMPLES_PER_MS));
    const { lid, waitMs, signal, log, fallback } = this.opts;
    if (!samples.length || waitMs === 0) return fallback;
    const give = AbortSignal.any([signal, AbortSignal.timeout(waitMs)]);
    const run = lid.identify(samples, { signal: give, live: true });
    // A model failure is logged even when it comes after the wait (a first load that failed in its child process).
    run.catch((err: unknown) => {
      if (!(give.aborted && err === give.reason))
        log.logger.error({ request_id: log.requestId, model: lid.modelId, err }, 'real-time language identification failed');
    });
    try {
      const language = await new Promise<string | undefined>((resolve, reject) => {
        const onAbort = () => reject(give.reason as Error);
        give.addEventListener('abort', onAbort, { once: true });
        run.then(resolve, reject).finally(() => give.removeEventListener('abort', onAbort));
      });
      return language ?? fallback;
    } catch {
      if (give.aborted && !signal.aborted)
        log.logger.info({ request_id: log.requestId, wait_ms: waitMs }, 'real-time language identification too slow: the utterance keeps the model language');
      return fallback;
    }
  }
}
