// Live PCM of each channel apart, for multichannel real-time sessions (`enable_multichannel`): client audio bytes in,
// 16 kHz mono s16le of every channel out (one Buffer per channel, all of one length), in arrival order. The same paths
// as the mixed source (live-pcm.ts), each keeping the channels apart:
// - raw formats: their frames split in-process (the channel count is the configuration's num_channels);
// - WAV (declared, or `auto` starting with a RIFF header): read in-process, the channel count from its header;
// - everything else (compressed containers, WAV codecs not decoded here): one low-delay ffmpeg that writes a WAV of
//   every channel (live-ffmpeg.ts `wav`), read in-process the same way, so its header says how many channels came.
// Audio of one channel is refused (AudioDecodeError naming enable_multichannel) as soon as the header says so, and so
// is audio of more than `maxChannels`. The choice of path, the queue and the markers (as in live-pcm.ts) are
// live-input.ts's.
import type { FfmpegSource } from './live-ffmpeg.js';
import { LiveInput, OUTPUT_RATE } from './live-input.js';
import type { RawSpec } from './live-pcm.js';
import { AudioDecodeError, type Mark } from './pcm-source.js';
import { StreamResampler } from './resampler.js';
import { floatToS16, rawEncoding, SampleDecoder } from './sample-decoder.js';
import { WavStream } from './wav-stream.js';

/** The PCM of every channel (index = channel), or a marker that resolves once the consumer reached it. */
export type ChannelPcmItem = Buffer[] | Mark;

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

class LiveChannels extends LiveInput<Buffer[]> implements ChannelPcmSource {
  private readonly decoder: SampleDecoder | undefined;
  private resamplers: StreamResampler[] | undefined;

  constructor(
    audioFormat: string,
    raw: RawSpec | undefined,
    ffmpegPath: string,
    private readonly maxChannels: number,
  ) {
    super(audioFormat, raw !== undefined, ffmpegPath, true);
    if (raw) {
      const enc = rawEncoding(raw.format);
      if (!enc) throw new Error(`not a raw audio format: ${raw.format}`);
      this.decoder = new SampleDecoder(enc, raw.channels);
      this.resamplers = Array.from({ length: raw.channels }, () => new StreamResampler(raw.sampleRate, OUTPUT_RATE));
    }
  }

  protected override writeRaw(bytes: Uint8Array): void {
    this.emit(this.decoder!.decodeChannels(bytes));
  }

  protected override writeWavData(wav: WavStream, bytes: Uint8Array): void {
    for (const channels of wav.pushChannels(bytes)) {
      this.checkChannels(channels.length);
      this.resamplers ??= channels.map(() => new StreamResampler(wav.sampleRate, OUTPUT_RATE));
      this.emit(channels);
    }
  }

  protected override flush(): void {
    if (this.resamplers) this.pushChannels(this.resamplers.map((r) => r.flush()));
  }

  /** ffmpeg's WAV of every channel, read in-process; its codec delay (the rewrite's lead) dropped from each. */
  protected override async *fromFfmpeg(ffmpeg: FfmpegSource): AsyncGenerator<ChannelPcmItem, void, undefined> {
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

  private checkChannels(channels: number): void {
    const refusal = multichannelRefusal(channels, this.maxChannels);
    if (refusal) throw new AudioDecodeError(refusal);
  }

  /** Each channel's samples at the input rate → 16 kHz s16le of each in the queue. */
  private emit(channels: Float32Array[]): void {
    if (!channels[0]!.length) return;
    this.pushChannels(channels.map((c, i) => this.resamplers![i]!.push(c)));
  }

  private pushChannels(channels: Float32Array[]): void {
    // Resamplers of one rate fed alike give alike lengths; the shortest is the safe cut (they never differ in practice).
    const n = Math.min(...channels.map((c) => c.length));
    if (!n) return;
    const pcm = channels.map((c) => floatToS16(c.length === n ? c : c.subarray(0, n)));
    this.push(pcm);
  }
}
