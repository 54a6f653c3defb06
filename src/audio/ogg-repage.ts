// Live Ogg Opus repaginated in-process, one packet per page, for ffmpeg. Why: ffmpeg's Ogg demuxer hands on a page's
// packets only once the whole page has arrived, and Ogg writers fill pages of up to a second of audio (ffmpeg's and
// opusenc's default), so a packet at the start of a page reached the decoder up to a second after its audio was sent.
// A page's header (27 bytes and its segment table) comes before its packets and gives each packet's length, so each
// packet is passed on in a page of its own as soon as its last byte arrives.
// - Opus streams (first packet "OpusHead"): the headers keep granule position 0; each audio packet's granule is the one
//   before plus the packet's duration from its TOC byte (RFC 6716 section 3.1), and the packet that ends a page takes
//   the page's own granule (so an end-trimmed last page decodes to the same samples).
// - Any other logical stream (Vorbis, Speex, FLAC, video) passes page by page, unchanged.
// - Bytes between pages are skipped (ffmpeg resyncs the same way). Page CRCs are not checked: a packet is passed on
//   before its page is complete. A stream that does not start with "OggS" passes through unchanged, for ffmpeg to
//   refuse in its own words.
import { BOS, EOS, OggPageWriter } from './ogg-pages.js';
import { AudioDecodeError } from './pcm-source.js';

/** A packet longer than this (across pages) means the stream is not what its pages say (Opus packets stay tiny). */
const MAX_PACKET = 1 << 20;
const CONTINUED = 0x01;
const CAPTURE = Buffer.from('OggS', 'latin1');

/** Samples at 48 kHz in an Opus packet, from its TOC byte (and frame count byte). */
export function opusSamples(p: Uint8Array): number {
  if (!p.length) return 0;
  const config = p[0]! >> 3;
  const frame = config < 12 ? [480, 960, 1920, 2880][config & 3]! : config < 16 ? (config & 1 ? 960 : 480) : [120, 240, 480, 960][config & 3]!;
  const code = p[0]! & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : p.length > 1 ? p[1]! & 0x3f : 0;
  return frame * frames;
}

interface Stream {
  opus: boolean;
  writer: OggPageWriter;
  /** Packets passed on so far (the first two are OpusHead and OpusTags). */
  packets: number;
  granule: number;
  partial: Buffer[];
  partialBytes: number;
}

interface Page {
  flags: number;
  granule: number;
  serial: number;
  /** The page's header length, and its body cut into packet parts (`ends`: the part ends its packet). */
  headerBytes: number;
  bodyBytes: number;
  parts: { size: number; ends: boolean }[];
  /** Index of the last part that ends a packet (-1: none). */
  lastEnd: number;
  /** Parts already taken (an Opus page's header is gone from the buffer once its first part is taken). */
  next: number;
}

export class OggRepage {
  private buf = Buffer.alloc(0);
  private mode: 'start' | 'pages' | 'raw' = 'start';
  private page: Page | undefined;
  private readonly streams = new Map<number, Stream>();

  /** Ogg pages for the bytes so far. Throws AudioDecodeError on a packet no Ogg stream would hold. */
  push(bytes: Uint8Array): Buffer[] {
    if (this.mode === 'raw') return [Buffer.from(bytes)];
    this.buf = this.buf.length ? Buffer.concat([this.buf, bytes]) : Buffer.from(bytes);
    if (this.mode === 'start') {
      if (this.buf.length < 4) return [];
      if (!this.buf.subarray(0, 4).equals(CAPTURE)) {
        this.mode = 'raw';
        const all = this.buf;
        this.buf = Buffer.alloc(0);
        return [all];
      }
      this.mode = 'pages';
    }
    const out: Buffer[] = [];
    while (this.step(out));
    return out;
  }

  /** The end of the stream: an unfinished page that passes unchanged is passed on as it is (an Opus packet cut short is
   * dropped). */
  end(): Buffer[] {
    const rest = this.buf;
    this.buf = Buffer.alloc(0);
    if (this.mode !== 'pages') return rest.length ? [rest] : [];
    const page = this.page;
    return page && !this.streams.get(page.serial)?.opus && page.next === 0 && rest.length ? [rest] : [];
  }

  /** One step of reading: false when more bytes are needed. */
  private step(out: Buffer[]): boolean {
    if (!this.page) return this.readHeader();
    const page = this.page;
    const stream = this.streams.get(page.serial);
    if (!stream || !stream.opus) {
      // Unchanged, once whole.
      const total = page.headerBytes + page.bodyBytes;
      if (this.buf.length < total) return false;
      out.push(Buffer.from(this.buf.subarray(0, total)));
      this.buf = this.buf.subarray(total);
      this.page = undefined;
      return true;
    }
    if (page.next === 0 && page.headerBytes) {
      this.buf = this.buf.subarray(page.headerBytes);
      page.headerBytes = 0;
      // A continued page whose packet start was never seen (or a lost page): its first part is dropped.
      if (!(page.flags & CONTINUED) && stream.partialBytes) this.dropPartial(stream);
    }
    while (page.next < page.parts.length) {
      const part = page.parts[page.next]!;
      if (this.buf.length < part.size) return false;
      const bytes = Buffer.from(this.buf.subarray(0, part.size));
      this.buf = this.buf.subarray(part.size);
      const orphan = page.next === 0 && page.flags & CONTINUED && !stream.partialBytes;
      const index = page.next++;
      if (orphan) continue;
      stream.partial.push(bytes);
      stream.partialBytes += bytes.length;
      if (stream.partialBytes > MAX_PACKET) throw new AudioDecodeError('Audio could not be decoded as ogg.', 'ogg repage: packet over 1 MiB');
      if (part.ends) out.push(this.packet(stream, page, index === page.lastEnd));
    }
    this.page = undefined;
    return true;
  }

  /** Parse the next page header (skipping bytes up to its capture pattern): false when more bytes are needed. */
  private readHeader(): boolean {
    const at = this.buf.indexOf(CAPTURE);
    if (at < 0) {
      this.buf = this.buf.subarray(Math.max(0, this.buf.length - 3));
      return false;
    }
    if (at > 0) this.buf = this.buf.subarray(at);
    const b = this.buf;
    if (b.length < 27) return false;
    if (b[4] !== 0) {
      this.buf = b.subarray(1);
      return true;
    }
    const segments = b[26]!;
    if (b.length < 27 + segments) return false;
    const parts: Page['parts'] = [];
    let size = 0;
    for (let i = 0; i < segments; i++) {
      const lacing = b[27 + i]!;
      size += lacing;
      if (lacing < 255) {
        parts.push({ size, ends: true });
        size = 0;
      }
    }
    if (size || !segments) parts.push({ size, ends: false });
    const page: Page = {
      flags: b[5]!,
      granule: Number(b.readBigInt64LE(6)),
      serial: b.readUInt32LE(14),
      headerBytes: 27 + segments,
      bodyBytes: parts.reduce((a, p) => a + p.size, 0),
      parts,
      lastEnd: parts.length - 1 - (parts.at(-1)?.ends ? 0 : 1),
      next: 0,
    };
    if (page.flags & BOS) {
      // A new logical stream: Opus when its first packet is OpusHead (alone on its page), which needs the whole page.
      if (b.length < page.headerBytes + page.bodyBytes) return false;
      const first = b.subarray(page.headerBytes, page.headerBytes + (parts[0]?.size ?? 0));
      this.streams.set(page.serial, {
        opus: first.length >= 8 && first.toString('latin1', 0, 8) === 'OpusHead',
        writer: new OggPageWriter(page.serial),
        packets: 0,
        granule: 0,
        partial: [],
        partialBytes: 0,
      });
    }
    this.page = page;
    return true;
  }

  /** The packet just completed, on a page of its own. */
  private packet(stream: Stream, page: Page, endsPage: boolean): Buffer {
    const packet = stream.partial.length === 1 ? stream.partial[0]! : Buffer.concat(stream.partial);
    this.dropPartial(stream);
    const header = stream.packets++ < 2;
    if (!header) stream.granule += opusSamples(packet);
    if (endsPage && page.granule !== -1) stream.granule = page.granule;
    const flags = (stream.packets === 1 ? BOS : 0) | (endsPage ? page.flags & EOS : 0);
    return stream.writer.page(packet, flags, header ? 0 : stream.granule);
  }

  private dropPartial(stream: Stream): void {
    stream.partial = [];
    stream.partialBytes = 0;
  }
}
