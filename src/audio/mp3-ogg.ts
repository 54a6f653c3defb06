// Live MPEG audio (mp3; also layers I/II) rewrapped as an OGM audio stream in Ogg, one frame per page, for ffmpeg.
// Why: ffmpeg's raw mp3 demuxer reads 1,024-byte packets and blocks until each is full: 170 ms of audio at 48 kbit/s,
// more at lower rates. A frame's length follows from its 4-byte header, so each frame is passed on the moment its
// last byte arrives, and ffmpeg's Ogg demuxer takes it as one packet (OGM carries it under its WAVE format tag).
// An ID3v2 tag is skipped; a Xing/Info frame (no audio) is dropped, and the encoder delay its LAME tag names is
// reported so the caller trims it as ffmpeg's mp3 demuxer does. The first frame counts once the next header follows
// it; a stream with no such frame in its first 64 KiB is not MPEG audio. Later bytes between frames are skipped.
import { BOS, EOS, OggPageWriter } from './ogg-pages.js';
import { AudioDecodeError } from './pcm-source.js';

const notMp3 = (why: string) => new AudioDecodeError('Audio could not be decoded as mp3.', `mp3 rewrap: ${why}`);
/** Junk tolerated before a frame header is found. */
const MAX_GAP = 64 * 1024;
/** ffmpeg's mpeg audio decoder delay, added to the LAME encoder delay (as its mp3 demuxer does). */
const DECODER_DELAY = 529;

// kbit/s by [MPEG-1 ? 0 : 1][layer 1..3 → 0..2][index]
const BITRATES = [
  [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  [
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
];
const RATES = [44_100, 48_000, 32_000];

interface FrameHeader {
  length: number;
  samples: number;
  sampleRate: number;
  channels: number;
  layer: number;
}

/** The header at `at` (4 bytes needed), or undefined when these bytes are not one (free format counts as not). */
export function mpegHeader(b: Uint8Array, at: number): FrameHeader | undefined {
  if (b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const version = (b[at + 1]! >> 3) & 3; // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1
  const layer = 4 - ((b[at + 1]! >> 1) & 3); // 1..3; 4 is reserved
  const bitrateIndex = b[at + 2]! >> 4;
  const rateIndex = (b[at + 2]! >> 2) & 3;
  if (version === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const mpeg1 = version === 3;
  const kbps = BITRATES[mpeg1 ? 0 : 1]![layer - 1]![bitrateIndex]!;
  const sampleRate = RATES[rateIndex]! >> (mpeg1 ? 0 : version === 2 ? 1 : 2);
  const padding = (b[at + 2]! >> 1) & 1;
  const channels = b[at + 3]! >> 6 === 3 ? 1 : 2;
  if (layer === 1) return { length: (Math.floor((12_000 * kbps) / sampleRate) + padding) * 4, samples: 384, sampleRate, channels, layer };
  const samples = layer === 3 && !mpeg1 ? 576 : 1152;
  return { length: Math.floor(((samples / 8) * 1000 * kbps) / sampleRate) + padding, samples, sampleRate, channels, layer };
}

const sameStream = (a: FrameHeader, b: FrameHeader | undefined) => !!b && a.sampleRate === b.sampleRate && a.layer === b.layer;

/** Where a Xing/Info tag would sit in a layer III frame: after the 4-byte header and the side information. */
function xingOffset(b: Uint8Array, h: FrameHeader): number {
  const mpeg1 = (b[1]! >> 3) & 1;
  if (mpeg1) return 4 + (h.channels === 1 ? 17 : 32);
  return 4 + (h.channels === 1 ? 9 : 17);
}

export class Mp3ToOgg {
  private buf = Buffer.alloc(0);
  /** ID3v2 bytes still to skip. */
  private skip = 0;
  private started = false;
  private first: FrameHeader | undefined;
  private granule = 0;
  /** Junk bytes skipped since the last frame. */
  private gap = 0;
  private readonly ogg = new OggPageWriter(0x6d703320);
  /** Samples (at the stream's own rate) of encoder and decoder delay that precede the audio, from a LAME tag. */
  startPadding = 0;
  /** The stream's sample rate, once its first frame is known. */
  sampleRate = 0;

  get leadSeconds(): number {
    return this.sampleRate ? this.startPadding / this.sampleRate : 0;
  }

  /** Ogg pages for the bytes so far. Throws AudioDecodeError when the stream is not MPEG audio. */
  push(bytes: Uint8Array): Buffer[] {
    let input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.skip) {
      const n = Math.min(this.skip, input.length);
      this.skip -= n;
      input = input.subarray(n);
    }
    this.buf = this.buf.length ? Buffer.concat([this.buf, input]) : Buffer.from(input);
    const pages: Buffer[] = [];
    for (;;) {
      const b = this.buf;
      if (!this.started && b.length >= 3 && b.toString('latin1', 0, 3) === 'ID3') {
        if (b.length < 10) break;
        const size = ((b[6]! & 0x7f) << 21) | ((b[7]! & 0x7f) << 14) | ((b[8]! & 0x7f) << 7) | (b[9]! & 0x7f);
        const total = 10 + size + (b[5]! & 0x10 ? 10 : 0);
        if (b.length < total) {
          this.skip = total - b.length;
          this.buf = Buffer.alloc(0);
          break;
        }
        this.buf = b.subarray(total);
        continue;
      }
      if (b.length < 4) break;
      const h = mpegHeader(b, 0);
      // Before the first frame, a header counts only when another one follows it: random bytes often look like one.
      if (h && !this.first && b.length < h.length + 4) break;
      if (!h || !sameStream(h, this.first ?? mpegHeader(b, h.length))) {
        // Not at a frame: skip to the next byte that could start one.
        let s = 1;
        while (s < b.length && b[s] !== 0xff) s++;
        this.buf = b.subarray(s);
        this.gap += s;
        if (!this.first && this.gap > MAX_GAP) throw notMp3(`no frame header in the first ${MAX_GAP} bytes`);
        continue;
      }
      if (b.length < h.length) break;
      const frame = b.subarray(0, h.length);
      this.buf = b.subarray(h.length);
      this.gap = 0;
      if (!this.first) {
        this.started = true;
        this.first = h;
        this.sampleRate = h.sampleRate;
        pages.push(this.ogg.page(this.ogmHeader(h), BOS, 0), this.ogg.page(Buffer.from('\x03vorbis\0\0\0\0\0\0\0\0\x01', 'latin1'), 0, 0));
        if (this.infoFrame(frame, h)) continue;
      }
      pages.push(this.packet(frame, false));
      this.granule += h.samples;
    }
    return pages;
  }

  /** The end of the stream: an empty closing page. Throws AudioDecodeError when no frame was found. */
  end(): Buffer[] {
    if (!this.first) throw notMp3('no MPEG audio frame in the stream');
    return [this.packet(Buffer.alloc(0), true)];
  }

  /** A data packet: OGM's flag byte (no header, no duration bytes), then the frame. */
  private packet(frame: Buffer, last: boolean): Buffer {
    return this.ogg.page(Buffer.concat([Buffer.from([0]), frame]), last ? EOS : 0, this.granule);
  }

  /** OGM's audio stream header: the codec as a WAVE format tag in hex, time in 100 ns units, samples per second. */
  private ogmHeader(h: FrameHeader): Buffer {
    // type 1, stream type, subtype, size (52: no extra data), time unit, samples per unit, default length, buffer
    // size, bits per sample (+2 padding), channels, block align, average bytes per second.
    const p = Buffer.alloc(53);
    p[0] = 0x01;
    p.write('audio', 1, 'latin1');
    p.write(h.layer === 3 ? '0055' : '0050', 9, 'latin1');
    p.writeInt32LE(52, 13);
    p.writeBigInt64LE(10_000_000n, 17);
    p.writeBigInt64LE(BigInt(h.sampleRate), 25);
    p.writeInt32LE(h.samples, 33);
    p.writeInt32LE(h.length, 37);
    p.writeInt16LE(0, 41);
    p.writeInt16LE(h.channels, 45);
    p.writeInt16LE(1, 47);
    p.writeInt32LE(0, 49);
    return p;
  }

  /** A Xing/Info frame carries no audio: dropped, its LAME encoder delay kept. True when `frame` was one. */
  private infoFrame(frame: Buffer, h: FrameHeader): boolean {
    if (h.layer !== 3) return false;
    const at = xingOffset(frame, h);
    const tag = frame.toString('latin1', at, at + 4);
    if (tag !== 'Xing' && tag !== 'Info') return false;
    // The LAME extension follows the Xing fields (flags, then frames, bytes, TOC and quality as the flags say).
    const flags = frame.readUInt32BE(at + 4);
    let lame = at + 8;
    if (flags & 1) lame += 4;
    if (flags & 2) lame += 4;
    if (flags & 4) lame += 100;
    if (flags & 8) lame += 4;
    if (lame + 24 <= frame.length && /^(LAME|Lavc|Lavf)/.test(frame.toString('latin1', lame, lame + 4))) {
      const delay = (frame[lame + 21]! << 4) | (frame[lame + 22]! >> 4);
      this.startPadding = delay + DECODER_DELAY;
    }
    return true;
  }
}
