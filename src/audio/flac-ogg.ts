// Live FLAC rewrapped as Ogg FLAC, one frame per page, for ffmpeg. Why: ffmpeg's raw FLAC demuxer runs its frame
// parser, which holds ten frames back before it hands one on (about a second of audio); from Ogg it takes each frame
// as a complete packet. Frames are found in-process: a frame ends where the next sync code (0xFFF8/0xFFF9) starts and
// the CRC-16 over the frame so far is zero (the frame's own footer closes it), so a frame is passed on as soon as the
// first two bytes of the next one arrive, and the last one at the end of the stream.
// The stream header (fLaC, metadata blocks) becomes the Ogg FLAC header packets: STREAMINFO, then an empty comment.
import { AudioDecodeError } from './pcm-source.js';

const notFlac = () => new AudioDecodeError('Audio could not be decoded as flac.');
/** A frame longer than this without a boundary means the stream is not FLAC (real frames stay far below). */
const MAX_FRAME = 1 << 20;

const CRC16 = new Uint16Array(256);
const CRC32 = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  let r16 = i << 8;
  let r32 = i << 24;
  for (let b = 0; b < 8; b++) {
    r16 = r16 & 0x8000 ? (r16 << 1) ^ 0x8005 : r16 << 1;
    r32 = r32 & 0x80000000 ? (r32 << 1) ^ 0x04c11db7 : r32 << 1;
  }
  CRC16[i] = r16 & 0xffff;
  CRC32[i] = r32 >>> 0;
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
  if (first >= 0xc0) for (len = 2; first & (0x40 >> (len - 1)) && len < 7; ) len++;
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
  private seq = 0;
  private granule = 0;
  private readonly serial = 0x666c6163;

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
        pages.push(this.page(head, 0x02, 0), this.page(Buffer.from([0x84, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]), 0, 0));
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
    this.scan = p;
    this.crc = crc;
    if (p > MAX_FRAME) throw notFlac();
    return undefined;
  }

  private frame(frame: Buffer, last: boolean): Buffer {
    this.granule += blockSize(frame, 0);
    return this.page(Buffer.from(frame), last ? 0x04 : 0, this.granule);
  }

  /** The Ogg page(s) of one packet: a packet over 255 lacing segments continues on further pages. */
  private page(packet: Buffer, flags: number, granule: number): Buffer {
    const segments = Array<number>(Math.floor(packet.length / 255)).fill(255);
    segments.push(packet.length % 255);
    const pages: Buffer[] = [];
    for (let i = 0, off = 0; i < segments.length; i += 255) {
      const lacing = segments.slice(i, i + 255);
      const size = lacing.reduce((a, b) => a + b, 0);
      const ends = i + 255 >= segments.length;
      const h = Buffer.alloc(27 + lacing.length);
      h.write('OggS', 0, 'latin1');
      h[5] = (i > 0 ? 0x01 : flags & 0x02) | (ends ? flags & 0x04 : 0);
      h.writeBigInt64LE(ends ? BigInt(granule) : -1n, 6);
      h.writeUInt32LE(this.serial, 14);
      h.writeUInt32LE(this.seq++, 18);
      h[26] = lacing.length;
      Buffer.from(lacing).copy(h, 27);
      const page = Buffer.concat([h, packet.subarray(off, off + size)]);
      let crc = 0;
      for (let j = 0; j < page.length; j++) crc = ((crc << 8) ^ CRC32[((crc >>> 24) ^ page[j]!) & 0xff]!) >>> 0;
      page.writeUInt32LE(crc, 22);
      pages.push(page);
      off += size;
    }
    return Buffer.concat(pages);
  }
}
