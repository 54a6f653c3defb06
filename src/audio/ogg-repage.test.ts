// Ogg Opus repaginated a packet per page, on real ffmpeg-encoded streams: ffmpeg decodes the pages to exactly what it
// decodes from the original, however the input is split and whatever the Opus frame size; each packet is passed on
// with its last byte, long before its page ends; other Ogg streams and non-Ogg bytes pass unchanged.
import { describe, expect, it } from 'vitest';
import { ffmpegPipe as ffmpeg, pcmOf as pcm, rewrapAll } from '../../test/fixtures/rewrap.js';
import { OggRepage, opusSamples } from './ogg-repage.js';

/** `seconds` of a tone encoded by `codec` options into Ogg (ffmpeg's default pages: up to 1 s each). */
const encode = (seconds: number, rate: number, channels: number, codec: string[]) =>
  ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=${seconds}`, '-ac', String(channels), ...codec, '-f', 'ogg', 'pipe:1']);
const rewrap = (bytes: Buffer, pieces: number[]) => rewrapAll(new OggRepage(), bytes, pieces);

interface PageInfo {
  granule: bigint;
  flags: number;
  /** Byte offset after each packet that ends on this page. */
  packetEnds: number[];
}

function pagesOf(ogg: Buffer): PageInfo[] {
  const pages: PageInfo[] = [];
  for (let off = 0; off < ogg.length;) {
    expect(ogg.toString('latin1', off, off + 4)).toBe('OggS');
    const segments = ogg[off + 26]!;
    let at = off + 27 + segments;
    const packetEnds: number[] = [];
    for (let i = 0; i < segments; i++) {
      at += ogg[off + 27 + i]!;
      if (ogg[off + 27 + i]! < 255) packetEnds.push(at);
    }
    pages.push({ granule: ogg.readBigInt64LE(off + 6), flags: ogg[off + 5]!, packetEnds });
    off = at;
  }
  return pages;
}

describe('OggRepage', () => {
  it.each<[string, number, number, string[]]>([
    ['48 kHz stereo, 20 ms frames', 48_000, 2, ['-c:a', 'libopus']],
    ['16 kHz mono, 2.5 ms frames', 16_000, 1, ['-c:a', 'libopus', '-frame_duration', '2.5']],
    ['16 kHz mono, 10 ms frames', 16_000, 1, ['-c:a', 'libopus', '-frame_duration', '10']],
    ['24 kHz mono, 60 ms frames (several frames a packet)', 24_000, 1, ['-c:a', 'libopus', '-frame_duration', '60']],
    ['8 kHz mono at 6 kbit/s (SILK)', 8000, 1, ['-c:a', 'libopus', '-b:a', '6k', '-application', 'voip']],
  ])('%s: ffmpeg decodes the pages as it decodes the original', async (_name, rate, channels, codec) => {
    const original = await encode(2.3, rate, channels, codec);
    const expected = await pcm(original, 'ogg');
    expect(expected.length).toBeGreaterThan(2.3 * 48_000 * 2 * 0.9);
    const originalPages = pagesOf(original);
    for (const pieces of [[original.length], [4096], [1, 2, 3, 500, 77]]) {
      const out = rewrap(original, pieces);
      const pages = pagesOf(out);
      // One packet a page, the granules rising to the original's last (its end trimming kept), EOS on the last page.
      expect(pages.every((p) => p.packetEnds.length === 1)).toBe(true);
      expect(pages.length).toBe(originalPages.reduce((n, p) => n + p.packetEnds.length, 0));
      for (let i = 3; i < pages.length; i++) expect(pages[i]!.granule).toBeGreaterThan(pages[i - 1]!.granule);
      expect(pages.at(-1)!.granule).toBe(originalPages.at(-1)!.granule);
      expect(pages.at(-1)!.flags & 0x04).toBe(0x04);
      expect((await pcm(out, 'ogg')).equals(expected)).toBe(true);
    }
  });

  it('passes each packet on with its last byte, not with the end of its page', async () => {
    const original = await encode(1.5, 16_000, 1, ['-c:a', 'libopus']);
    const ends = pagesOf(original).flatMap((p) => p.packetEnds);
    const r = new OggRepage();
    const outAt: number[] = [];
    for (let n = 1; n <= original.length; n++) for (const _ of r.push(original.subarray(n - 1, n))) outAt.push(n);
    expect(r.end()).toEqual([]);
    expect(outAt).toEqual(ends);
    // The audio pages hold up to a second (50 packets): most packets come out well before their page is complete.
    expect(pagesOf(original)[2]!.packetEnds.length).toBeGreaterThan(40);
  });

  it('skips bytes between pages, as ffmpeg does', async () => {
    const original = await encode(1, 16_000, 1, ['-c:a', 'libopus', '-page_duration', '100000']);
    const at = pagesOf(original)
      .slice(0, 4)
      .reduce((_, p) => p.packetEnds.at(-1)!, 0);
    const junk = Buffer.concat([original.subarray(0, at), Buffer.from('junk!OggSjunk', 'latin1'), original.subarray(at)]);
    expect((await pcm(rewrap(junk, [333]), 'ogg')).equals(await pcm(original, 'ogg'))).toBe(true);
  });

  it('passes an Ogg Vorbis stream, and bytes that are not Ogg, unchanged', async () => {
    const vorbis = await encode(1, 16_000, 1, ['-c:a', 'libvorbis']);
    for (const pieces of [[vorbis.length], [1, 2, 3, 500, 77]]) expect(rewrap(vorbis, pieces).equals(vorbis)).toBe(true);
    const garbage = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251));
    expect(rewrap(garbage, [3, 1000]).equals(garbage)).toBe(true);
    expect(rewrap(Buffer.from('Og'), [1]).equals(Buffer.from('Og'))).toBe(true);
  });

  it('counts the samples of each Opus TOC configuration and frame count', () => {
    expect(opusSamples(Buffer.from([(1 << 3) | 0]))).toBe(960); // SILK NB 20 ms, one frame
    expect(opusSamples(Buffer.from([(3 << 3) | 1]))).toBe(2 * 2880); // SILK NB 60 ms, two frames
    expect(opusSamples(Buffer.from([(13 << 3) | 2]))).toBe(2 * 960); // Hybrid 20 ms, two frames
    expect(opusSamples(Buffer.from([(16 << 3) | 3, 5]))).toBe(5 * 120); // CELT 2.5 ms, five frames
    expect(opusSamples(Buffer.from([(31 << 3) | 0]))).toBe(960); // CELT 20 ms
    expect(opusSamples(Buffer.alloc(0))).toBe(0);
  });
});
