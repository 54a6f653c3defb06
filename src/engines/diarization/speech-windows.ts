// PCM → the stretches of speech a speaker-embedding model describes: the voice activity detector's speech regions
// (speech up to a pause of `pauseMs`), each cut into equal windows of about `windowMs`. A speaker change almost
// always comes with a pause, so windows rarely straddle one. Holds the audio of the open region only (at most
// `maxRegionMs`: a longer region is closed there and the next one goes on).
import { PcmHistory } from '../../audio/pcm-history.js';
import { S16leReader } from '../../audio/s16le.js';
import { VAD_FRAME_SAMPLES, type VadFrame, type VadStream } from '../../audio/vad.js';

export interface SpeechWindow {
  startMs: number;
  endMs: number;
  samples: Int16Array;
}

export interface SpeechWindowOptions {
  /** Target window length, ms (default 1500). */
  windowMs?: number;
  /** Silence that ends a speech region, ms (default 300). */
  pauseMs?: number;
  /** Longest region held before it is cut, ms (default 30 s). */
  maxRegionMs?: number;
}

const SAMPLES_PER_MS = 16;

export class SpeechWindowCutter {
  private readonly windowSamples: number;
  private readonly pauseSamples: number;
  private readonly maxRegionSamples: number;
  /** The audio not yet cut into windows (or dropped as silence). */
  private readonly history = new PcmHistory();
  private readonly reader = new S16leReader();
  /** The open region: [start, end) in samples, and the silence after its last speech frame. */
  private region: { start: number; end: number } | undefined;
  private silence = 0;

  constructor(
    private readonly vad: VadStream,
    options: SpeechWindowOptions = {},
  ) {
    this.windowSamples = (options.windowMs ?? 1500) * SAMPLES_PER_MS;
    this.pauseSamples = (options.pauseMs ?? 300) * SAMPLES_PER_MS;
    this.maxRegionSamples = (options.maxRegionMs ?? 30_000) * SAMPLES_PER_MS;
  }

  /** Feed s16le PCM; returns the windows that became complete, in order. */
  async push(pcm: Uint8Array): Promise<SpeechWindow[]> {
    this.keep(pcm);
    return this.decide(await this.vad.push(pcm), false);
  }

  /** End of audio: the open region's windows. */
  async flush(): Promise<SpeechWindow[]> {
    return this.decide(await this.vad.flush(), true);
  }

  private keep(pcm: Uint8Array): void {
    // A copy: the caller may reuse its buffer.
    this.history.push(this.reader.read(pcm));
  }

  private decide(frames: VadFrame[], end: boolean): SpeechWindow[] {
    const out: SpeechWindow[] = [];
    for (const f of frames) {
      const frameEnd = Math.min(f.start + VAD_FRAME_SAMPLES, this.history.end);
      if (f.speech) {
        if (!this.region) this.region = { start: f.start, end: frameEnd };
        else this.region.end = frameEnd;
        this.silence = 0;
        if (this.region.end - this.region.start >= this.maxRegionSamples) out.push(...this.close());
      } else if (this.region) {
        this.silence += VAD_FRAME_SAMPLES;
        if (this.silence >= this.pauseSamples) out.push(...this.close());
      }
      if (!this.region) this.history.drop(frameEnd);
    }
    if (end && this.region) out.push(...this.close());
    return out;
  }

  /** The open region as windows; its audio is let go. */
  private close(): SpeechWindow[] {
    const { start, end } = this.region!;
    this.region = undefined;
    this.silence = 0;
    const samples = this.history.slice(start, end);
    this.history.drop(end);
    const n = Math.max(1, Math.round(samples.length / this.windowSamples));
    const out: SpeechWindow[] = [];
    for (let i = 0; i < n; i++) {
      const from = Math.round((i * samples.length) / n);
      const to = Math.round(((i + 1) * samples.length) / n);
      out.push({ startMs: (start + from) / SAMPLES_PER_MS, endMs: (start + to) / SAMPLES_PER_MS, samples: samples.slice(from, to) });
    }
    return out;
  }
}
