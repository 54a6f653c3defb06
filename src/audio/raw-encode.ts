// In-process raw output: the uncompressed formats (pcm_* and a streamed WAV) need no codec, so they skip the ffmpeg
// encoder and its start-up time (first audio byte a few milliseconds after the engine's first segment); compressed
// formats go through speech-encoder.ts. The per-sample work runs on the audio output thread (audio-thread.ts).
import { openRawEncoder } from './audio-thread.js';
import { isRawOutputFormat } from './raw-output.js';
import type { AudioFormat } from './speech-encoder.js';

/** Raw-format output of a PCM stream, chunk for chunk. */
export async function* rawEncode(source: AsyncIterable<Buffer>, opts: { inputRate: number; outputRate: number; format: AudioFormat }): AsyncGenerator<Buffer> {
  const format = opts.format;
  if (!isRawOutputFormat(format)) throw new Error(`${format} is not a raw output format`);
  const enc = await openRawEncoder({ inputRate: opts.inputRate, outputRate: opts.outputRate, format });
  try {
    for await (const pcm of source) {
      const body = await enc.push(pcm);
      if (body.length) yield body;
    }
    const tail = await enc.end();
    if (tail.length) yield tail;
  } finally {
    // Frees the encoder when the output is stopped early (no-op after a normal end).
    void enc.end().catch(() => undefined);
  }
}
