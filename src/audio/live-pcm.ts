// Live PCM for real-time sessions: client audio bytes in, 16 kHz mono s16le out, in arrival order, with as little
// delay as the format allows.
// - Raw formats (every pcm_* width and byte order, mu-law, A-law; any channel count and sample rate) and WAV are
//   converted in-process: no child process, output as soon as a write holds whole frames. WAV is recognised from
//   its header (declared `wav`, or `auto` starting with RIFF/RF64....WAVE) and parsed as the bytes arrive.
// - Compressed containers go through one low-delay ffmpeg per session (live-ffmpeg.ts); for `auto` the first bytes
//   name the demuxer (container-sniff.ts), so ffmpeg does not probe. FLAC and mp3 reach it rewrapped as Ogg, a frame
//   per page (flac-ogg.ts, mp3-ogg.ts), and Ogg Opus repaginated, a packet per page (ogg-repage.ts).
//   A WAV with a codec not decoded here (ADPCM...) is handed to ffmpeg too, with the bytes so far replayed into it.
// Markers: `mark()` resolves once everything written before it has come out of the source and been consumed (the
// pump reached it), so a finalize lands after the audio that preceded it. In-process this is exact (the resampler
// holds back under a millisecond); through ffmpeg it waits until ffmpeg has caught up (at most 1 s).
// The choice of path, the queue and the markers are live-input.ts's, shared with live-channels.ts.
import type { FfmpegSource } from './live-ffmpeg.js';
import { LiveInput, OUTPUT_RATE } from './live-input.js';
import { AsyncQueue, AudioDecodeError, type PcmItem, type PcmSource } from './pcm-source.js';
import { StreamResampler } from './resampler.js';
import { floatToS16, rawEncoding, SampleDecoder } from './sample-decoder.js';
import type { WavStream } from './wav-stream.js';

export { AsyncQueue, AudioDecodeError, type PcmItem, type PcmSource };

export interface RawSpec {
  format: string;
  sampleRate: number;
  channels: number;
}

export function createPcmSource(audioFormat: string, raw: RawSpec | undefined, opts: { ffmpegPath?: string } = {}): PcmSource {
  return new LiveSource(audioFormat, raw, opts.ffmpegPath ?? 'ffmpeg');
}

class LiveSource extends LiveInput<Buffer> implements PcmSource {
  private readonly decoder: SampleDecoder | undefined;
  private resampler: StreamResampler | undefined;

  constructor(audioFormat: string, raw: RawSpec | undefined, ffmpegPath: string) {
    super(audioFormat, raw !== undefined, ffmpegPath, false);
    if (raw) {
      const enc = rawEncoding(raw.format);
      if (!enc) throw new Error(`not a raw audio format: ${raw.format}`);
      this.decoder = new SampleDecoder(enc, raw.channels);
      this.resampler = new StreamResampler(raw.sampleRate, OUTPUT_RATE);
    }
  }

  protected override writeRaw(bytes: Uint8Array): void {
    this.emit(this.decoder!.decode(bytes), 0);
  }

  protected override writeWavData(wav: WavStream, bytes: Uint8Array): void {
    for (const samples of wav.push(bytes)) this.emit(samples, wav.sampleRate);
  }

  protected override flush(): void {
    if (this.resampler) this.pushSamples(this.resampler.flush());
  }

  protected override fromFfmpeg(ffmpeg: FfmpegSource): AsyncIterable<PcmItem> {
    return ffmpeg.output;
  }

  /** Decoded samples at `rate` (0: the raw spec's, resampler already made) → 16 kHz s16le in the queue. */
  private emit(samples: Float32Array, rate: number): void {
    this.resampler ??= new StreamResampler(rate, OUTPUT_RATE);
    this.pushSamples(this.resampler.push(samples));
  }

  private pushSamples(samples: Float32Array): void {
    if (!samples.length) return;
    this.push(floatToS16(samples));
  }
}
