// PCM sources for real-time sessions: client audio bytes in, 16 kHz mono s16le out, in arrival order.
// - Common raw formats (pcm_s16le / pcm_f32le, mono or stereo, at 8, 16, 32 or 48 kHz) are converted in-process:
//   no child process, no added latency.
// - Every other raw format, `auto` and the containers go through one streaming ffmpeg per session
//   (`-f <fmt> -ar <rate> -ac <ch> -i pipe:0` for raw input), tuned for low delay.
// Markers: `mark()` resolves once everything written before it has come out of the source and been consumed (the
// pump reached it), so a finalize lands after the audio that preceded it. In-process this is exact; through
// ffmpeg it waits until ffmpeg has caught up (the expected byte count for raw input, a short quiet spell for
// containers, at most 1 s).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { STT_SAMPLE_RATE } from '../../engines/stt/interface.js';

export type PcmItem = Buffer | { mark: () => void };

/** Unbounded async queue with a size hint (for pausing the producer). */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  constructor(private readonly onShift?: () => void) {}

  get length(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: Error): void {
    if (this.ended) return;
    this.failure = err;
    this.ended = true;
    this.items = [];
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length) {
        const item = this.items.shift()!;
        this.onShift?.();
        yield item;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((r) => (this.waiter = r));
    }
  }
}

export class AudioFormatError extends Error {}

export interface PcmSource {
  /** Client audio bytes. */
  write(bytes: Uint8Array): void;
  /** No more audio: the output ends once everything was converted. */
  end(): void;
  /** Stop at once (client gone, session failed). */
  abort(): void;
  /** Resolves when the audio written so far has been consumed from `output` (see file comment). */
  mark(): Promise<void>;
  /** Converted PCM and markers, in order; rejects with AudioFormatError when the audio cannot be decoded. */
  readonly output: AsyncIterable<PcmItem>;
  /** Bytes accepted but not yet consumed (for flow control). */
  readonly backlogBytes: number;
}

interface RawSpec {
  format: string;
  sampleRate: number;
  channels: number;
}

const IN_PROCESS_RATES = new Set([8000, 16_000, 32_000, 48_000]);

/** ffmpeg demuxer name of a raw format. */
export function ffmpegRawFormat(format: string): string {
  if (format === 'mulaw' || format === 'alaw') return format;
  const f = format.replace(/^pcm_/, '');
  return f.replace(/^([su]8)(le|be)$/, '$1');
}

export function createPcmSource(audioFormat: string, raw: RawSpec | undefined, opts: { ffmpegPath?: string } = {}): PcmSource {
  if (
    raw &&
    (raw.format === 'pcm_s16le' || raw.format === 'pcm_f32le') &&
    (raw.channels === 1 || raw.channels === 2) &&
    IN_PROCESS_RATES.has(raw.sampleRate)
  )
    return new InProcessSource(raw);
  return new FfmpegSource(audioFormat, raw, opts.ffmpegPath ?? 'ffmpeg');
}

/** s16le / f32le, 1 or 2 channels, 8/16/32/48 kHz → 16 kHz mono s16le. */
class InProcessSource implements PcmSource {
  private readonly queue = new AsyncQueue<PcmItem>(() => undefined);
  private carry = Buffer.alloc(0);
  private readonly frameBytes: number;
  private readonly float: boolean;
  /** Decimation factor (rate / 16 kHz) or 0.5 for 8 kHz. */
  private readonly factor: number;
  private groupSum = 0;
  private groupCount = 0;
  private prev: number | undefined;
  private backlog = 0;

  constructor(private readonly spec: RawSpec) {
    this.float = spec.format === 'pcm_f32le';
    this.frameBytes = (this.float ? 4 : 2) * spec.channels;
    this.factor = spec.sampleRate / STT_SAMPLE_RATE;
  }

  get backlogBytes(): number {
    return this.backlog;
  }

  readonly output: AsyncIterable<PcmItem> = {
    [Symbol.asyncIterator]: () => {
      const it = this.queue[Symbol.asyncIterator]();
      return {
        next: async () => {
          const r = await it.next();
          if (!r.done && Buffer.isBuffer(r.value)) this.backlog -= r.value.length;
          return r;
        },
      };
    },
  };

  write(bytes: Uint8Array): void {
    let buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.carry.length) buf = Buffer.concat([this.carry, buf]);
    const frames = Math.floor(buf.length / this.frameBytes);
    this.carry = Buffer.from(buf.subarray(frames * this.frameBytes));
    if (!frames) return;
    const out: number[] = [];
    const ch = this.spec.channels;
    for (let f = 0; f < frames; f++) {
      let s = 0;
      for (let c = 0; c < ch; c++) {
        const off = f * this.frameBytes + c * (this.frameBytes / ch);
        s += this.float ? buf.readFloatLE(off) * 32767 : buf.readInt16LE(off);
      }
      s /= ch;
      if (this.factor === 1) out.push(s);
      else if (this.factor < 1) {
        // 8 kHz: one interpolated sample between neighbours, then the sample itself.
        out.push(this.prev === undefined ? s : (this.prev + s) / 2, s);
        this.prev = s;
      } else {
        this.groupSum += s;
        if (++this.groupCount === this.factor) {
          out.push(this.groupSum / this.factor);
          this.groupSum = 0;
          this.groupCount = 0;
        }
      }
    }
    if (!out.length) return;
    const pcm = Buffer.allocUnsafe(out.length * 2);
    out.forEach((v, i) => pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v))), i * 2));
    this.backlog += pcm.length;
    this.queue.push(pcm);
  }

  end(): void {
    this.queue.end();
  }

  abort(): void {
    this.queue.fail(new Error('aborted'));
  }

  mark(): Promise<void> {
    return new Promise((resolve) => this.queue.push({ mark: resolve }));
  }
}

const CONTAINER_DEMUXERS: Record<string, string> = { webm: 'matroska' };

class FfmpegSource implements PcmSource {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: AsyncQueue<PcmItem>;
  private stderr = '';
  private inBytes = 0;
  private outBytes = 0;
  private lastOutputAt = Date.now();
  private stdinBacklog = 0;
  private queuedOut = 0;
  private done = false;
  private readonly bytesPerInFrame: number;

  constructor(
    private readonly audioFormat: string,
    private readonly raw: RawSpec | undefined,
    ffmpegPath: string,
  ) {
    const args = ['-nostdin', '-hide_banner', '-v', 'error', '-flags', 'low_delay'];
    if (raw) {
      args.push('-probesize', '32', '-analyzeduration', '0');
      args.push('-f', ffmpegRawFormat(raw.format), '-ar', String(raw.sampleRate), '-ac', String(raw.channels));
    } else if (audioFormat !== 'auto') {
      args.push('-analyzeduration', '0', '-f', CONTAINER_DEMUXERS[audioFormat] ?? audioFormat);
    } else {
      args.push('-analyzeduration', '0');
    }
    args.push('-i', 'pipe:0', '-map', '0:a:0', '-vn', '-sn', '-dn', '-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '1', '-ar', String(STT_SAMPLE_RATE));
    args.push('-flush_packets', '1', 'pipe:1');
    this.bytesPerInFrame = raw ? bytesPerSample(raw.format) * raw.channels : 0;
    this.child = spawn(ffmpegPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.queue = new AsyncQueue<PcmItem>(() => {
      if (this.queuedOut < 1 << 20 && this.child.stdout.isPaused()) this.child.stdout.resume();
    });
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (this.stderr.length < 8192) this.stderr += d;
    });
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.outBytes += chunk.length;
      this.queuedOut += chunk.length;
      this.lastOutputAt = Date.now();
      this.queue.push(chunk);
      if (this.queuedOut >= 1 << 20) this.child.stdout.pause();
    });
    this.child.on('error', (err) => {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      this.queue.fail(new Error(missing ? 'ffmpeg is not installed' : `could not start ffmpeg: ${err.message}`));
    });
    this.child.on('close', (code, signal) => {
      this.done = true;
      if (code === 0) this.queue.end();
      else if (signal) this.queue.fail(new Error(`ffmpeg was killed by ${signal}`));
      else this.queue.fail(new AudioFormatError(`Audio could not be decoded as ${this.audioFormat === 'auto' ? 'any known format' : this.audioFormat}: ${firstLine(this.stderr)}`));
    });
  }

  get backlogBytes(): number {
    return this.stdinBacklog + this.queuedOut;
  }

  readonly output: AsyncIterable<PcmItem> = {
    [Symbol.asyncIterator]: () => {
      const it = this.queue[Symbol.asyncIterator]();
      return {
        next: async () => {
          const r = await it.next();
          if (!r.done && Buffer.isBuffer(r.value)) this.queuedOut -= r.value.length;
          if (!r.done && this.queuedOut < 1 << 20 && this.child.stdout.isPaused()) this.child.stdout.resume();
          return r;
        },
        return: async () => {
          this.abort();
          return { done: true as const, value: undefined };
        },
      };
    },
  };

  write(bytes: Uint8Array): void {
    if (this.done || !this.child.stdin.writable) return;
    this.inBytes += bytes.byteLength;
    this.stdinBacklog += bytes.byteLength;
    const n = bytes.byteLength;
    this.child.stdin.write(bytes, () => (this.stdinBacklog -= n));
  }

  end(): void {
    if (this.child.stdin.writable) this.child.stdin.end();
  }

  abort(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    this.queue.fail(new Error('aborted'));
  }

  async mark(): Promise<void> {
    const started = Date.now();
    const expected = this.raw ? Math.floor(this.inBytes / this.bytesPerInFrame) * (STT_SAMPLE_RATE / this.raw.sampleRate) * 2 : 0;
    for (;;) {
      const now = Date.now();
      if (this.done || now - started >= 1000) break;
      if (this.raw) {
        // The resampler holds back a few dozen samples until more input or the end arrives.
        if (this.outBytes >= expected - 256) break;
      } else if (this.stdinBacklog === 0 && now - this.lastOutputAt >= 150) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    return new Promise((resolve) => {
      if (this.done && this.queue.length === 0) return resolve();
      this.queue.push({ mark: resolve });
      // The queue is already ended when ffmpeg exited: resolve anyway.
      if (this.done) setTimeout(resolve, 0);
    });
  }
}

function bytesPerSample(format: string): number {
  if (format === 'mulaw' || format === 'alaw') return 1;
  const m = /(\d+)/.exec(format);
  return m ? Number(m[1]) / 8 : 1;
}

function firstLine(stderr: string): string {
  const line = stderr.split('\n').find((l) => l.trim()) ?? 'ffmpeg failed without a message';
  return line.replace(/^[^:]*\/[^:]*: /, '').trim().slice(0, 200);
}
