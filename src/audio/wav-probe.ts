// The upload check of a WAV whose samples we decode ourselves (PCM, float, A-law, mu-law), from its header alone: any
// bytes are valid samples of such a codec, so ffmpeg's decode check could add nothing, and the two processes it takes
// cost about 160 ms of CPU per upload (most of it their start). Anything else is left to ffprobe and ffmpeg.
import { open } from 'node:fs/promises';
import type { AudioProbe } from './probe-result.js';
import type { SampleEncoding } from './sample-decoder.js';
import { WavStream } from './wav-stream.js';

/** Header bytes read; a WAV whose data chunk starts later (a huge metadata chunk) goes to ffprobe. */
const HEAD_BYTES = 64 * 1024;

/** ffprobe's codec name for a sample encoding, so both checks describe a file the same way. */
function codecName(e: SampleEncoding): string {
  if (e.kind === 'alaw' || e.kind === 'mulaw') return `pcm_${e.kind}`;
  if (e.bits === 8) return e.kind === 'uint' ? 'pcm_u8' : 'pcm_s8';
  return `pcm_${e.kind === 'float' ? 'f' : 's'}${e.bits}le`; // unsigned samples are 8-bit only
}

/** The probe of a plain WAV file, or undefined when ffprobe should look at it (other codecs, odd or broken headers). */
export async function probeWavHeader(file: string): Promise<AudioProbe | undefined> {
  const fh = await open(file, 'r');
  let head: Buffer;
  let size: number;
  try {
    size = (await fh.stat()).size;
    const buf = Buffer.alloc(Math.min(HEAD_BYTES, size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  const wav = new WavStream();
  try {
    wav.push(head);
  } catch {
    return undefined; // another codec, or a header ffprobe may read more leniently (or explain better)
  }
  if (!wav.format || !wav.data) return undefined;
  const { encoding, channels } = wav.format;
  const frameBytes = channels * (encoding.bits / 8);
  // A declared length past the end of the file (a cut-off upload) counts what is there.
  const frames = Math.floor(Math.min(wav.data.length, size - wav.data.offset) / frameBytes);
  if (frames <= 0) return undefined; // no samples: let the decode check say so
  return {
    format: 'wav',
    durationMs: Math.round((frames / wav.sampleRate) * 1000),
    codec: codecName(encoding),
    sampleRate: wav.sampleRate,
    channels,
  };
}
