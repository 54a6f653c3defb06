// Live PCM sources on real audio written by ffmpeg: WAV and raw formats converted in-process (checked against ffmpeg's
// own conversion, and for independence from how the bytes are split), compressed containers through ffmpeg at
// real-time pace (first PCM before the stream ends), format sniffing for `auto`, and the errors for bad input.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { AudioDecodeError, createPcmSource, type PcmSource, type RawSpec } from './live-pcm.js';

const execFileP = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'parlance-live-pcm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileNo = 0;
/** ffmpeg `args` (input and output options) to a file, read back. */
async function ffmpeg(args: string[], ext: string): Promise<Buffer> {
  const out = path.join(dir, `${fileNo++}.${ext}`);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', ...args, '-y', out]);
  return readFileSync(out);
}
/** A 440 Hz tone of `seconds`, encoded by the output options `out`. */
const tone = (seconds: number, rate: number, out: string[], ext: string) =>
  ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=${seconds}`, ...out], ext);
/** What ffmpeg makes of `bytes` (input options `inArgs`): 16 kHz mono s16le. */
async function ffmpegPcm(bytes: Buffer, inArgs: string[], ext: string): Promise<Buffer> {
  const src = path.join(dir, `${fileNo++}.${ext}`);
  writeFileSync(src, bytes);
  return ffmpeg([...inArgs, '-i', src, '-f', 's16le', '-ac', '1', '-ar', '16000'], 'raw');
}

interface Run {
  pcm: Buffer;
  /** 'pcm' / 'mark' / 'end-written' in the order they happened. */
  events: string[];
  error?: Error;
}

/**
 * Write `bytes` into a new source in `pieces` (sizes, cycled), pausing `paceMs` between writes, then end it; collect
 * everything that comes out.
 */
async function feed(format: string, bytes: Buffer, opts: { raw?: RawSpec; pieces?: number[]; paceMs?: number; source?: PcmSource } = {}): Promise<Run> {
  const source = opts.source ?? createPcmSource(format, opts.raw);
  const parts: Buffer[] = [];
  const events: string[] = [];
  const consumed = (async () => {
    for await (const item of source.output) {
      if (Buffer.isBuffer(item)) {
        parts.push(item);
        if (events.at(-1) !== 'pcm') events.push('pcm');
      } else {
        events.push('mark');
        item.mark();
      }
    }
  })();
  const pieces = opts.pieces ?? [bytes.length];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = pieces[i % pieces.length]!;
    source.write(bytes.subarray(at, at + n));
    at += n;
    if (opts.paceMs) await new Promise((r) => setTimeout(r, opts.paceMs));
  }
  events.push('end-written');
  source.end();
  let error: Error | undefined;
  await consumed.catch((e: Error) => (error = e));
  return { pcm: Buffer.concat(parts), events, error };
}

const samples = (pcm: Buffer) => new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + (pcm.length & ~1)));

/** Frequency of a tone in 16 kHz PCM, from its first and last zero crossing (interpolated); 50 ms edges (codec start-up) skipped. */
function toneHz(pcm: Buffer): number {
  const x = samples(pcm);
  const at: number[] = [];
  for (let i = 801; i < x.length - 800; i++) if (x[i - 1]! < 0 !== x[i]! < 0) at.push(i - 1 + x[i - 1]! / (x[i - 1]! - x[i]!));
  return (at.length - 1) / 2 / ((at.at(-1)! - at[0]!) / 16_000);
}

function correlation(a: Buffer, b: Buffer): number {
  const x = samples(a);
  const y = samples(b);
  let xy = 0;
  let xx = 0;
  let yy = 0;
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    xy += x[i]! * y[i]!;
    xx += x[i]! ** 2;
    yy += y[i]! ** 2;
  }
  return xy / Math.sqrt(xx * yy);
}

/** Seeded piece sizes: 1 byte up to 5000. */
function randomPieces(seed: number): number[] {
  let s = seed;
  return Array.from({ length: 64 }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return [1, 2, 3, 5, 44, 100, 1023, 5000][(s >>> 16) % 8]!;
  });
}

describe('WAV, in-process', () => {
  const layouts: [string, string[]][] = [
    ['mono s16', ['-ac', '1', '-c:a', 'pcm_s16le']],
    ['stereo s24', ['-ac', '2', '-c:a', 'pcm_s24le']],
    ['stereo f32', ['-ac', '2', '-c:a', 'pcm_f32le']],
  ];
  const cases = [8000, 16_000, 22_050, 44_100, 48_000].flatMap((rate) => layouts.map(([name, args]) => [rate, name, args] as const));

  it.each(cases)('%i Hz %s: same PCM for any split and streamed sizes, matching ffmpeg', async (rate, _name, args) => {
    const seconds = 0.3;
    const wav = await tone(seconds, rate, [...args, '-f', 'wav'], 'wav'); // ffmpeg adds a LIST chunk before the data
    expect(wav.includes('LIST')).toBe(true);
    const whole = await feed('auto', wav);
    expect(whole.error).toBeUndefined();
    expect(Math.abs(whole.pcm.length / 2 - seconds * 16_000)).toBeLessThanOrEqual(2);
    expect(toneHz(whole.pcm)).toBeCloseTo(440, 0);
    expect(correlation(whole.pcm, await ffmpegPcm(wav, [], 'wav'))).toBeGreaterThan(0.999);
    for (const pieces of [[1], randomPieces(rate), randomPieces(rate + 1)]) expect((await feed('wav', wav, { pieces })).pcm.equals(whole.pcm)).toBe(true);
    const dataSizeAt = wav.indexOf('data') + 4;
    for (const size of [0, 0xffffffff]) {
      const streamed = Buffer.from(wav);
      streamed.writeUInt32LE(size, dataSizeAt);
      streamed.writeUInt32LE(0xffffffff, 4);
      expect((await feed('auto', streamed, { pieces: randomPieces(size) })).pcm.equals(whole.pcm)).toBe(true);
    }
  });

  it('RF64 and WAVE_FORMAT_EXTENSIBLE headers', async () => {
    const rf64 = await tone(0.3, 44_100, ['-ac', '2', '-rf64', 'always', '-f', 'wav'], 'wav');
    expect(rf64.subarray(0, 4).toString()).toBe('RF64');
    const ext = await tone(0.3, 48_000, ['-ac', '3', '-c:a', 'pcm_s32le', '-f', 'wav'], 'wav');
    for (const wav of [rf64, ext]) {
      const r = await feed('auto', wav, { pieces: randomPieces(7) });
      expect(r.error).toBeUndefined();
      expect(toneHz(r.pcm)).toBeCloseTo(440, 0);
    }
  });

  it('a WAV codec decoded by ffmpeg (IMA ADPCM) gets the bytes already received replayed', async () => {
    const wav = await tone(0.5, 22_050, ['-c:a', 'adpcm_ima_wav', '-f', 'wav'], 'wav');
    const expected = await ffmpegPcm(wav, [], 'wav');
    for (const format of ['auto', 'wav']) {
      const r = await feed(format, wav, { pieces: [7, 30, 1000] });
      expect(r.error).toBeUndefined();
      expect(r.pcm.length).toBeGreaterThan(15_000);
      expect(r.pcm.equals(expected)).toBe(true);
    }
  });

  it('markers come out in order, also when written before the format is known', async () => {
    const wav = await tone(0.2, 16_000, ['-f', 'wav'], 'wav');
    const source = createPcmSource('auto', undefined);
    source.write(wav.subarray(0, 4));
    const early = source.mark();
    source.write(wav.subarray(4, 2000));
    const middle = source.mark();
    const r = await feed('auto', wav.subarray(2000), { source });
    await Promise.all([early, middle]);
    // (The writes above were synchronous, so 'end-written' is logged before the consumer ran.)
    expect(r.events.filter((e) => e !== 'end-written')).toEqual(['mark', 'pcm', 'mark', 'pcm']);
    expect(r.pcm.length / 2).toBe(3200);
  });
});

describe('raw formats, in-process', () => {
  it.each(['pcm_s16be', 'pcm_u8', 'pcm_s8', 'pcm_u16le', 'pcm_s24le', 'pcm_u24be', 'pcm_s32be', 'pcm_f32be', 'pcm_f64le', 'mulaw', 'alaw'])(
    '%s at 16 kHz gives what ffmpeg gives (±1)',
    async (format) => {
      const demuxer = format.replace(/^pcm_/, '');
      const raw = await tone(0.2, 16_000, ['-ac', '1', '-f', demuxer], 'raw');
      const ours = samples((await feed(format, raw, { raw: { format, sampleRate: 16_000, channels: 1 }, pieces: [1, 5, 333] })).pcm);
      const theirs = samples(await ffmpegPcm(raw, ['-f', demuxer, '-ar', '16000', '-ac', '1'], 'raw'));
      expect(ours.length).toBe(theirs.length);
      expect(Math.max(...ours.map((v, i) => Math.abs(v - theirs[i]!)))).toBeLessThanOrEqual(1);
    },
  );

  it('s16le and f32le at rates the old converter could not take (44.1 kHz stereo, 11.025 kHz)', async () => {
    for (const [format, rate, channels] of [
      ['pcm_s16le', 44_100, 2],
      ['pcm_f32le', 11_025, 1],
    ] as const) {
      const raw = await tone(0.5, rate, ['-ac', String(channels), '-f', format.slice(4)], 'raw');
      const r = await feed(format, raw, { raw: { format, sampleRate: rate, channels }, pieces: randomPieces(rate) });
      expect(Math.abs(r.pcm.length / 2 - 8000)).toBeLessThanOrEqual(2);
      expect(toneHz(r.pcm)).toBeCloseTo(440, 0);
    }
  });
});

describe('compressed formats through ffmpeg', () => {
  const formats: [string, string, string[], string][] = [
    ['mp3', 'mp3', ['-c:a', 'libmp3lame', '-f', 'mp3'], 'mp3'],
    // A live Ogg writer may flush a page a packet; a file's pages hold up to a second (ffmpeg's default), repaginated.
    ['ogg/opus, 20 ms pages', 'ogg', ['-c:a', 'libopus', '-page_duration', '20000', '-f', 'ogg'], 'ogg'],
    ['ogg/opus, 1 s pages', 'ogg', ['-c:a', 'libopus', '-f', 'ogg'], 'ogg'],
    ['webm', 'webm', ['-c:a', 'libopus', '-f', 'webm'], 'webm'],
    ['flac', 'flac', ['-f', 'flac'], 'flac'],
  ];

  describe.concurrent('at real-time pace, the first PCM arrives before the stream ends', () => {
    it.each(formats)(
      '%s (auto and named)',
      async (_label, name, args, ext) => {
        const seconds = 3;
        const bytes = await tone(seconds, 48_000, args, ext);
        const pieces = [Math.ceil(bytes.length / (seconds * 10))]; // 100 ms of audio a write
        for (const format of ['auto', name]) {
          const r = await feed(format, bytes, { pieces, paceMs: 100 });
          expect(r.error).toBeUndefined();
          expect(r.events.indexOf('pcm')).toBeGreaterThanOrEqual(0);
          expect(r.events.indexOf('pcm')).toBeLessThan(r.events.indexOf('end-written'));
          expect(Math.abs(r.pcm.length / 2 / 16_000 - seconds)).toBeLessThan(0.1);
        }
      },
      30_000,
    );
  });

  it.each<[string, string[], string]>([
    ['ogg/vorbis', ['-c:a', 'libvorbis', '-f', 'ogg'], 'ogg'],
    ['aac (ADTS)', ['-c:a', 'aac', '-f', 'adts'], 'aac'],
    ['aiff', ['-f', 'aiff'], 'aiff'],
    ['asf (WMA)', ['-c:a', 'wmav2', '-f', 'asf'], 'asf'],
  ])('%s is recognised by auto', async (_name, args, ext) => {
    const r = await feed('auto', await tone(1, 44_100, args, ext), { pieces: [4096] });
    expect(r.error).toBeUndefined();
    expect(Math.abs(r.pcm.length / 2 / 16_000 - 1)).toBeLessThan(0.1);
    expect(toneHz(r.pcm)).toBeCloseTo(440, 0);
  });
});

describe('bad input', () => {
  const clean = (e: Error | undefined) => {
    expect(e).toBeInstanceOf(AudioDecodeError);
    expect(e!.message).not.toMatch(/0x[0-9a-f]{4,}|@|pipe:|\/|\[/);
    return e as AudioDecodeError;
  };

  it('bytes that are no known format, with auto', async () => {
    const e = clean((await feed('auto', Buffer.alloc(20_000, 7))).error);
    expect(e.message).toBe('Audio could not be decoded in any known format.');
    expect(e.detail).not.toBe('');
  });

  it('garbage declared as mp3 or ogg names the format, and keeps ffmpeg stderr apart', async () => {
    const garbage = Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 251));
    const mp3 = clean((await feed('mp3', garbage)).error);
    expect(mp3.message).toBe('Audio could not be decoded as mp3.');
    expect(mp3.detail).toMatch(/mp3/);
    expect(clean((await feed('ogg', garbage)).error).message).toBe('Audio could not be decoded as ogg.');
  });

  it('a stream detected as webm that breaks off into garbage', async () => {
    const e = clean((await feed('auto', Buffer.concat([Buffer.from('1a45dfa3', 'hex'), Buffer.alloc(5000, 0x42)]))).error);
    expect(e.message).toBe('Audio could not be decoded as webm (detected from its first bytes).');
  });

  it.each<[string, string, Buffer]>([
    ['RIFF then garbage (auto)', 'auto', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(100, 0x81)])],
    ['no RIFF header (wav)', 'wav', Buffer.alloc(100, 7)],
    ['a truncated header (wav)', 'wav', Buffer.from('RIFF\x00\x00\x00\x00WAVEfmt ', 'latin1')],
  ])('%s is not a valid WAV stream', async (_name, format, bytes) => {
    expect(clean((await feed(format, bytes, { pieces: [1] })).error).message).toMatch(/not a valid WAV stream/);
  });

  it('an empty stream ends without output or error', async () => {
    for (const format of ['auto', 'wav'])
      expect(await feed(format, Buffer.alloc(0))).toEqual({ pcm: Buffer.alloc(0), events: ['end-written'], error: undefined });
  });
});
