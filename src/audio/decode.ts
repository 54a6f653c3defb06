// Streaming decode of any audio input to 16 kHz mono s16le PCM through an ffmpeg child process.
//
//   for await (const pcm of decodeToPcm('/path/file.mp3')) recognizer...;
//
// - The input is a file path (seekable: every container works) or a byte stream piped to ffmpeg's stdin (formats
//   that need seeking, e.g. MP4 with its index at the end, fail from a pipe: pass a path for those).
// - Backpressure: ffmpeg's stdout is read only as fast as the consumer pulls, so ffmpeg blocks instead of buffering.
// - Failure: when ffmpeg exits non-zero (undecodable input, no audio stream) the iteration rejects with an
//   AudioDecodeError carrying ffmpeg's first error line; when it was killed from outside (or its start was lost with
//   the spawner process), with one marked `interrupted`: the audio may be fine, another run may succeed.
// - Early stop (break, return, throw in the consumer, or the abort signal): ffmpeg is killed and reaped before the
//   iteration settles, so no child outlives it and none is left a zombie.
import { spawnChild } from '../lib/spawner/spawn-child.js';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const PCM_SAMPLE_RATE = 16_000;
/** Bytes per second of 16 kHz mono s16le. */
export const PCM_BYTES_PER_SECOND = PCM_SAMPLE_RATE * 2;

export class AudioDecodeError extends Error {
  constructor(
    message: string,
    /** ffmpeg's stderr (truncated), for logs; not for clients, it may name server paths. */
    readonly detail = '',
    /**
     * Not the audio's fault: ffmpeg was killed from outside (OOM killer, an operator, the spawner process dying) or
     * could not be started for a reason other than a missing executable. Another run may well succeed.
     */
    readonly interrupted = false,
  ) {
    super(message);
    this.name = 'AudioDecodeError';
  }
}

export interface DecodeOptions {
  /** Output sample rate (default 16 000). */
  sampleRate?: number;
  /** Stops decoding; the iteration then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** ffmpeg executable (default "ffmpeg" on PATH). */
  ffmpegPath?: string;
  /** Limit decoding to this many seconds of audio. */
  maxSeconds?: number;
  /** The input is headerless mono s16le at this rate (synthesized PCM), not a container. */
  rawInputRate?: number;
  /** An ffmpeg audio filter chain applied before the output conversion (e.g. a rubberband pitch shift). */
  filter?: string;
  /** Decode this channel (0-based) of the first audio stream alone instead of the mix of all (multichannel jobs). */
  channel?: number;
  /** OS niceness of the ffmpeg process (lib/priority.ts): batch work yields the CPU to live audio. */
  nice?: number;
}

export type DecodeInput = string | Readable | AsyncIterable<Uint8Array>;

/** Decode `input` to mono s16le PCM chunks (Buffers of arbitrary, even length). */
export async function* decodeToPcm(input: DecodeInput, options: DecodeOptions = {}): AsyncGenerator<Buffer, void, undefined> {
  const { signal } = options;
  signal?.throwIfAborted();
  const fromFile = typeof input === 'string';
  const args = ['-nostdin', '-hide_banner', '-v', 'error'];
  if (options.rawInputRate !== undefined) args.push('-f', 's16le', '-ar', String(options.rawInputRate), '-ac', '1');
  args.push('-i', fromFile ? input : 'pipe:0', '-map', '0:a:0', '-vn', '-sn', '-dn');
  if (options.maxSeconds !== undefined) args.push('-t', String(options.maxSeconds));
  // One channel alone: ffmpeg's pan filter picks it (a channel the stream lacks fails the decode).
  const filters = [...(options.channel !== undefined ? [`pan=mono|c0=c${options.channel}`] : []), ...(options.filter !== undefined ? [options.filter] : [])];
  if (filters.length) args.push('-af', filters.join(','));
  args.push('-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '1', '-ar', String(options.sampleRate ?? PCM_SAMPLE_RATE), 'pipe:1');

  const child = spawnChild(options.ffmpegPath ?? 'ffmpeg', args, { stdio: [fromFile ? 'ignore' : 'pipe', 'pipe', 'pipe'], nice: options.nice });
  const stdout = child.stdout!;
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 16_384) stderr += d;
  });
  let spawnError: Error | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (err) => {
      spawnError = err;
      // A failed spawn emits 'error' and may never emit 'close'.
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
    child.once('close', (code, sig) => resolve({ code, signal: sig }));
  });

  if (!fromFile && child.stdin) {
    // EPIPE when ffmpeg stops reading (error or early stop) is expected: the exit status tells the story.
    pipeline(input, child.stdin).catch(() => {});
  }

  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  signal?.addEventListener('abort', kill, { once: true });
  try {
    for await (const chunk of stdout as AsyncIterable<Buffer>) {
      yield chunk;
    }
    const { code, signal: sig } = await exited;
    signal?.throwIfAborted();
    if (spawnError) {
      const errno = (spawnError as NodeJS.ErrnoException).code;
      // Without an errno the spawner process went away before ffmpeg started: a fault of ours, not of the system.
      throw new AudioDecodeError(errno === 'ENOENT' ? 'ffmpeg is not installed' : `could not start ffmpeg: ${spawnError.message}`, '', errno === undefined);
    }
    if (code !== 0) {
      // A signal we did not send (ours come only after an abort, handled above).
      const reason = sig ? `ffmpeg was killed by ${sig}` : firstErrorLine(stderr);
      throw new AudioDecodeError(`audio could not be decoded: ${reason}`, stderr, sig !== null);
    }
  } finally {
    signal?.removeEventListener('abort', kill);
    kill();
    await exited;
    if (!fromFile && typeof (input as Readable).destroy === 'function' && !(input as Readable).readableEnded) {
      (input as Readable).destroy();
    }
  }
}

/** Collect a whole decode into one Buffer (tests, short clips). */
export async function decodeToBuffer(input: DecodeInput, options: DecodeOptions = {}): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of decodeToPcm(input, options)) parts.push(chunk);
  return Buffer.concat(parts);
}

/**
 * ffmpeg's first complaint in words a client may read: without the input path it prefixes lines with (server paths),
 * the `[mp3 @ 0x55cf5d368b40]` component tags (heap addresses) and any other address. The whole stderr goes to logs
 * through AudioDecodeError.detail.
 */
export function firstErrorLine(stderr: string): string {
  const line = stderr.split('\n').find((l) => l.trim()) ?? 'ffmpeg failed without a message';
  const words = line
    .replace(/\[[^\]]*@ *0x[0-9a-f]+\] */gi, '')
    .replace(/^[^:]*\/[^:]*: /, '')
    .replace(/^pipe:\d*: /, '')
    .replace(/0x[0-9a-f]{4,}/gi, '…')
    .trim()
    .slice(0, 200);
  return words || 'ffmpeg failed without a message';
}
