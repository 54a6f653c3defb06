// Spoken language identification of a live session (enable_language_identification with a language-id model
// installed): the audio of the utterances not yet closed is kept, and each utterance the engine closes is identified
// from its own audio, off the event loop at live priority (engines/language-id). Memory is bounded: audio before the
// last identified utterance is dropped, and never more than Whisper's window (MAX_LID_SAMPLES) plus a margin is kept.
//
// Rule for a slow or failing model: an utterance waits at most `waitMs` for its language; past that, or when the model
// fails (logged), it keeps the speech model's language and the session goes on.
import type { Logger } from 'pino';
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
  /** Engine audio (s16le mono) in order; `keptFrom` is the sample index of the first kept one. */
  private chunks: Int16Array[] = [];
  private keptFrom = 0;
  private keptSamples = 0;

  constructor(private readonly opts: UtteranceLanguageOptions) {}

  /** Engine audio, in the order the engine takes it. */
  push(pcm: Buffer): void {
    // A copy: the chunk's bytes need not be aligned for an Int16Array view, and the source may reuse them.
    const samples = new Int16Array(pcm.length >> 1);
    Buffer.from(samples.buffer).set(pcm.subarray(0, samples.length * 2));
    this.chunks.push(samples);
    this.keptSamples += samples.length;
    this.dropBefore(this.keptFrom + this.keptSamples - MAX_KEPT_SAMPLES);
  }

  /** The language of the utterance in [startMs, endMs) of audio; audio before its end is no longer kept. */
  async identify(startMs: number, endMs: number): Promise<string> {
    const from = Math.max(this.keptFrom, Math.floor((startMs - MARGIN_MS) * SAMPLES_PER_MS));
    const to = Math.min(this.keptFrom + this.keptSamples, Math.ceil((endMs + MARGIN_MS) * SAMPLES_PER_MS), from + MAX_LID_SAMPLES);
    const samples = this.slice(from, to);
    this.dropBefore(Math.floor((endMs - MARGIN_MS) * SAMPLES_PER_MS));
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

  /** Samples [from, to) of the kept audio, copied. */
  private slice(from: number, to: number): Int16Array {
    const out = new Int16Array(Math.max(0, to - from));
    let at = this.keptFrom;
    for (const c of this.chunks) {
      const lo = Math.max(from, at);
      const hi = Math.min(to, at + c.length);
      if (hi > lo) out.set(c.subarray(lo - at, hi - at), lo - from);
      at += c.length;
      if (at >= to) break;
    }
    return out;
  }

  /** Forget whole chunks that end before sample `index`. */
  private dropBefore(index: number): void {
    while (this.chunks.length && this.keptFrom + this.chunks[0]!.length <= index) {
      const c = this.chunks.shift()!;
      this.keptFrom += c.length;
      this.keptSamples -= c.length;
    }
  }
}
