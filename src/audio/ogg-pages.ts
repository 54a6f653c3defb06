// Ogg pages for the in-process rewraps that hand ffmpeg one packet per page (flac-ogg.ts, mp3-ogg.ts): ffmpeg's Ogg
// demuxer reads a page by its own lengths, so a packet is decoded as soon as its page is written.

const CRC32 = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  let r = i << 24;
  for (let b = 0; b < 8; b++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  CRC32[i] = r >>> 0;
}

/** Header-type flags of a page. */
export const BOS = 0x02;
export const EOS = 0x04;

export class OggPageWriter {
  private seq = 0;

  constructor(private readonly serial: number) {}

  /** The page(s) of one packet (BOS/EOS in `flags`): a packet over 255 lacing segments continues on further pages. */
  page(packet: Uint8Array, flags: number, granule: number): Buffer {
    const segments = Array<number>(Math.floor(packet.length / 255)).fill(255);
    segments.push(packet.length % 255);
    const pages: Buffer[] = [];
    for (let i = 0, off = 0; i < segments.length; i += 255) {
      const lacing = segments.slice(i, i + 255);
      const size = lacing.reduce((a, b) => a + b, 0);
      const ends = i + 255 >= segments.length;
      const h = Buffer.alloc(27 + lacing.length);
      h.write('OggS', 0, 'latin1');
      h[5] = (i > 0 ? 0x01 : flags & BOS) | (ends ? flags & EOS : 0);
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
