// The path live client audio takes, shared by the mixed source (live-pcm.ts) and the one that keeps channels apart
// (live-channels.ts): raw formats and WAV are decoded in-process, anything else goes through one low-delay ffmpeg
// (live-ffmpeg.ts); `auto` waits for its first bytes (container-sniff.ts) to choose, and a WAV whose codec is not
// decoded here is handed to ffmpeg with the bytes so far replayed into it. This owns the choice of path, the ordered
// output queue, the markers, the backlog and the errors; each source decodes, resamples and shapes its own PCM.
import { demuxerOf, SNIFF_BYTES, sniffContainer } from './container-sniff.js';
import { FlacToOgg } from './flac-ogg.js';
import { FfmpegSource } from './live-ffmpeg.js';
import { Mp3ToOgg } from './mp3-ogg.js';
import { OggRepage } from './ogg-repage.js';
import { AsyncQueue, AudioDecodeError, type Mark } from './pcm-source.js';
import { WavNotInProcess, WavStream } from './wav-stream.js';

/** The rate of every live source's output (Hz). */
export const OUTPUT_RATE = 16_000;

/** Queue items: output, or the ffmpeg source that produces the rest of it. */
type Item<P> = P | Mark | { delegate: FfmpegSource };

const isPcm = <P extends Buffer | Buffer[]>(item: P | Mark): item is P => Buffer.isBuffer(item) || Array.isArray(item);
const bytesOf = (pcm: Buffer | Buffer[]): number => (Buffer.isBuffer(pcm) ? pcm.length : pcm.reduce((n, c) => n + c.length, 0));

/** A live source whose output is `P`: a Buffer of mixed PCM, or one Buffer per channel. */
export abstract class LiveInput<P extends Buffer | Buffer[]> {
  private readonly queue = new AsyncQueue<Item<P>>();
  /** sniff: `auto` waiting for its first bytes; then one of the three paths. */
  private mode: 'sniff' | 'raw' | 'wav' | 'ffmpeg';
  private head: Buffer[] = [];
  private headBytes = 0;
  private wav: WavStream | undefined;
  private ffmpeg: FfmpegSource | undefined;
  /** PCM bytes in the queue. */
  private queued = 0;
  private stopped = false;

  /**
   * `raw`: the audio is in a raw format, which the source decodes (writeRaw). `ffmpegWav`: ffmpeg writes a WAV of
   * every channel (live-ffmpeg.ts `wav`) rather than mixed PCM.
   */
  protected constructor(
    protected readonly audioFormat: string,
    raw: boolean,
    private readonly ffmpegPath: string,
    private readonly ffmpegWav: boolean,
  ) {
    if (raw) this.mode = 'raw';
    else if (audioFormat === 'wav') {
      this.wav = new WavStream();
      this.mode = 'wav';
    } else if (audioFormat === 'auto') this.mode = 'sniff';
    else {
      this.mode = 'ffmpeg';
      this.startFfmpeg(audioFormat, `as ${audioFormat}`);
    }
  }

  /** Raw audio bytes: decoded, resampled and queued (push). */
  protected abstract writeRaw(bytes: Uint8Array): void;
  /** WAV bytes through `wav`: its samples resampled and queued; WavNotInProcess when its codec is not decoded here. */
  protected abstract writeWavData(wav: WavStream, bytes: Uint8Array): void;
  /** The audio ended in-process: what the resamplers still hold, queued. */
  protected abstract flush(): void;
  /** The output of the ffmpeg that took the audio over, as this source puts it out. */
  protected abstract fromFfmpeg(ffmpeg: FfmpegSource): AsyncIterable<P | Mark>;

  get backlogBytes(): number {
    return this.queued + this.headBytes + (this.ffmpeg?.backlogBytes ?? 0);
  }

  readonly output: AsyncIterable<P | Mark> = {
    [Symbol.asyncIterator]: () => this.iterate(),
  };

  private async *iterate(): AsyncGenerator<P | Mark, void, undefined> {
    for await (const item of this.queue) {
      if ('delegate' in item) {
        yield* this.fromFfmpeg(item.delegate);
        return;
      }
      if (isPcm(item)) this.queued -= bytesOf(item);
      yield item;
    }
  }

  write(bytes: Uint8Array): void {
    if (this.stopped || !bytes.length) return;
    switch (this.mode) {
      case 'ffmpeg':
        return this.ffmpeg!.write(bytes);
      case 'raw':
        return this.writeRaw(bytes);
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
    this.flush();
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

  /** Converted PCM into the queue. */
  protected push(pcm: P): void {
    this.queued += bytesOf(pcm);
    this.queue.push(pcm);
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
      this.writeWavData(this.wav!, bytes);
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
    this.ffmpeg = new FfmpegSource({ ...input, described, wav: this.ffmpegWav }, this.ffmpegPath);
    this.queue.push({ delegate: this.ffmpeg });
    this.queue.end();
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
