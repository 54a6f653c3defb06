// Where an SSML break falls between two pieces of synthesized audio, the pause heard is the break's silence plus
// the silence each engine leaves at the end and start of what it speaks. The pipeline passes every chunk through
// a PauseJoiner: a break becomes the silence it asks for minus the near-silence already at the end of the audio,
// and the audio after it starts at its first sound, so the pause lasts what the break asked (or the engine's own
// trailing pause, when that is longer).

/** Samples quieter than this (about -38 dBFS) count as silence, as in reduce_silence (audio/raw-output.ts). */
export const NEAR_SILENCE = 400;

function leadingSilence(pcm: Buffer): number {
  const n = pcm.length >> 1;
  let i = 0;
  while (i < n && Math.abs(pcm.readInt16LE(i * 2)) < NEAR_SILENCE) i++;
  return i;
}

function trailingSilence(pcm: Buffer): number {
  const n = pcm.length >> 1;
  let i = n;
  while (i > 0 && Math.abs(pcm.readInt16LE((i - 1) * 2)) < NEAR_SILENCE) i--;
  return n - i;
}

export class PauseJoiner {
  /** Near-silent samples at the end of the audio so far (a pause's own silence not included). */
  private tail = 0;
  private afterPause = false;

  constructor(private readonly sampleRate: number) {}

  /** The samples to send for one chunk: `pcm` as is, trimmed after a pause, or a pause's silence. */
  join(pcm: Buffer, pauseSeconds?: number): Buffer {
    if (pauseSeconds !== undefined) {
      const wanted = Math.round(pauseSeconds * this.sampleRate);
      const n = Math.max(0, wanted - this.tail);
      this.tail = Math.max(0, this.tail - wanted);
      this.afterPause = true;
      return Buffer.alloc(n * 2);
    }
    if (!pcm.length) return pcm;
    if (this.afterPause) {
      pcm = pcm.subarray(leadingSilence(pcm) * 2);
      if (!pcm.length) return pcm;
      this.afterPause = false;
    }
    const t = trailingSilence(pcm);
    this.tail = t === pcm.length >> 1 ? this.tail + t : t;
    return pcm;
  }
}
