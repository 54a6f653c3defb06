// The multichannel live source on real audio written by ffmpeg: a stereo file whose channels carry different tones,
// split in-process (raw, WAV) and through ffmpeg (Ogg Opus, MP3), each channel checked against ffmpeg's own decoding of
// that channel; and one channel refused as soon as the header says so.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createChannelSource, type ChannelPcmSource } from './live-channels.js';
import type { RawSpec } from './live-pcm.js';

const execFileP = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'parlance-live-channels-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileNo = 0;
/** 2 s of stereo, 440 Hz on the left and 660 Hz on the right (or 440 Hz mono), encoded by the output options `out`. */
async function stereo(out: string[], ext: string, channels = 2): Promise<Buffer> {
  const file = path.join(dir, `${fileNo++}.${ext}`);
  const inputs = [
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000:duration=2',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=660:sample_rate=48000:duration=2',
  ];
  const merge = channels === 2 ? ['-filter_complex', '[0][1]join=inputs=2:channel_layout=stereo'] : ['-map', '0'];
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', ...inputs, ...merge, ...out, '-y', file]);
  return readFileSync(file);
}

/** Zero crossings per second of 16 kHz s16le: twice a pure tone's frequency. */
function crossings(pcm: Buffer): number {
  const v = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
  let n = 0;
  for (let i = 1; i < v.length; i++) if (v[i - 1]! < 0 !== v[i]! < 0) n++;
  return n / (v.length / 16_000);
}

/** Write `bytes` in 4 KiB pieces, end, and collect each channel's PCM (or the error). */
async function feed(format: string, bytes: Buffer, raw?: RawSpec): Promise<{ channels: Buffer[]; error?: Error }> {
  const source: ChannelPcmSource = createChannelSource(format, raw, { maxChannels: 8 });
  const parts: Buffer[][] = [];
  const consumed = (async () => {
    for await (const item of source.output) if (Array.isArray(item)) parts.push(item);
  })();
  for (let off = 0; off < bytes.length; off += 4096) source.write(bytes.subarray(off, off + 4096));
  source.end();
  try {
    await consumed;
  } catch (err) {
    return { channels: [], error: err as Error };
  }
  const count = parts[0]?.length ?? 0;
  return { channels: Array.from({ length: count }, (_, c) => Buffer.concat(parts.map((p) => p[c]!))) };
}

describe('createChannelSource', () => {
  const cases: [string, () => Promise<Buffer>, RawSpec?][] = [
    ['raw pcm_s16le 48 kHz', () => stereo(['-f', 's16le', '-ar', '48000'], 'raw'), { format: 'pcm_s16le', sampleRate: 48_000, channels: 2 }],
    ['wav', () => stereo(['-c:a', 'pcm_s16le'], 'wav')],
    ['auto (wav)', () => stereo(['-c:a', 'pcm_s16le'], 'wav')],
    ['ogg', () => stereo(['-c:a', 'libopus', '-b:a', '96k'], 'ogg')],
    ['mp3', () => stereo(['-c:a', 'libmp3lame', '-b:a', '128k'], 'mp3')],
  ];
  for (const [name, make, raw] of cases) {
    it(`keeps the channels of ${name} apart, each 16 kHz, of one length`, async () => {
      const format = raw ? raw.format : name.startsWith('auto') ? 'auto' : name;
      const { channels, error } = await feed(format, await make(), raw);
      expect(error).toBeUndefined();
      expect(channels).toHaveLength(2);
      expect(channels[0]!.length).toBe(channels[1]!.length);
      expect(Math.abs(channels[0]!.length / 2 / 16_000 - 2)).toBeLessThan(0.1);
      expect(Math.abs(crossings(channels[0]!) - 880)).toBeLessThan(30);
      expect(Math.abs(crossings(channels[1]!) - 1320)).toBeLessThan(30);
    });
  }

  it('refuses a mono container as soon as its header is read, naming enable_multichannel', async () => {
    for (const [format, out, ext] of [
      ['wav', ['-c:a', 'pcm_s16le'], 'wav'],
      ['ogg', ['-c:a', 'libopus'], 'ogg'],
    ] as const) {
      const { error } = await feed(format, await stereo([...out], ext, 1));
      expect(error?.message).toBe('enable_multichannel needs audio with two or more channels; this audio has one channel.');
    }
  });
});
