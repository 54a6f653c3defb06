// Live PCM of each channel apart, for multichannel real-time sessions (`enable_multichannel`): client audio bytes in,
// 16 kHz mono s16le of every channel out (one Buffer per channel, all of one length), in arrival order. The same paths
// as the mixed source (live-pcm.ts), each keeping the channels apart:
// - raw formats: their frames split in-process (the channel count is the configuration's num_channels);
// - WAV (declared, or `auto` starting with a RIFF header): read in-process, the channel count from its header;
// - everything else (compressed containers, WAV codecs not decoded here): one low-delay ffmpeg that writes a WAV of
//   every channel (live-ffmpeg.ts `wav`), read in-process the same way, so its header says how many channels came.
// Audio of one channel is refused (AudioDecodeError naming enable_multichannel) as soon as the header says so, and so
// is audio of more than `maxChannels`. Markers as in live-pcm.ts.
import { demuxerOf, SNIFF_BYTES, sniffContainer } from './container-sniff.js';
import { FlacToOgg } from './flac-ogg.js';
import { FfmpegSource } from './live-ffmpeg.js';
import type { RawSpec } from './live-pcm.js';
import { Mp3ToOgg } from './mp3-ogg.js';
import { OggRepage } from './ogg-repage.js';
import { AsyncQueue, AudioDecodeError } from './pcm-source.js';
import { StreamResampler } from './resampler.js';
import { floatToS16, rawEncoding, SampleDecoder } from './sample-decoder.js';
import { WavNotInProcess, WavStream } from './wav-stream.js';

const OUTPUT_RATE = 16_000;

/** The PCM of every channel (index = channel), or a marker that resolves once the consumer reached it. */
export type ChannelPcmItem = Buffer[] | { mark: () => void };

/** As PcmSource (pcm-source.ts), with the channels apart. */
export interface ChannelPcmSource {
  write(bytes: Uint8Array): void;
  end(): void;
  abort(): void;
  mark(): Promise<void>;
  /** Every channel's PCM and the markers, in order; rejects with AudioDecodeError when the audio cannot be used. */
  readonly output: AsyncIterable<ChannelPcmItem>;
  readonly backlogBytes: number;
}

export function createChannelSource(audioFormat: string, raw: RawSpec | undefined, opts: { ffmpegPath?: string; maxChannels: number }): ChannelPcmSource {
  return new LiveChannels(audioFormat, raw, opts.ffmpegPath ?? 'ffmpeg', opts.maxChannels);
}

/** Why audio of `channels` channels cannot be recognised channel by channel, or undefined when it can. */
export function multichannelRefusal(channels: number, maxChannels: number): string | undefined {
  if (channels < 2) return 'enable_multichannel needs audio with two or more channels; this audio has one channel.';
  if (channels > maxChannels) return `the audio has ${channels} channels; enable_multichannel recognises at most ${maxChannels}.`;
  return undefined;
}

type Item = ChannelPcmItem | { delegate: FfmpegSource };

class LiveChannels implements ChannelPcmSource {
  private readonly queue = new AsyncQueue<Item>();
  private mode: 'sniff' | 'raw' | 'wav' | 'ffmpeg';
  private head: Buffer[] = [];
  private headBytes = 0;
  private decoder: SampleDecoder | undefined;
  private wav: WavStream | undefined;
  private resamplers: StreamResampler[] | undefined;
  private ffmpeg: FfmpegSource | undefined;
  private queued = 0;
  private stopped = false;

  constructor(
    private readonly audioFormat: string,
    raw: RawSpec | undefined,
    private readonly ffmpegPath: string,
    private readonly maxChannels: number,
  ) {
    if (raw) {
      const enc = rawEncoding(raw.format);
      if (!enc) throw new Error(`not a raw audio format: ${raw.format}`);
      this.decoder = new SampleDecoder(enc, raw.channels);
      this.resamplers = Array.from({ length: raw.channels }, () => new StreamResampler(raw.sampleRate, OUTPUT_RATE));
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

  readonly output: AsyncIterable<ChannelPcmItem> = {
    [Symbol.asyncIterator]: () => this.iterate(),
  };

  private async *iterate(): AsyncGenerator<ChannelPcmItem, void, undefined> {
    for await (const item of this.queue) {
      if ('delegate' in item) {
        yield* this.fromFfmpeg(item.delegate);
        return;
      }
      if (Array.isArray(item)) this.queued -= item[0]!.length * item.length;
      yield item;
    }
  }

  /** ffmpeg's WAV of every channel, read in-process; its codec delay (the rewrite's lead) dropped from each. */
  private async *fromFfmpeg(ffmpeg: FfmpegSource): AsyncGenerator<ChannelPcmItem, void, undefined> {
    const wav = new WavStream();
    let lead: number | undefined;
    for await (const item of ffmpeg.output) {
      if (!Buffer.isBuffer(item)) {
        yield item;
        continue;
      }
      for (let channels of wav.pushChannels(item)) {
        this.checkChannels(wav.format!.channels);
        lead ??= Math.round(ffmpeg.leadSeconds * OUTPUT_RATE);
        if (lead > 0) {
          const drop = Math.min(lead, channels[0]!.length);
          lead -= drop;
          channels = channels.map((c) => c.subarray(drop));
        }
        if (channels[0]!.length) yield channels.map(floatToS16);
      }
    }
    if (!wav.format) throw new AudioDecodeError(`Audio could not be decoded as ${this.audioFormat}.`);
  }

  write(bytes: Uint8Array): void {
    if (this.stopped || !bytes.length) return;
    switch (this.mode) {
      case 'ffmpeg':
        return this.ffmpeg!.write(bytes);
      case 'raw':
        return this.emit(this.decoder!.decodeChannels(bytes));
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
    if (this.resamplers) this.push(this.resamplers.map((r) => r.flush()));
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
      for (const channels of this.wav!.pushChannels(bytes)) {
        this.checkChannels(channels.length);
        this.resamplers ??= channels.map(() => new StreamResampler(this.wav!.sampleRate, OUTPUT_RATE));
        this.emit(channels);
      }
    } catch (err) {
      if (!(err instanceof WavNotInProcess)) return this.fail(err as Error);
      const received = this.wav!.replay();
      this.wav = undefined;
      this.mode = 'ffmpeg';
      this.startFfmpeg('wav', 'as wav');
      for (const b of received) this.ffmpeg!.write(b);
    }
  }

  private checkChannels(channels: number): void {
    const refusal = multichannelRefusal(channels, this.maxChannels);
    if (refusal) throw new AudioDecodeError(refusal);
  }

  private startFfmpeg(format: string | undefined, described: string): void {
    const rewrite = format === 'flac' ? new FlacToOgg() : format === 'mp3' ? new Mp3ToOgg() : format === 'ogg' ? new OggRepage() : undefined;
    const input = rewrite ? { demuxer: 'ogg', rewrite } : { demuxer: format && demuxerOf(format) };
    this.ffmpeg = new FfmpegSource({ ...input, described, wav: true }, this.ffmpegPath);
    this.queue.push({ delegate: this.ffmpeg });
    this.queue.end();
  }

  /** Each channel's samples at the input rate → 16 kHz s16le of each in the queue. */
  private emit(channels: Float32Array[]): void {
    if (!channels[0]!.length) return;
    this.push(channels.map((c, i) => this.resamplers![i]!.push(c)));
  }

  private push(channels: Float32Array[]): void {
    // Resamplers of one rate fed alike give alike lengths; the shortest is the safe cut (they never differ in practice).
    const n = Math.min(...channels.map((c) => c.length));
    if (!n) return;
    const pcm = channels.map((c) => floatToS16(c.length === n ? c : c.subarray(0, n)));
    this.queued += pcm[0]!.length * pcm.length;
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
