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
import { demuxerOf, SNIFF_BYTES, sniffContainer } from './container-sniff.js';
import { FlacToOgg } from './flac-ogg.js';
import { FfmpegSource } from './live-ffmpeg.js';
import { Mp3ToOgg } from './mp3-ogg.js';
import { OggRepage } from './ogg-repage.js';
import { AsyncQueue, AudioDecodeError, type PcmItem, type PcmSource } from './pcm-source.js';
import { StreamResampler } from './resampler.js';
import { floatToS16, rawEncoding, SampleDecoder } from './sample-decoder.js';
import { WavNotInProcess, WavStream } from './wav-stream.js';

export { AsyncQueue, AudioDecodeError, type PcmItem, type PcmSource };

export interface RawSpec {
  format: string;
  sampleRate: number;
  channels: number;
}

const OUTPUT_RATE = 16_000;

export function createPcmSource(audioFormat: string, raw: RawSpec | undefined, opts: { ffmpegPath?: string } = {}): PcmSource {
  return new LiveSource(audioFormat, raw, opts.ffmpegPath ?? 'ffmpeg');
}

/** Queue items: output, or the ffmpeg source that produces the rest of it. */
type Item = PcmItem | { delegate: PcmSource };

class LiveSource implements PcmSource {
  private readonly queue = new AsyncQueue<Item>();
  /** sniff: `auto` waiting for its first bytes; then one of the three paths. */
  private mode: 'sniff' | 'raw' | 'wav' | 'ffmpeg';
  private head: Buffer[] = [];
  private headBytes = 0;
  private decoder: SampleDecoder | undefined;
  private wav: WavStream | undefined;
  private resampler: StreamResampler | undefined;
  private ffmpeg: PcmSource | undefined;
  /** PCM bytes in the queue. */
  private queued = 0;
  private stopped = false;

  constructor(
    private readonly audioFormat: string,
    raw: RawSpec | undefined,
    private readonly ffmpegPath: string,
  ) {
    if (raw) {
      const enc = rawEncoding(raw.format);
      if (!enc) throw new Error(`not a raw audio format: ${raw.format}`);
      this.decoder = new SampleDecoder(enc, raw.channels);
      this.resampler = new StreamResampler(raw.sampleRate, OUTPUT_RATE);
      this.mode = 'raw';
    } else if (audioFormat === 'wav') {
      this.wav = new WavStream();
      this.mode = 'wav';
    } else if (audioFormat === 'auto') this.mode = 'sniff';
    else {
      this.mode = 'ffmpeg';
      this.startFfmpeg(audioFormat, `as ${audioFormat}`);
    }
  }

  get backlogBytes(): number {
    return this.queued + this.headBytes + (this.ffmpeg?.backlogBytes ?? 0);
  }

  readonly output: AsyncIterable<PcmItem> = {
    [Symbol.asyncIterator]: () => this.iterate(),
  };

  private async *iterate(): AsyncGenerator<PcmItem, void, undefined> {
    for await (const item of this.queue) {
      if ('delegate' in item) {
        yield* item.delegate.output;
        return;
      }
      if (Buffer.isBuffer(item)) this.queued -= item.length;
      yield item;
    }
  }

  write(bytes: Uint8Array): void {
    if (this.stopped || !bytes.length) return;
    switch (this.mode) {
      case 'ffmpeg':
        return this.ffmpeg!.write(bytes);
      case 'raw':
        return this.emit(this.decoder!.decode(bytes), 0);
      case 'wav':
        return this.writeWav(bytes);
      case 'sniff':
        this.head.push(Buffer.from(bytes));
        this.headBytes += bytes.length;
        if (this.headBytes >= SNIFF_BYTES) this.decide();
    }
  }

  end(): void {
    if (this.stopped) return;
    if (this.mode === 'sniff') {
      if (!this.headBytes) return this.finish();
      this.decide();
      if (this.stopped) return;
    }
    if (this.mode === 'ffmpeg') {
      this.stopped = true;
      return this.ffmpeg!.end();
    }
    if (this.wav) {
      try {
        this.wav.end();
      } catch (err) {
        return this.fail(err as Error);
      }
    }
    if (this.resampler) this.push(this.resampler.flush());
    this.finish();
  }

  abort(): void {
    this.stopped = true;
    this.queue.fail(new Error('aborted'));
    this.ffmpeg?.abort();
  }

  mark(): Promise<void> {
    if (this.ffmpeg) return this.ffmpeg.mark();
    return new Promise((resolve) => this.queue.push({ mark: resolve }));
  }

  /** `auto`: the first bytes choose the path; everything buffered so far goes down it. */
  private decide(): void {
    const first = Buffer.concat(this.head);
    this.head = [];
    this.headBytes = 0;
    const container = sniffContainer(first);
    if (container === 'wav') {
      this.mode = 'wav';
      this.wav = new WavStream();
      this.writeWav(first);
      return;
    }
    this.mode = 'ffmpeg';
    this.startFfmpeg(container, container ? `as ${container} (detected from its first bytes)` : 'in any known format');
    this.ffmpeg!.write(first);
  }

  private writeWav(bytes: Uint8Array): void {
    try {
      for (const samples of this.wav!.push(bytes)) this.emit(samples, this.wav!.sampleRate);
    } catch (err) {
      if (!(err instanceof WavNotInProcess)) return this.fail(err as Error);
      const received = this.wav!.replay();
      this.wav = undefined;
      this.mode = 'ffmpeg';
      this.startFfmpeg('wav', 'as wav');
      for (const b of received) this.ffmpeg!.write(b);
    }
  }

  /** `format`: a container name (undefined: let ffmpeg probe). */
  private startFfmpeg(format: string | undefined, described: string): void {
    const rewrite = format === 'flac' ? new FlacToOgg() : format === 'mp3' ? new Mp3ToOgg() : format === 'ogg' ? new OggRepage() : undefined;
    const input = rewrite ? { demuxer: 'ogg', rewrite } : { demuxer: format && demuxerOf(format) };
    this.ffmpeg = new FfmpegSource({ ...input, described }, this.ffmpegPath);
    this.queue.push({ delegate: this.ffmpeg });
    this.queue.end();
  }

  /** Decoded samples at `rate` (0: the raw spec's, resampler already made) → 16 kHz s16le in the queue. */
  private emit(samples: Float32Array, rate: number): void {
    this.resampler ??= new StreamResampler(rate, OUTPUT_RATE);
    this.push(this.resampler.push(samples));
  }

  private push(samples: Float32Array): void {
    if (!samples.length) return;
    const pcm = floatToS16(samples);
    this.queued += pcm.length;
    this.queue.push(pcm);
  }

  private finish(): void {
    this.stopped = true;
    this.queue.end();
  }

  private fail(err: Error): void {
    this.stopped = true;
    this.queue.fail(err instanceof AudioDecodeError ? err : new AudioDecodeError(`Audio could not be decoded as ${this.audioFormat}.`));
  }
}
