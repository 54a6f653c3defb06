// One live session on a streaming decoder (worker.ts runs it on the decoder's worker thread): the audio the speech
// gate hands out (speech-gate.ts, on the main thread) is decoded as it comes. An utterance opens with its first audio,
// gives partial hypotheses while audio arrives, and closes with final tokens at the gate's endpoint, at finalize() or
// at end(); in utterances without a second pass, words far enough behind the audio turn final before that (settle).
import { peakDb, SILENCE_PEAK_DB } from '../utterances.js';
import type { NativeDecoder } from './addon.js';
import { settledCount } from '../settled.js';
import type { FromWorker, StreamSettings, UtteranceEnd } from './messages.js';
import { transformFor, type NarrowbandAdaptation } from './narrowband.js';
import { concatSamples, fromStart, primerFor } from './primer.js';
import { segmentsToTokens } from './tokens.js';

const SAMPLES_PER_MS = 16;

/**
 * Audio of an utterance its band (telephone or wideband, narrowband.ts) is decided on: the gate's 300 ms pre-roll and
 * half a second of speech. On the tuning half's 293 recordings, 300 ms of speech already decides as the whole
 * recording does in 292; an utterance shorter than this is decided on all of it when it closes.
 */
export const BAND_DECISION_MS = 800;

export class StreamSession {
  private readonly partialSamples: number;
  private readonly settle: StreamSettings['settle'];
  /** Audio handed to the session so far, samples (as the second pass counts it: second-pass.ts). */
  private heard = 0;
  /** The open utterance's words turn final as they settle (it opened after settle.afterMs). */
  private settling = false;
  /** End of the open utterance's last settled word, ms (-1: none); its later words only are still open. */
  private settledEndMs = -1;
  private uttStart = 0;
  private inUtt = false;
  private peak = -100;
  private sinceHypothesis = 0;
  private lastPartial = '';
  /** End of the audio decoded so far (absolute sample index). */
  private position = 0;
  /** Noise floor decoded before the open utterance (primer.ts), in samples. */
  private primed = 0;
  /** Utterances closed so far. */
  private utterances = 0;
  /** The MLLR transform in use; each utterance starts with its predecessor's. */
  private transform: string | undefined;
  /** Audio of the open utterance while its band is undecided (undefined once decided, or without adaptation). */
  private undecided: Int16Array[] | undefined;
  private undecidedLength = 0;

  constructor(
    readonly id: number,
    private readonly decoder: NativeDecoder,
    settings: StreamSettings,
    private readonly narrowband: NarrowbandAdaptation | undefined,
    private readonly send: (msg: FromWorker) => void,
  ) {
    this.partialSamples = Math.max(1, settings.partialIntervalMs) * SAMPLES_PER_MS;
    this.settle = settings.settle;
    // Same start state for every session, whatever earlier sessions on this pooled decoder heard.
    decoder.startStream();
    decoder.resetCmn();
    if (narrowband) this.useTransform(narrowband.identity);
  }

  audio(startSample: number, samples: Int16Array): void {
    if (!this.inUtt) this.open(startSample, samples);
    this.heard += samples.length;
    this.decoder.processRaw(samples);
    this.position = startSample + samples.length;
    this.peak = Math.max(this.peak, peakDb(samples));
    this.sinceHypothesis += samples.length;
    if (this.undecided) {
      this.undecided.push(samples);
      this.undecidedLength += samples.length;
      if (this.undecidedLength >= BAND_DECISION_MS * SAMPLES_PER_MS) this.decideBand();
    }
    // Until the utterance's first words show, look at every piece: the gate opens an utterance at the onset of
    // speech, and the first partial result is the one whose latency people notice.
    if (this.sinceHypothesis >= this.partialSamples || this.lastPartial === '') {
      this.sinceHypothesis = 0;
      this.partial();
    }
  }

  /** The gate ended the utterance at `sample` (messages.ts says why). */
  endpoint(sample: number, reason: UtteranceEnd): void {
    this.position = Math.max(this.position, sample);
    this.close(reason);
  }

  finalize(): void {
    this.close();
  }

  end(): void {
    this.close();
  }

  cancel(): void {
    if (this.inUtt) this.decoder.endUtt();
    this.inUtt = false;
    this.undecided = undefined;
  }

  private open(at: number, first: Int16Array): void {
    this.decoder.startUtt();
    const primer = primerFor(at, first);
    if (primer.length > 0) this.decoder.processRaw(primer);
    this.primed = primer.length;
    this.inUtt = true;
    this.uttStart = at;
    this.peak = -100;
    this.sinceHypothesis = 0;
    this.lastPartial = '';
    this.undecided = this.narrowband ? [] : undefined;
    this.undecidedLength = 0;
    this.settling = this.settle !== undefined && this.heard >= this.settle.afterMs * SAMPLES_PER_MS;
    this.settledEndMs = -1;
  }

  /**
   * Telephone or wideband, from the open utterance's audio so far: when that calls for the other transform, the
   * utterance is decoded again from its start with it (its first utterance from the session's start state).
   */
  private decideBand(): void {
    const parts = this.undecided;
    this.undecided = undefined;
    if (!parts || !this.narrowband || this.peak < SILENCE_PEAK_DB) return;
    const audio = concatSamples(...parts);
    const wanted = transformFor(audio, this.narrowband);
    if (wanted === this.transform) return;
    this.decoder.endUtt();
    this.useTransform(wanted);
    if (this.utterances === 0) {
      this.decoder.startStream();
      this.decoder.resetCmn();
    }
    this.decoder.startUtt();
    this.decoder.processRaw(concatSamples(primerFor(this.uttStart, audio), audio));
    this.lastPartial = '';
  }

  private useTransform(path: string): void {
    this.decoder.setMllr(path);
    this.transform = path;
  }

  /**
   * End the open utterance and send its final tokens, none if it was silence (peak below SILENCE_PEAK_DB): then only
   * an endpoint is sent, or after a cut, whose pause may turn out to be one.
   * `reason`: why the gate ended it (undefined: finalize() or end()); only 'pause' is an endpoint.
   */
  private close(reason?: UtteranceEnd): void {
    if (!this.inUtt) return;
    if (this.undecided) this.decideBand();
    this.inUtt = false;
    this.utterances++;
    this.decoder.endUtt();
    const tokens = this.peak < SILENCE_PEAK_DB ? [] : this.openTokens();
    const endpoint = reason === 'pause';
    // An endpoint without words still ends the words before it (those of an utterance cut at a shorter pause).
    if (tokens.length > 0 || endpoint || reason === 'cut') {
      this.send({ type: 'final', session: this.id, tokens, endpoint, startSample: this.uttStart, endSample: this.position });
    }
  }

  /**
   * The open utterance's words not final yet, when they changed; first, when it is settling (and its band decided, so
   * it is not decoded again), those of them that end settle.behindMs behind the audio, as final.
   */
  private partial(): void {
    if (this.peak < SILENCE_PEAK_DB) return;
    const hyp = this.decoder.hypothesis();
    if (!hyp) return;
    const changed = hyp.text !== this.lastPartial;
    const settling = this.settling && !this.undecided;
    if (!changed && !settling) return;
    this.lastPartial = hyp.text;
    const open = this.openTokens();
    const settled = settling ? settledCount(open, this.position / SAMPLES_PER_MS - this.settle!.behindMs) : 0;
    if (settled > 0) {
      this.send({ type: 'settled', session: this.id, tokens: open.slice(0, settled) });
      this.settledEndMs = open[settled - 1]!.end_ms;
    }
    if ((changed || settled > 0) && open.length > settled) this.send({ type: 'partial', session: this.id, tokens: open.slice(settled) });
  }

  /**
   * The open utterance's words after those already settled: centred after the last settled word's end, and starting
   * no earlier (later hypotheses may move a boundary by a frame or two).
   */
  private openTokens(): ReturnType<typeof segmentsToTokens> {
    const tokens = this.tokens();
    const from = this.settledEndMs;
    if (from < 0) return tokens;
    return tokens.filter((t) => (t.start_ms + t.end_ms) / 2 > from).map((t) => (t.start_ms < from ? { ...t, start_ms: from } : t));
  }

  /** The open utterance's words so far, timed on the stream (without the primer). */
  private tokens(): ReturnType<typeof segmentsToTokens> {
    const start = this.uttStart / SAMPLES_PER_MS;
    const tokens = segmentsToTokens(this.decoder.segments(), (this.uttStart - this.primed) / SAMPLES_PER_MS, this.position / SAMPLES_PER_MS);
    return this.primed > 0 ? fromStart(tokens, start) : tokens;
  }
}
