// Cutting a long PCM stream into speech segments for batch decoding, at pauses found by a voice activity detector
// (Silero VAD, or its energy fallback: src/audio/vad.ts).
//
// - A segment starts `padMs` before the first speech frame and ends `padMs` after the last one. Audio between
//   segments that holds no speech is never handed to the decoder: it costs nothing and cannot produce invented words.
// - A pause of at least `skipPauseMs` always ends a segment (the pause itself is skipped).
// - Shorter pauses stay inside a segment until it would grow past `maxSegmentMs`; then it is cut in the middle of the
//   longest pause of that window that leaves at least `minSegmentMs` before it (or, in continuous speech, at the
//   least speech-like moment of the window's second half). The next segment starts right there, or `padMs` before
//   the next speech frame: no speech is lost.
// - Segments with less than `minSpeechMs` of speech (clicks, breaths) are dropped.
// - Times are exact: a segment carries the absolute index of its first sample, and all cuts fall on the VAD's
//   512-sample frame grid, which starts at the stream's first sample.
// - Memory is flat: the segmenter holds at most one window (maxSegmentMs) plus the last piece pushed.
import { S16leReader } from '../../audio/s16le.js';
import { VAD_FRAME_SAMPLES, type VadFrame, type VadStream } from '../../audio/vad.js';

export interface SpeechSegment {
  /** Absolute index (samples from the start of the stream) of the first sample. */
  startSample: number;
  /** A copy with its own ArrayBuffer (transferable). */
  samples: Int16Array;
  /** Audio the VAD called speech inside the segment, ms. */
  speechMs: number;
}

export interface SegmenterOptions {
  /** Longest segment (default 20 s). */
  maxSegmentMs?: number;
  /** A cut forced by maxSegmentMs leaves at least this much before it when a pause allows (default 4 s). */
  minSegmentMs?: number;
  /** A pause this long ends the segment and is skipped (default 700 ms). */
  skipPauseMs?: number;
  /** Non-speech kept around speech (default 300 ms). */
  padMs?: number;
  /** Segments with less speech than this are not decoded (default 160 ms). */
  minSpeechMs?: number;
}

export interface SegmenterStats {
  segments: number;
  /** Audio handed out in segments, ms. */
  segmentMs: number;
  /** Audio skipped as non-speech (including dropped blips), ms. */
  skippedMs: number;
  /** Most PCM held at once, samples. */
  maxBufferedSamples: number;
}

const MS_PER_FRAME = (VAD_FRAME_SAMPLES / 16_000) * 1000; // 32

/** Growable Int16 buffer with cheap consumption from the front. */
export class SampleQueue {
  private buf = new Int16Array(16_000);
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  push(samples: Int16Array): void {
    if (this.end + samples.length > this.buf.length) {
      const live = this.length;
      const size = Math.max(this.buf.length, (live + samples.length) * 2);
      // Same size: compact in place (TypedArray#set copes with overlapping ranges of one buffer).
      const next = size === this.buf.length ? this.buf : new Int16Array(size);
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
      this.start = 0;
      this.end = live;
    }
    this.buf.set(samples, this.end);
    this.end += samples.length;
  }

  /** A copy of [from, to) with its own buffer. */
  copy(from: number, to: number): Int16Array {
    return this.buf.slice(this.start + from, this.start + to);
  }

  drop(n: number): void {
    this.start += Math.min(n, this.length);
    if (this.start === this.end) this.start = this.end = 0;
  }
}

export class VadSegmenter {
  private readonly maxFrames: number;
  private readonly minFrames: number;
  private readonly skipPauseFrames: number;
  private readonly padFrames: number;
  private readonly minSpeechFrames: number;
  private readonly pcm = new SampleQueue();
  /** Decided frames; frames[0] starts at `base` (the first sample still held). */
  private frames: VadFrame[] = [];
  /** Absolute sample index of the first sample held; always on the frame grid. */
  private base = 0;
  /** True while frames[0] is the start of an open segment. */
  private inSegment = false;
  private readonly bytes = new S16leReader();
  private received = 0;
  private readonly counters: SegmenterStats = { segments: 0, segmentMs: 0, skippedMs: 0, maxBufferedSamples: 0 };

  constructor(
    private readonly vad: VadStream,
    options: SegmenterOptions = {},
  ) {
    const frames = (ms: number): number => Math.round(ms / MS_PER_FRAME);
    this.maxFrames = Math.max(16, frames(options.maxSegmentMs ?? 20_000));
    this.minFrames = Math.min(this.maxFrames - 1, frames(options.minSegmentMs ?? 4_000));
    this.padFrames = Math.max(0, frames(options.padMs ?? 300));
    this.skipPauseFrames = Math.max(this.padFrames + 1, frames(options.skipPauseMs ?? 700));
    this.minSpeechFrames = Math.max(1, frames(options.minSpeechMs ?? 160));
  }

  /** PCM held right now, samples. */
  get bufferedSamples(): number {
    return this.pcm.length;
  }

  /** Samples received so far. */
  get samples(): number {
    return this.received;
  }

  get stats(): SegmenterStats {
    return { ...this.counters };
  }

  /** Feed s16le PCM (any length; an odd byte is carried over). Returns the segments that are now complete. */
  async push(bytes: Uint8Array): Promise<SpeechSegment[]> {
    const samples = this.bytes.read(bytes);
    if (samples.length === 0) return [];
    this.pcm.push(samples);
    this.received += samples.length;
    this.counters.maxBufferedSamples = Math.max(this.counters.maxBufferedSamples, this.pcm.length);
    this.frames.push(...(await this.vad.push(new Uint8Array(samples.buffer))));
    return this.drain(false);
  }

  /** End of stream: the remaining segments. */
  async flush(): Promise<SpeechSegment[]> {
    this.frames.push(...(await this.vad.flush()));
    return this.drain(true);
  }

  private drain(final: boolean): SpeechSegment[] {
    const out: SpeechSegment[] = [];
    for (;;) {
      const frames = this.frames;
      if (!this.inSegment) {
        const first = frames.findIndex((f) => f.speech);
        if (first < 0) {
          // No speech in sight: keep only what could become the lead-in padding of a later segment.
          this.skip(final ? frames.length : Math.max(0, frames.length - this.padFrames));
          if (final) this.skipRest();
          return out;
        }
        this.skip(Math.max(0, first - this.padFrames));
        this.inSegment = true;
        continue;
      }
      // frames[0] opens the segment. Look for a long pause inside the window.
      const limit = Math.min(frames.length, this.maxFrames);
      let lastSpeech = -1;
      let runStart = -1;
      let pauseEnd = -1;
      for (let i = 0; i < limit; i++) {
        if (frames[i]!.speech) {
          lastSpeech = i;
          runStart = -1;
        } else {
          if (runStart < 0) runStart = i;
          if (lastSpeech >= 0 && i - runStart + 1 >= this.skipPauseFrames) {
            pauseEnd = runStart + this.padFrames;
            break;
          }
        }
      }
      if (pauseEnd >= 0) {
        this.emit(pauseEnd, out);
        this.inSegment = false;
        continue;
      }
      if (frames.length >= this.maxFrames) {
        this.emit(this.chooseCut(), out);
        // The next segment starts at the cut, or at its next speech (less padding) if the cut was in a pause.
        this.inSegment = false;
        continue;
      }
      if (final) {
        if (lastSpeech >= 0) this.emit(Math.min(frames.length, lastSpeech + 1 + this.padFrames), out);
        this.inSegment = false;
        this.skip(this.frames.length);
        this.skipRest();
        return out;
      }
      return out;
    }
  }

  /** Where to end a segment that fills the window: frame index in (0, maxFrames]. */
  private chooseCut(): number {
    const frames = this.frames;
    let best: { start: number; len: number } | undefined;
    let runStart = -1;
    for (let i = 0; i <= this.maxFrames; i++) {
      const pause = i < this.maxFrames && !frames[i]!.speech;
      if (pause && runStart < 0) runStart = i;
      if (!pause && runStart >= 0) {
        const len = i - runStart;
        const center = runStart + (len >> 1);
        // Longest pause leaving at least minFrames before it; later ones win ties (longer segments).
        if (center >= this.minFrames && center > 0 && (!best || len >= best.len)) best = { start: runStart, len };
        runStart = -1;
      }
    }
    if (best) return best.start + (best.len >> 1);
    // Continuous speech: the least speech-like 96 ms of the second half.
    let cut = this.maxFrames >> 1;
    let lowest = Infinity;
    for (let i = cut; i < this.maxFrames - 1; i++) {
      const p = frames[i - 1]!.probability + frames[i]!.probability + frames[i + 1]!.probability;
      if (p < lowest) {
        lowest = p;
        cut = i;
      }
    }
    return Math.max(1, cut);
  }

  /** Hand out frames [0, end) as a segment (unless it holds too little speech) and drop them. */
  private emit(end: number, out: SpeechSegment[]): void {
    let speech = 0;
    for (let i = 0; i < end; i++) if (this.frames[i]!.speech) speech++;
    const endSample = Math.min(end * VAD_FRAME_SAMPLES, this.pcm.length);
    if (speech >= this.minSpeechFrames && endSample > 0) {
      out.push({ startSample: this.base, samples: this.pcm.copy(0, endSample), speechMs: speech * MS_PER_FRAME });
      this.counters.segments++;
      this.counters.segmentMs += endSample / 16;
      this.frames = this.frames.slice(end);
      this.pcm.drop(endSample);
      this.base += endSample;
    } else {
      this.skip(end);
    }
  }

  /** Drop the first n frames (and their samples) as non-speech. */
  private skip(n: number): void {
    if (n <= 0) return;
    const samples = Math.min(n * VAD_FRAME_SAMPLES, this.pcm.length);
    this.frames = this.frames.slice(n);
    this.pcm.drop(samples);
    this.base += samples;
    this.counters.skippedMs += samples / 16;
  }

  /** After the last frame: whatever samples are left are non-speech. */
  private skipRest(): void {
    this.counters.skippedMs += this.pcm.length / 16;
    this.base += this.pcm.length;
    this.pcm.drop(this.pcm.length);
    this.frames = [];
  }
}
