import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioDecodeError, decodeToBuffer, decodeToPcm, firstErrorLine } from './decode.js';

const SECONDS = 3;
const EXPECTED_SAMPLES = SECONDS * 16_000;
let dir: string;

/** Encode a stereo test tone (different pitch per channel) with ffmpeg itself. */
function makeTone(name: string, rate: number, codecArgs: string[]): string {
  const out = join(dir, name);
  execFileSync('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=${rate}:duration=${SECONDS}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=660:sample_rate=${rate}:duration=${SECONDS}`,
    '-filter_complex',
    '[0:a][1:a]amerge=inputs=2[a]',
    '-map',
    '[a]',
    '-ac',
    '2',
    '-ar',
    String(rate),
    ...codecArgs,
    out,
  ]);
  return out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** ffmpeg children of this process that are still around (running or zombie). */
function ffmpegChildren(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,stat=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' }).trim();
  return out
    .split('\n')
    .filter((l) => l.includes('ffmpeg'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parlance-decode-'));
  // Two minutes of noise: far more than pipe and stream buffers hold, so ffmpeg is still running (blocked on its
  // stdout by backpressure) when a consumer stops after the first chunks.
  execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=d=120:r=16000', '-c:a', 'pcm_s16le', join(dir, 'long.wav')]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('decodeToPcm', () => {
  const cases: [string, number, string[]][] = [
    ['tone.wav', 44_100, ['-c:a', 'pcm_s16le']],
    ['tone.mp3', 44_100, ['-c:a', 'libmp3lame', '-b:a', '128k']],
    ['tone.opus.ogg', 48_000, ['-c:a', 'libopus', '-b:a', '64k']],
    ['tone.flac', 48_000, ['-c:a', 'flac']],
  ];

  for (const [name, rate, codec] of cases) {
    it(`decodes ${name} (${rate} Hz stereo) to 16 kHz mono with the expected length`, async () => {
      const file = makeTone(name, rate, codec);
      const pcm = await decodeToBuffer(file);
      expect(pcm.length % 2).toBe(0);
      const samples = pcm.length / 2;
      expect(Math.abs(samples - EXPECTED_SAMPLES) / EXPECTED_SAMPLES).toBeLessThanOrEqual(0.01);
      // Not silence: a tone at full scale has a large RMS.
      const view = new Int16Array(pcm.buffer, pcm.byteOffset, samples);
      let sum = 0;
      for (const v of view) sum += v * v;
      expect(Math.sqrt(sum / samples)).toBeGreaterThan(1000);
    });
  }

  it('decodes one channel alone (multichannel jobs): each channel its own tone', async () => {
    const file = makeTone('channels.wav', 16_000, ['-c:a', 'pcm_s16le']);
    /** Zero crossings per second: twice the frequency of a pure tone. */
    const crossings = async (channel: number) => {
      const pcm = await decodeToBuffer(file, { channel });
      const v = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
      let n = 0;
      for (let i = 1; i < v.length; i++) if (v[i - 1]! < 0 !== v[i]! < 0) n++;
      return n / (v.length / 16_000);
    };
    expect(Math.abs((await crossings(0)) - 880)).toBeLessThan(20);
    expect(Math.abs((await crossings(1)) - 1320)).toBeLessThan(20);
  });

  it('decodes from a stream piped to stdin', async () => {
    const file = makeTone('piped.flac', 48_000, ['-c:a', 'flac']);
    const pcm = await decodeToBuffer(createReadStream(file));
    expect(Math.abs(pcm.length / 2 - EXPECTED_SAMPLES) / EXPECTED_SAMPLES).toBeLessThanOrEqual(0.01);
  });

  it('says what ffmpeg failed at without paths or addresses', () => {
    expect(firstErrorLine('[mp3 @ 0x55cf5d368b40] Header missing\nError while decoding stream #0:0')).toBe('Header missing');
    expect(firstErrorLine('/var/lib/parlance/blobs/ab/cd: Invalid data found when processing input')).toBe('Invalid data found when processing input');
    expect(firstErrorLine('pipe:0: Invalid data found when processing input')).toBe('Invalid data found when processing input');
    expect(firstErrorLine('[wav @ 0x1234abcd] [aist#0:0/pcm_s16le @ 0xdeadbeef] packet at 0x7f00ff00 is bad')).not.toMatch(/0x[0-9a-f]{4,}|@/);
    expect(firstErrorLine('')).toBe('ffmpeg failed without a message');
  });

  it('rejects undecodable input with a clear error', async () => {
    const garbage = join(dir, 'garbage.mp3');
    await writeFile(garbage, Buffer.from('this is not audio at all, just some text '.repeat(200)));
    const err = await decodeToBuffer(garbage).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AudioDecodeError);
    expect((err as Error).message).toMatch(/^audio could not be decoded: /);
    expect((err as Error).message).not.toContain(dir); // no server paths in the message
    expect((err as Error).message).not.toMatch(/0x[0-9a-f]{4,}|@/); // nor ffmpeg's heap addresses

    const fromStream = await decodeToBuffer(Readable.from([Buffer.alloc(5000, 7)])).catch((e: unknown) => e);
    expect(fromStream).toBeInstanceOf(AudioDecodeError);
    expect(ffmpegChildren()).toEqual([]);
  });

  it('rejects input without an audio stream', async () => {
    const video = join(dir, 'video.mkv');
    execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=size=32x32:duration=1', '-c:v', 'ffv1', video]);
    await expect(decodeToBuffer(video)).rejects.toThrow(AudioDecodeError);
  });

  it('reports a missing ffmpeg clearly', async () => {
    await expect(decodeToBuffer(join(dir, 'x.wav'), { ffmpegPath: join(dir, 'no-such-ffmpeg') })).rejects.toThrow('ffmpeg is not installed');
  });

  it('marks ffmpeg killed from outside as interrupted (the audio is not at fault); undecodable input is not', async () => {
    const err = await (async () => {
      for await (const _chunk of decodeToPcm(join(dir, 'long.wav'))) for (const pid of ffmpegChildren()) process.kill(pid, 'SIGKILL');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AudioDecodeError);
    expect((err as AudioDecodeError).message).toBe('audio could not be decoded: ffmpeg was killed by SIGKILL');
    expect((err as AudioDecodeError).interrupted).toBe(true);
    const garbage = await decodeToBuffer(Readable.from([Buffer.alloc(5000, 7)])).catch((e: unknown) => e);
    expect((garbage as AudioDecodeError).interrupted).toBe(false);
  });

  it('kills ffmpeg when the consumer stops early and leaves no zombie', async () => {
    const long = join(dir, 'long.wav');
    let received = 0;
    for await (const chunk of decodeToPcm(long)) {
      received += chunk.length;
      const running = ffmpegChildren();
      expect(running).toHaveLength(1); // still running: it waits for us rather than racing ahead
      if (received > 0) break;
    }
    expect(received).toBeGreaterThan(0);
    expect(ffmpegChildren()).toEqual([]);
  });

  it('stops and rejects when the abort signal fires', async () => {
    const long = join(dir, 'long.wav');
    const controller = new AbortController();
    let pid = 0;
    let firstChunk!: () => void;
    const started = new Promise<void>((r) => (firstChunk = r));
    const consume = (async () => {
      for await (const _chunk of decodeToPcm(long, { signal: controller.signal })) {
        pid = ffmpegChildren()[0] ?? pid;
        firstChunk();
        await new Promise((r) => setTimeout(r, 20)); // slow consumer
      }
    })();
    await started;
    controller.abort(new Error('stop now'));
    await expect(consume).rejects.toThrow('stop now');
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
    expect(ffmpegChildren()).toEqual([]);
  });
});
