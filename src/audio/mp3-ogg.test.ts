// MPEG audio rewrapped as OGM-in-Ogg on real ffmpeg-encoded streams: ffmpeg decodes the pages to exactly what it
// decodes from the original (minus the encoder delay a LAME tag names, which the caller drops), however the input is
// split; each frame is passed on with its last byte; input with no MPEG audio is refused.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPipe as ffmpeg, pcmOf as pcm, rewrapAll } from '../../test/fixtures/rewrap.js';
import { mpegHeader, Mp3ToOgg } from './mp3-ogg.js';
import { AudioDecodeError } from './pcm-source.js';

/** 0.7 s of a tone encoded by `codec` options, written to a pipe (as a live encoder does: no Xing frame). */
const encode = (rate: number, channels: number, codec: string[]) =>
  ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=0.7`, '-ac', String(channels), ...codec, 'pipe:1']);
const rewrap = (bytes: Buffer, pieces: number[], r = new Mp3ToOgg()) => rewrapAll(r, bytes, pieces);

describe('Mp3ToOgg', () => {
  it.each<[string, number, number, string[]]>([
    ['MPEG-1 layer III, 44.1 kHz stereo 128 kbit/s', 44_100, 2, ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3']],
    ['MPEG-2 layer III, 16 kHz mono 48 kbit/s, with an ID3 tag', 16_000, 1, ['-c:a', 'libmp3lame', '-b:a', '48k', '-f', 'mp3']],
    ['MPEG-2.5 layer III, 8 kHz mono 16 kbit/s', 8000, 1, ['-c:a', 'libmp3lame', '-b:a', '16k', '-id3v2_version', '0', '-f', 'mp3']],
    ['MPEG-1 layer II, 48 kHz stereo', 48_000, 2, ['-c:a', 'mp2', '-b:a', '192k', '-f', 'mp2']],
  ])('%s: ffmpeg decodes the pages as it decodes the stream', async (_name, rate, channels, codec) => {
    const original = await encode(rate, channels, codec);
    const expected = await pcm(original, 'mp3');
    expect(expected.length).toBeGreaterThan(0.7 * rate * 2 * 0.9);
    for (const pieces of [[original.length], [417], [1, 2, 3, 500, 77]]) {
      const r = new Mp3ToOgg();
      const ogg = rewrap(original, pieces, r);
      expect(ogg.subarray(0, 4).toString()).toBe('OggS');
      expect(r.leadSeconds).toBe(0);
      expect((await pcm(ogg, 'ogg')).equals(expected)).toBe(true);
    }
  });

  it('a file with a Xing/LAME frame: the frame is dropped and its encoder delay reported, as ffmpeg trims it', async () => {
    const withXing = await xingFile();
    expect(withXing.includes('Info')).toBe(true);
    const expected = await pcm(withXing, 'mp3');
    const r = new Mp3ToOgg();
    const out = await pcm(rewrap(withXing, [999], r), 'ogg');
    // LAME's 576 + 529 of the decoder: ffmpeg's mp3 demuxer skips the same.
    expect(r.startPadding).toBe(1105);
    const lead = Math.round(r.leadSeconds * 16_000) * 2;
    expect(out.subarray(lead, lead + expected.length - 4000).equals(expected.subarray(0, expected.length - 4000))).toBe(true);
  });

  it('passes each frame on with its last byte (the first once the next header follows it)', async () => {
    const original = await encode(16_000, 1, ['-c:a', 'libmp3lame', '-b:a', '48k', '-id3v2_version', '0', '-f', 'mp3']);
    const first = mpegHeader(original, 0)!;
    const second = mpegHeader(original, first.length)!;
    const r = new Mp3ToOgg();
    const frames: number[] = [];
    for (let n = 1; n <= first.length + second.length; n++) {
      const pages = r.push(original.subarray(n - 1, n));
      // Header pages (stream header, comments) come with the first frame; count the data pages.
      if (pages.length) frames.push(n);
    }
    expect(frames).toEqual([first.length + 4, first.length + second.length]);
  });

  it('refuses a stream with no MPEG audio in it, saying why apart from the message', () => {
    const garbage = Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 251));
    const r = new Mp3ToOgg();
    expect(r.push(garbage)).toEqual([]);
    const err = (() => {
      try {
        r.end();
      } catch (e) {
        return e as AudioDecodeError;
      }
    })();
    expect(err).toBeInstanceOf(AudioDecodeError);
    expect(err!.message).toBe('Audio could not be decoded as mp3.');
    expect(err!.detail).toMatch(/no MPEG audio frame/);
    // Random bytes: candidate headers never chain into frames, and after 64 KiB the stream is refused while it runs.
    const noise = Buffer.alloc(70_000);
    for (let i = 0, x = 1; i < noise.length; i++) noise[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    expect(() => new Mp3ToOgg().push(noise)).toThrow(AudioDecodeError);
  });
});

/** A 0.7 s tone as an mp3 file with its Xing/Info + LAME frame (ffmpeg writes it to seekable outputs only). */
async function xingFile(): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'parlance-mp3-'));
  try {
    const file = path.join(dir, 'a.mp3');
    await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=16000:duration=0.7', '-b:a', '48k', '-y', file]);
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
