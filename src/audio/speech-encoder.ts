// Streaming speech encoder: mono s16le PCM in (at the engine's rate), the requested format out (at the requested
// rate), through one ffmpeg child process. Output chunks are yielded as ffmpeg produces them; stopping
// the iteration (or an error) kills ffmpeg.
import { INTERACTIVE_NICE } from '../lib/priority.js';
import { spawnChild } from '../lib/spawner/spawn-child.js';

export const AUDIO_FORMATS = ['pcm_f32le', 'pcm_s16le', 'pcm_s16be', 'pcm_mulaw', 'pcm_alaw', 'wav', 'aac', 'mp3', 'opus', 'flac'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

const FFMPEG: Record<AudioFormat, { codec: string; muxer: string }> = {
  pcm_f32le: { codec: 'pcm_f32le', muxer: 'f32le' },
  pcm_s16le: { codec: 'pcm_s16le', muxer: 's16le' },
  pcm_s16be: { codec: 'pcm_s16be', muxer: 's16be' },
  pcm_mulaw: { codec: 'pcm_mulaw', muxer: 'mulaw' },
  pcm_alaw: { codec: 'pcm_alaw', muxer: 'alaw' },
  wav: { codec: 'pcm_s16le', muxer: 'wav' },
  aac: { codec: 'aac', muxer: 'adts' },
  mp3: { codec: 'libmp3lame', muxer: 'mp3' },
  opus: { codec: 'libopus', muxer: 'ogg' },
  flac: { codec: 'flac', muxer: 'flac' },
};

export function contentTypeOf(format: AudioFormat): string {
  if (format.startsWith('pcm_')) return 'audio/pcm';
  return { wav: 'audio/wav', mp3: 'audio/mpeg', aac: 'audio/aac', opus: 'audio/opus', flac: 'audio/flac' }[format as 'wav'];
}

export class EncoderError extends Error {}

export interface EncodeOptions {
  inputRate: number;
  outputRate: number;
  format: AudioFormat;
  bitrate?: number;
}

/**
 * Encode the PCM of `source` as it arrives. The source is pulled concurrently with the output, so the
 * consumer sees audio of the first segment while later ones are still being synthesized.
 */
export async function* encode(source: AsyncIterable<Buffer>, opts: EncodeOptions): AsyncGenerator<Buffer> {
  const f = FFMPEG[opts.format];
  const args = ['-nostdin', '-hide_banner', '-v', 'error', '-f', 's16le', '-ar', String(opts.inputRate), '-ac', '1', '-i', 'pipe:0'];
  args.push('-ar', String(opts.outputRate), '-ac', '1', '-c:a', f.codec);
  if (opts.bitrate) args.push('-b:a', String(opts.bitrate));
  if (opts.format === 'wav') args.push('-rf64', 'never');
  args.push('-flush_packets', '1', '-f', f.muxer, 'pipe:1');
  const child = spawnChild('ffmpeg', args, { nice: INTERACTIVE_NICE });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 4096) stderr += d;
  });
  child.stdin.on('error', () => undefined);
  const closed = new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(-1));
    child.once('close', (code) => resolve(code));
  });

  let pumpError: unknown;
  let stopped = false;
  const pump = (async () => {
    try {
      for await (const pcm of source) {
        if (stopped) break;
        if (!child.stdin.write(pcm)) await new Promise<void>((r) => child.stdin.once('drain', () => r()).once('close', () => r()));
      }
    } catch (err) {
      pumpError = err;
      child.kill('SIGKILL');
    } finally {
      child.stdin.end();
    }
  })();

  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) yield chunk;
    const code = await closed;
    await pump;
    if (pumpError) throw pumpError;
    if (code !== 0) throw new EncoderError(`ffmpeg exited with ${code}: ${stderr.trim().split('\n')[0] ?? ''}`);
  } finally {
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed;
    // The pump may still wait on the source: the caller aborts the synthesis, which ends it.
    void pump.catch(() => undefined);
  }
}
