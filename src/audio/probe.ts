// ffprobe / ffmpeg checks of a stored audio file: is there an audio stream, what is its duration, and
// does its beginning actually decode (ffprobe alone happily "finds" MP3 frames in random bytes).
import { availableParallelism } from 'node:os';
import { INTERACTIVE_NICE } from '../lib/priority.js';
import { runChild } from '../lib/spawner/spawn-child.js';
import { WorkGate } from '../lib/work-gate.js';
import type { AudioProbe } from './probe-result.js';
import { probeWavHeader } from './wav-probe.js';

/**
 * Every check of this node passes this gate, one per core: a flood of uploads would otherwise start two processes
 * each at once, and a hundred runnable checkers leave the event loop and the live decoders a sliver of the CPU.
 * The rest wait their turn (their files are already on disk).
 */
const CHECK_SLOTS = availableParallelism();
const checkGate = new WorkGate(CHECK_SLOTS);

/** The file is not usable audio: the client's to fix. */
export class AudioProbeError extends Error {}

/**
 * The check itself did not finish: ffprobe or ffmpeg was killed from outside (an operator, the OOM killer, the
 * spawner process dying). Nothing is known about the file; the server's failure, not the client's.
 */
export class AudioProbeInterrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AudioProbeInterrupted';
  }
}

// Below live transcription: the client waits for its upload, but live audio comes first.
async function run(cmd: string, args: string[], timeoutMs: number) {
  const started = Date.now();
  const result = await runChild(cmd, args, { timeoutMs, nice: INTERACTIVE_NICE });
  if (result.signal !== null) {
    // Our own kill at the time limit: a file that takes that long to check is the file's problem.
    if (Date.now() - started >= timeoutMs) throw new AudioProbeError(`the audio could not be checked within ${timeoutMs / 1000} s`);
    throw new AudioProbeInterrupted(`${cmd} was killed by ${result.signal} while checking an audio file`);
  }
  return result;
}

interface FfprobeJson {
  streams?: { codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; duration?: string }[];
  format?: { format_name?: string; duration?: string };
}

/** Probe a file; throws AudioProbeError when it has no decodable audio stream. */
export async function probeAudioFile(file: string): Promise<AudioProbe> {
  return (await probeWavHeader(file)) ?? probeWithFfmpeg(file);
}

/** The checks waiting for a slot now, and a Retry-After estimate for one more: what uploads are refused on. */
export function audioCheckBacklog(): { waiting: number; slots: number; retryAfterSeconds: number } {
  return { waiting: checkGate.waiting, slots: CHECK_SLOTS, retryAfterSeconds: checkGate.retryAfterSeconds() };
}

/** The check with ffprobe and an ffmpeg decode of the first seconds (exported for tests of the in-process check). */
export function probeWithFfmpeg(file: string): Promise<AudioProbe> {
  return checkGate.run(() => check(file));
}

async function check(file: string): Promise<AudioProbe> {
  const probe = await run(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,sample_rate,channels,duration:format=format_name,duration', '-of', 'json', file],
    30_000,
  );
  if (probe.code !== 0) throw new AudioProbeError(`not a recognised audio file (${firstLine(probe.stderr)})`);
  let parsed: FfprobeJson;
  try {
    parsed = JSON.parse(probe.stdout) as FfprobeJson;
  } catch {
    throw new AudioProbeError('not a recognised audio file');
  }
  const audio = parsed.streams?.find((s) => s.codec_type === 'audio');
  if (!audio) throw new AudioProbeError('file has no audio stream');
  // Decode the first seconds: a header that probes fine but whose data does not decode is not audio.
  const decode = await run('ffmpeg', ['-nostdin', '-v', 'error', '-xerror', '-t', '2', '-i', file, '-map', '0:a:0', '-f', 'null', '-'], 60_000);
  if (decode.code !== 0) throw new AudioProbeError(`audio stream does not decode (${firstLine(decode.stderr)})`);
  const seconds = Number(audio.duration ?? parsed.format?.duration);
  return {
    format: parsed.format?.format_name ?? 'unknown',
    durationMs: Number.isFinite(seconds) ? Math.round(seconds * 1000) : null,
    codec: audio.codec_name ?? 'unknown',
    sampleRate: audio.sample_rate ? Number(audio.sample_rate) : null,
    channels: audio.channels ?? null,
  };
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim()) ?? 'unknown error';
  // ffmpeg prefixes lines with the file path; keep server paths out of client-facing messages.
  return line.replace(/^[^:]*\/[^:]*: /, '').slice(0, 200);
}
