// A live PCM source through one streaming ffmpeg child, for the compressed containers (mp3, ogg, webm, flac, aac, ...)
// and the rare WAV codecs not decoded in-process. Started for low delay:
// - an explicit demuxer (`-f`, from the declared format or the sniffed magic bytes) with `-probesize 32`: ffmpeg
//   reads the stream header and starts decoding instead of probing and analysing the first seconds (its defaults
//   held the first PCM back by 1–5 s); an unknown `auto` stream is probed from at most 32 KiB;
// - `-flags low_delay`, output flushed after every packet (`-flush_packets 1`), bytes written to stdin as they arrive.
//   (`-fflags nobuffer` is not used: it drops the packets read while opening the stream and gains nothing here.)
// - FLAC and MPEG audio are rewrapped as Ogg on the way in (flac-ogg.ts, mp3-ogg.ts): ffmpeg's raw FLAC parser holds
//   ten frames back, and its mp3 demuxer waits for 1,024 bytes. Ogg Opus is repaginated a packet per page
//   (ogg-repage.ts): the Ogg demuxer waits for a whole page, up to a second of audio.
// Undecodable input ends the output with AudioDecodeError naming the format in words; ffmpeg's own stderr (heap
// addresses, pipe names) is kept apart on `detail` for logs.
// mark() waits until ffmpeg has taken all input and been quiet for 150 ms (at most 1 s): a container's output cannot
// be matched to input bytes.
import { type Child, spawnChild } from '../lib/spawner/spawn-child.js';
import { AsyncQueue, AudioDecodeError, type PcmItem, type PcmSource } from './pcm-source.js';

const OUTPUT_RATE = 16_000;
/** Converted PCM held before ffmpeg's stdout is paused. */
const MAX_QUEUED = 1 << 20;

/** Rewrites the client's bytes before ffmpeg reads them (FLAC into Ogg FLAC, MPEG audio into Ogg: *-ogg.ts). */
export interface InputRewrite {
  /** Throws AudioDecodeError when the bytes are not what they should be. */
  push(bytes: Uint8Array): Buffer[];
  end(): Buffer[];
  /** Seconds of codec delay at the start of the decoded audio, to drop (read when the first output arrives). */
  readonly leadSeconds?: number;
}

export interface FfmpegInput {
  /** ffmpeg demuxer; undefined lets ffmpeg probe. */
  demuxer: string | undefined;
  /** How the client will read the failure: "as mp3", "as webm (detected from its first bytes)". */
  described: string;
  rewrite?: InputRewrite;
  /**
   * Output a WAV stream of every channel (16 kHz s16le, its header first) instead of the mono mix, for multichannel
   * sessions (live-channels.ts): the header says how many channels there are. The rewrite's lead is not dropped then:
   * the reader drops it (`leadSeconds`).
   */
  wav?: boolean;
}

export class FfmpegSource implements PcmSource {
  private readonly child: Child;
  private readonly queue: AsyncQueue<PcmItem>;
  private stderr = '';
  private lastOutputAt = Date.now();
  private stdinBacklog = 0;
  private queuedOut = 0;
  private done = false;
  /** Output bytes still to drop at the start (the rewrite's lead), once known. */
  private lead: number | undefined;

  constructor(
    private readonly input: FfmpegInput,
    ffmpegPath: string,
  ) {
    const args = ['-nostdin', '-hide_banner', '-v', 'error', '-flags', 'low_delay', '-analyzeduration', '0'];
    if (input.demuxer) args.push('-probesize', '32', '-f', input.demuxer);
    else args.push('-probesize', '32768');
    args.push('-i', 'pipe:0', '-map', '0:a:0', '-vn', '-sn', '-dn');
    if (input.wav) args.push('-f', 'wav', '-acodec', 'pcm_s16le', '-ar', String(OUTPUT_RATE));
    else args.push('-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '1', '-ar', String(OUTPUT_RATE));
    args.push('-flush_packets', '1', 'pipe:1');
    this.child = spawnChild(ffmpegPath, args);
    this.queue = new AsyncQueue<PcmItem>(() => {
      if (this.queuedOut < MAX_QUEUED && this.child.stdout.isPaused()) this.child.stdout.resume();
    });
    this.child.stdin.on('error', () => undefined);
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (this.stderr.length < 8192) this.stderr += d;
    });
    this.child.stdout.on('data', (data: Buffer) => {
      this.lead ??= this.input.wav ? 0 : 2 * Math.round(this.leadSeconds * OUTPUT_RATE);
      const chunk = this.lead ? data.subarray(Math.min(this.lead, data.length)) : data;
      this.lead -= data.length - chunk.length;
      if (!chunk.length) return;
      this.queuedOut += chunk.length;
      this.lastOutputAt = Date.now();
      this.queue.push(chunk);
      if (this.queuedOut >= MAX_QUEUED) this.child.stdout.pause();
    });
    this.child.on('error', (err) => {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      this.queue.fail(new Error(missing ? 'ffmpeg is not installed' : `could not start ffmpeg: ${err.message}`));
    });
    this.child.on('close', (code, signal) => {
      this.done = true;
      if (code === 0) this.queue.end();
      else if (signal) this.queue.fail(new Error(`ffmpeg was killed by ${signal}`));
      else this.queue.fail(new AudioDecodeError(`Audio could not be decoded ${this.input.described}.`, this.stderr.trim()));
    });
  }

  get backlogBytes(): number {
    return this.stdinBacklog + this.queuedOut;
  }

  /** Seconds of codec delay at the start of the output (known once output came). */
  get leadSeconds(): number {
    return this.input.rewrite?.leadSeconds ?? 0;
  }

  readonly output: AsyncIterable<PcmItem> = {
    [Symbol.asyncIterator]: () => {
      const it = this.queue[Symbol.asyncIterator]();
      return {
        next: async () => {
          const r = await it.next();
          if (!r.done && Buffer.isBuffer(r.value)) this.queuedOut -= r.value.length;
          if (!r.done && this.queuedOut < MAX_QUEUED && this.child.stdout.isPaused()) this.child.stdout.resume();
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
    if (!this.input.rewrite) return this.send(bytes);
    try {
      for (const b of this.input.rewrite.push(bytes)) this.send(b);
    } catch (err) {
      this.abort(err as Error);
    }
  }

  end(): void {
    if (!this.child.stdin.writable) return;
    try {
      for (const b of this.input.rewrite?.end() ?? []) this.send(b);
    } catch (err) {
      return this.abort(err as Error);
    }
    this.child.stdin.end();
  }

  /** Kill ffmpeg; the output fails with `err`. */
  abort(err = new Error('aborted')): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    this.queue.fail(err);
  }

  private send(bytes: Uint8Array): void {
    this.stdinBacklog += bytes.byteLength;
    const n = bytes.byteLength;
    this.child.stdin.write(bytes, () => (this.stdinBacklog -= n));
  }

  async mark(): Promise<void> {
    const started = Date.now();
    for (;;) {
      const now = Date.now();
      if (this.done || now - started >= 1000) break;
      if (this.stdinBacklog === 0 && now - this.lastOutputAt >= 150) break;
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
