// FLAC rewrapped as Ogg FLAC on real ffmpeg-encoded FLAC: ffmpeg decodes the pages to exactly what it decodes from
// the original, however the input is split; granule positions count the samples; non-FLAC input is refused.
import { describe, expect, it } from 'vitest';
import { ffmpegPipe as ffmpeg, pcmOf as pcm, rewrapAll } from '../../test/fixtures/rewrap.js';
import { FlacToOgg } from './flac-ogg.js';
import { AudioDecodeError } from './pcm-source.js';

const flac = (rate: number, channels: number, extra: string[] = []) =>
  ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=0.7`, '-ac', String(channels), ...extra, '-f', 'flac', 'pipe:1']);
const rewrap = (bytes: Buffer, pieces: number[]) => rewrapAll(new FlacToOgg(), bytes, pieces);

/** Granule position of the last Ogg page. */
function lastGranule(ogg: Buffer): bigint {
  return ogg.readBigInt64LE(ogg.lastIndexOf('OggS') + 6);
}

describe('FlacToOgg', () => {
  it.each<[string, number, number, string[]]>([
    ['44.1 kHz stereo', 44_100, 2, []],
    ['16 kHz mono, 1000-sample frames (16-bit block size field)', 16_000, 1, ['-frame_size', '1000']],
    ['8 kHz mono, 160-sample frames (8-bit block size field)', 8000, 1, ['-frame_size', '160']],
  ])('%s: ffmpeg decodes the pages as it decodes the FLAC', async (_name, rate, channels, extra) => {
    const original = await flac(rate, channels, extra);
    const expected = await pcm(original, 'flac');
    for (const pieces of [[original.length], [4096], [1, 2, 3, 500, 77]]) {
      const ogg = rewrap(original, pieces);
      expect(ogg.subarray(0, 4).toString()).toBe('OggS');
      expect(lastGranule(ogg)).toBe(BigInt(Math.round(rate * 0.7)));
      expect((await pcm(ogg, 'ogg')).equals(expected)).toBe(true);
    }
  });

  it('passes a frame on as soon as its last byte arrives, fed byte by byte', async () => {
    const original = await flac(16_000, 1, ['-frame_size', '1000']);
    // Where the first frame starts: after "fLaC" and the metadata blocks.
    let first = 4;
    for (let last = 0; !last; first += 4 + original.readUIntBE(first + 1, 3)) last = original[first]! & 0x80;
    const r = new FlacToOgg();
    const pages: Buffer[] = [];
    let n = 0;
    while (pages.length < 3) pages.push(...r.push(original.subarray(n, ++n)));
    const page = pages[2]!;
    const frameLength = [...page.subarray(27, 27 + page[26]!)].reduce((a, b) => a + b, 0);
    // The page holds exactly the first frame, and it came out with the frame's last byte.
    expect(page.subarray(27 + page[26]!).equals(original.subarray(first, first + frameLength))).toBe(true);
    expect(original.subarray(first + frameLength, first + frameLength + 2)).toEqual(Buffer.from([0xff, 0xf8]));
    expect(n).toBe(first + frameLength);
    // Every later frame too: the whole stream fed byte by byte decodes as the original.
    while (n < original.length) pages.push(...r.push(original.subarray(n, ++n)));
    pages.push(...r.end());
    expect((await pcm(Buffer.concat(pages), 'ogg')).equals(await pcm(original, 'flac'))).toBe(true);
  });

  it('refuses a stream that is not FLAC', () => {
    const r = new FlacToOgg();
    expect(() => r.push(Buffer.from('OggS\x00\x02\x00\x00'))).toThrow(AudioDecodeError);
    const cut = new FlacToOgg();
    cut.push(Buffer.from('fLaC\x00\x00\x00\x22'));
    expect(() => cut.end()).toThrow(/could not be decoded as flac/);
  });
});
