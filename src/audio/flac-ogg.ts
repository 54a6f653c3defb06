// Live FLAC rewrapped as Ogg FLAC, one frame per page, for ffmpeg. Why: ffmpeg's raw FLAC demuxer runs its frame
// parser, which holds ten frames back before it hands one on (about a second of audio); from Ogg it takes each frame
// as a complete packet. Frames are found in-process: a frame ends where the next sync code (0xFFF8/0xFFF9) starts and
// the CRC-16 over the frame so far is zero (the frame's own footer closes it), so a frame is passed on as soon as the
// bytes received end with its footer, or else when the first two bytes of the next one arrive, and the last one at
// the end of the stream.
// The stream header (fLaC, metadata blocks) becomes the Ogg FLAC header packets: STREAMINFO, then an empty comment.
import { BOS, EOS, OggPageWriter } from './ogg-pages.js';
import { AudioDecodeError } from './pcm-source.js';

const notFlac = () => new AudioDecodeError('Audio could not be decoded as flac.');
/** A frame longer than this without a boundary means the stream is not FLAC (real frames stay far below). */
const MAX_FRAME = 1 << 20;

const CRC16 = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let r = i << 8;
  for (let b = 0; b < 8; b++) r = r & 0x8000 ? (r << 1) ^ 0x8005 : r << 1;
  CRC16[i] = r & 0xffff;
}

const isSync = (b: Buffer, at: number) => b[at] === 0xff && (b[at + 1]! & 0xfe) === 0xf8;

/** Samples in a frame, from its header (`at` its first byte); 0 when the header is cut short or reserved. */
function blockSize(b: Buffer, at: number): number {
  const code = b[at + 2]! >> 4;
  if (code === 1) return 192;
  if (code >= 2 && code <= 5) return 576 << (code - 2);
  if (code >= 8) return 256 << (code - 8);
  if (code !== 6 && code !== 7) return 0;
  // 8 or 16 bits after the UTF-8-style frame/sample number (its length is the count of leading one bits).
  const first = b[at + 4]!;
  let len = 1;
  if (first >= 0xc0) for (len = 2; first & (0x40 >> (len - 1)) && len < 7;) len++;
  const off = at + 4 + len;
  if (off + code - 5 > b.length) return 0;
  return (code === 6 ? b[off]! : b.readUInt16BE(off)) + 1;
}

export class FlacToOgg {
  private buf = Buffer.alloc(0);
  private state: 'magic' | 'meta' | 'frames' = 'magic';
  private streaminfo: Buffer | undefined;
  /** Frames: the bytes of buf[0, scan) are checked, `crc` is their CRC-16. */
  private scan = 0;
  private crc = 0;
  private granule = 0;
  private readonly ogg = new OggPageWriter(0x666c6163);

  /** Ogg pages for the bytes so far. Throws AudioDecodeError when the stream is not FLAC. */
  push(bytes: Uint8Array): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, bytes]) : Buffer.from(bytes);
    const pages: Buffer[] = [];
    for (;;) {
      if (this.state === 'magic') {
        if (this.buf.length < 4) break;
        if (this.buf.toString('latin1', 0, 4) !== 'fLaC') throw notFlac();
        this.buf = this.buf.subarray(4);
        this.state = 'meta';
      } else if (this.state === 'meta') {
        if (this.buf.length < 4) break;
        const len = this.buf.readUIntBE(1, 3);
        if (this.buf.length < 4 + len) break;
        const type = this.buf[0]! & 0x7f;
        const last = this.buf[0]! & 0x80;
        if (type === 0 && len === 34) this.streaminfo = Buffer.from(this.buf.subarray(4, 4 + len));
        this.buf = this.buf.subarray(4 + len);
        if (!last) continue;
        if (!this.streaminfo) throw notFlac();
        const head = Buffer.concat([Buffer.from([0x7f]), Buffer.from('FLAC\x01\x00\x00\x01fLaC\x00\x00\x00\x22', 'latin1'), this.streaminfo]);
        pages.push(this.ogg.page(head, BOS, 0), this.ogg.page(Buffer.from([0x84, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]), 0, 0));
        this.state = 'frames';
      } else {
        const frame = this.nextFrame();
        if (!frame) break;
        pages.push(this.frame(frame, false));
      }
    }
    return pages;
  }

  /** The last frame, on the closing page. Throws AudioDecodeError when the stream ended inside the header. */
  end(): Buffer[] {
    if (this.state !== 'frames') {
      if (this.buf.length || this.state === 'meta') throw notFlac();
      return [];
    }
    return this.buf.length >= 4 && isSync(this.buf, 0) ? [this.frame(this.buf, true)] : [];
  }

  /** The frame at the start of buf once the next one begins, else undefined. */
  private nextFrame(): Buffer | undefined {
    const b = this.buf;
    if (this.scan === 0) {
      // Skip anything before the first sync code.
      let s = 0;
      while (s + 1 < b.length && !isSync(b, s)) s++;
      if (s) this.buf = b.subarray(s);
      if (this.buf.length < 2 || !isSync(this.buf, 0)) return undefined;
    }
    const buf = this.buf;
    let crc = this.crc;
    let p = this.scan;
    // A frame is at least a 6-byte header plus the 2-byte footer.
    for (; p + 1 < buf.length; p++) {
      if (p >= 8 && crc === 0 && isSync(buf, p)) {
        const frame = buf.subarray(0, p);
        this.buf = buf.subarray(p);
        this.scan = 0;
        this.crc = 0;
        return frame;
      }
      crc = ((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ buf[p]!]!;
    }
    // The bytes so far close a frame (a live encoder writes whole frames): pass it on now rather than wait for the
    // next one. A chunk cut inside a frame ends on a zero CRC once in 65,536 times; that frame is lost to the
    // decoder, and the stream goes on from the next sync code.
    if (p === buf.length - 1 && p >= 7 && (((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ buf[p]!]!) === 0) {
      this.buf = Buffer.alloc(0);
      this.scan = 0;
      this.crc = 0;
      return buf;
    }
    this.scan = p;
    this.crc = crc;
    if (p > MAX_FRAME) throw notFlac();
    return undefined;
  }

  private frame(frame: Buffer, last: boolean): Buffer {
    this.granule += blockSize(frame, 0);
    return this.ogg.page(Buffer.from(frame), last ? EOS : 0, this.granule);
  }
}
