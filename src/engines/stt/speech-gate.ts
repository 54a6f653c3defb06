// Live (streaming) decoding's voice activity gate: Silero VAD (or its energy fallback, src/audio/vad.ts) decides which
// audio a streaming decoder hears and where utterances end.
//
// - Between utterances nothing is decoded. Most of a live stream is not speech (the listener's turn, pauses, the
//   room), and a decoder costs about as much on a microphone's noise floor as on speech; skipping it is what lets a
//   core carry many streams. The gate keeps the last `preRollMs` and waits for a speech frame.
// - A speech frame opens an utterance: the pre-roll (never audio the decoder already had) goes to the decoder, and
//   from then on every piece as it arrives, before the VAD has judged it, so partial results are not delayed.
// - `endpointMs` of non-speech after the last speech frame ends the utterance ('pause', an endpoint); 0 disables
//   endpoints. The decoder hears only the first `tailMs` of that pause (enough to end the last word); the rest is held
//   back ('hold'), and handed out after all if speech resumes before the endpoint (an utterance's audio stays
//   contiguous).
//   While speech goes on, an utterance is cut every `maxUtteranceMs` ('max_length') and the next starts at the cut.
// - With `cutAtPause`, an utterance older than its `afterMs` ends at the first pause of `pauseMs` ('cut'): a caller
//   that must make words final within a bound gets them cut between words, not inside one. Whether that pause was an
//   endpoint is known later ('after_cut'): speech resumed before `endpointMs` (no) or did not (yes). Utterances that
//   open within the first `fromDecodedMs` of audio handed out are not cut (a second pass decodes them whole).
// - finalize() closes the open utterance by the caller's decision; the next speech frame opens a new one.
// - Times are exact: audio events carry the absolute index of their first sample, and an utterance's end is the end
//   of the audio handed out for it.
import { VAD_FRAME_SAMPLES, type VadFrame, type VadStream } from '../../audio/vad.js';
import { S16leReader } from '../../audio/s16le.js';
import { SampleQueue } from './segmenter.js';

const SAMPLES_PER_MS = 16;
/** Speech probability of a frame that counts as voiced for pauses (the VAD's own threshold for the onset of speech). */
const CONFIDENT_SPEECH = 0.5;

export type GateEvent =
  /** Decode these samples; the first one is sample `startSample` of the stream. Contiguous within an utterance. */
  | { type: 'audio'; startSample: number; samples: Int16Array }
  /** The open utterance ends at `sample` (the end of the audio handed out for it). */
  | { type: 'end'; sample: number; reason: 'pause' | 'max_length' | 'cut' }
  /**
   * A pause began holding audio back: unless speech resumes (more audio follows), the utterance will end at `sample`
   * with the endpoint. Lets the caller start work on the utterance before the endpoint is decided.
   */
  | { type: 'hold'; sample: number }
  /** The pause after a 'cut' ended: with speech before the endpoint delay (false) or at the endpoint (true). */
  | { type: 'after_cut'; endpoint: boolean };

export interface SpeechGateOptions {
  /** Non-speech after the last speech frame that ends an utterance, ms (default 600); 0: no endpoints. */
  endpointMs?: number;
  /** Longest utterance while speech goes on, ms (default 30 000). */
  maxUtteranceMs?: number;
  /** Audio before the first speech frame handed to the decoder with it, ms (default 300). */
  preRollMs?: number;
  /** Non-speech after the last speech frame handed to the decoder before the endpoint is decided, ms (default 300). */
  tailMs?: number;
  /**
   * End an utterance at a shorter pause once it is older than `afterMs` (its audio handed out, ms), if it opened after
   * `fromDecodedMs` of audio was handed out (default 0); default never.
   */
  cutAtPause?: { afterMs: number; pauseMs: number; fromDecodedMs?: number };
}

export interface SpeechGateStats {
  /** Samples received. */
  receivedSamples: number;
  /** Samples handed to the decoder. */
  decodedSamples: number;
  /** Utterances opened. */
  utterances: number;
}

export class SpeechGate {
  private readonly endpointSamples: number;
  private readonly maxUtteranceSamples: number;
  private readonly preRollSamples: number;
  private readonly tailSamples: number;
  private readonly cutAfterSamples: number;
  private readonly cutPauseSamples: number;
  private readonly cutFromDecoded: number;
  /** The open utterance may be cut at a pause (it opened after `cutFromDecoded`). */
  private cuttable = false;
  /**
   * Audio not handed out, between utterances or held in a pause: always the latest samples, up to `received` (it is
   * emptied whenever audio starts going out as it arrives).
   */
  private readonly pending = new SampleQueue();
  private received = 0;
  /** End of the audio handed out so far (absolute sample index). */
  private forwarded = 0;
  private open = false;
  /** The pause after a cut is not decided yet (endpoint or not). */
  private afterCut = false;
  /** In an utterance, past `tailMs` of a pause: audio is held back until speech resumes or the endpoint. */
  private holding = false;
  private utteranceStart = 0;
  private lastSpeechEnd = 0;
  private readonly bytes = new S16leReader();
  private decoded = 0;
  private utterances = 0;

  constructor(
    private readonly vad: VadStream,
    options: SpeechGateOptions = {},
  ) {
    const endpointMs = options.endpointMs ?? 600;
    this.endpointSamples = endpointMs > 0 ? Math.max(1, Math.round(endpointMs * SAMPLES_PER_MS)) : Infinity;
    this.maxUtteranceSamples = Math.max(VAD_FRAME_SAMPLES, Math.round((options.maxUtteranceMs ?? 30_000) * SAMPLES_PER_MS));
    this.preRollSamples = Math.max(0, Math.round((options.preRollMs ?? 300) * SAMPLES_PER_MS));
    // Without endpoints a pause never ends the utterance, so held audio would have to be decoded anyway.
    this.tailSamples = endpointMs > 0 ? Math.max(VAD_FRAME_SAMPLES, Math.round((options.tailMs ?? 300) * SAMPLES_PER_MS)) : Infinity;
    const cut = options.cutAtPause;
    this.cutAfterSamples = cut ? Math.round(cut.afterMs * SAMPLES_PER_MS) : Infinity;
    this.cutPauseSamples = cut ? Math.max(VAD_FRAME_SAMPLES, Math.round(cut.pauseMs * SAMPLES_PER_MS)) : Infinity;
    this.cutFromDecoded = Math.round((cut?.fromDecodedMs ?? 0) * SAMPLES_PER_MS);
  }

  /** Samples received so far. */
  get samples(): number {
    return this.received;
  }

  get stats(): SpeechGateStats {
    return { receivedSamples: this.received, decodedSamples: this.decoded, utterances: this.utterances };
  }

  /**
   * Feed s16le PCM (any length; an odd byte is carried over). Calls must not overlap: await each.
   *
   * The audio is taken in pieces that end on the VAD's frame grid, each handed out (inside an utterance) before its
   * frame is judged: decisions then fall on the same samples whatever the chunking, and the audio after a frame that
   * ends an utterance is never handed out with it.
   */
  async push(bytes: Uint8Array): Promise<GateEvent[]> {
    const events: GateEvent[] = [];
    const samples = this.bytes.read(bytes);
    for (let off = 0; off < samples.length;) {
      const take = Math.min(samples.length - off, VAD_FRAME_SAMPLES - (this.received % VAD_FRAME_SAMPLES));
      const piece = samples.subarray(off, off + take);
      if (this.open && !this.holding)
        this.handOut(events, this.received, piece); // a view of this call's own copy
      else this.pending.push(piece);
      this.received += take;
      off += take;
      this.decide(await this.vad.push(new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength)), events);
    }
    return coalesce(events);
  }

  /** End of audio: the VAD's last, zero-padded frame is judged (it may still open an utterance). */
  async flush(): Promise<GateEvent[]> {
    const events: GateEvent[] = [];
    this.decide(await this.vad.flush(), events);
    return events;
  }

  /** The caller closed the open utterance (finalize); the next speech frame opens another. */
  finalize(): void {
    this.afterCut = false; // the caller's close decides it: not an endpoint
    if (!this.open) return;
    this.open = false;
    this.holding = false; // audio held in a pause stays pending: the next utterance's pre-roll may use it
  }

  private decide(frames: VadFrame[], events: GateEvent[]): void {
    for (const frame of frames) {
      const frameEnd = frame.start + VAD_FRAME_SAMPLES;
      if (!this.open) {
        // The pause after a cut is judged as one inside an utterance: only confident speech resumes before the endpoint.
        const resumes = this.afterCut ? frame.probability >= CONFIDENT_SPEECH : frame.speech;
        if (this.afterCut && (resumes || frameEnd - this.lastSpeechEnd >= this.endpointSamples)) {
          this.afterCut = false;
          events.push({ type: 'after_cut', endpoint: !resumes });
        }
        if (resumes) this.openUtterance(frame, events);
        else this.trimPending(frameEnd - this.preRollSamples);
        continue;
      }
      // A pause counts from the last confidently voiced frame, not from where the VAD's hysteresis lets go of speech
      // (a frame or two later, as a word fades): the endpoint then comes that much sooner after the speaker stops.
      if (frame.probability >= CONFIDENT_SPEECH) {
        this.lastSpeechEnd = frameEnd;
        if (this.holding) this.release(events);
      } else if (frame.speech) {
        // Fading out (or murmur): neither speech to resume with nor yet a pause.
      } else if (frameEnd - this.lastSpeechEnd >= this.endpointSamples) {
        events.push({ type: 'end', sample: this.forwarded, reason: 'pause' });
        this.open = false;
        this.holding = false; // what was held stays pending, as audio between utterances
        continue;
      } else if (this.cuttable && frameEnd - this.lastSpeechEnd >= this.cutPauseSamples && this.forwarded - this.utteranceStart >= this.cutAfterSamples) {
        events.push({ type: 'end', sample: this.forwarded, reason: 'cut' });
        this.open = false;
        this.holding = false;
        this.afterCut = true;
        continue;
      } else if (!this.holding && frameEnd - this.lastSpeechEnd >= this.tailSamples) {
        this.holding = true; // pieces are handed out before their frame is judged: nothing is pending yet
        events.push({ type: 'hold', sample: this.forwarded });
      }
      if (this.forwarded - this.utteranceStart >= this.maxUtteranceSamples) {
        events.push({ type: 'end', sample: this.forwarded, reason: 'max_length' });
        this.utteranceStart = this.forwarded;
      }
    }
  }

  private openUtterance(frame: VadFrame, events: GateEvent[]): void {
    this.trimPending(frame.start - this.preRollSamples);
    const from = this.pendingStart;
    const audio = this.pending.copy(0, this.pending.length);
    this.pending.drop(audio.length);
    this.open = true;
    this.cuttable = this.decoded >= this.cutFromDecoded;
    this.utterances++;
    this.utteranceStart = from;
    this.lastSpeechEnd = frame.start + VAD_FRAME_SAMPLES;
    if (audio.length > 0) this.handOut(events, from, audio);
  }

  /** Speech resumed within the endpoint delay: hand out the held pause, so the utterance's audio stays contiguous. */
  private release(events: GateEvent[]): void {
    this.holding = false;
    const from = this.pendingStart;
    const audio = this.pending.copy(0, this.pending.length);
    this.pending.drop(audio.length);
    if (audio.length > 0) this.handOut(events, from, audio);
  }

  /** Absolute index of the first pending sample (`received` when nothing is pending). */
  private get pendingStart(): number {
    return this.received - this.pending.length;
  }

  /** Drop pending audio before `sample` (never audio after it, nor audio already handed out). */
  private trimPending(sample: number): void {
    const from = Math.max(this.pendingStart, this.forwarded, sample);
    const drop = Math.min(this.pending.length, from - this.pendingStart);
    if (drop > 0) this.pending.drop(drop);
  }

  private handOut(events: GateEvent[], startSample: number, samples: Int16Array): void {
    events.push({ type: 'audio', startSample, samples });
    this.forwarded = startSample + samples.length;
    this.decoded += samples.length;
  }
}

/** Adjacent audio events of one utterance as one (a large write would otherwise become one event per VAD frame). */
function coalesce(events: GateEvent[]): GateEvent[] {
  const out: GateEvent[] = [];
  let run: Extract<GateEvent, { type: 'audio' }>[] = [];
  const flushRun = (): void => {
    if (run.length === 1) out.push(run[0]!);
    else if (run.length > 1) {
      const samples = new Int16Array(run.reduce((n, e) => n + e.samples.length, 0));
      let at = 0;
      for (const e of run) {
        samples.set(e.samples, at);
        at += e.samples.length;
      }
      out.push({ type: 'audio', startSample: run[0]!.startSample, samples });
    }
    run = [];
  };
  for (const e of events) {
    const last = run.at(-1);
    if (e.type === 'audio' && (!last || last.startSample + last.samples.length === e.startSample)) run.push(e);
    else {
      flushRun();
      if (e.type === 'audio') run.push(e);
      else out.push(e);
    }
  }
  flushRun();
  return out;
}
