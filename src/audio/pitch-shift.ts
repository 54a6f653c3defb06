// Pitch shifting of synthesized PCM for cloned voices: ffmpeg's rubberband filter, formant-preserving so the
// base voice's spectral envelope (the timbre a cloned voice was matched on) survives, length unchanged.
import { PassThrough, Readable } from 'node:stream';
import { decodeToBuffer } from './decode.js';
import { INTERACTIVE_NICE } from '../lib/priority.js';

/** Shifts under this many semitones are inaudible: no filter. */
const MIN_SHIFT = 0.05;

export function pitchShiftFilter(semitones: number): string | undefined {
  if (!Number.isFinite(semitones) || Math.abs(semitones) < MIN_SHIFT) return undefined;
  return `rubberband=pitch=${(2 ** (semitones / 12)).toFixed(5)}:formant=preserved`;
}

/** Mono s16le at `inputRate` → shifted by `semitones`, resampled to `outputRate` (default: the same rate). */
export async function shiftPitch(pcm: Buffer, inputRate: number, semitones: number, opts: { outputRate?: number; signal?: AbortSignal } = {}): Promise<Buffer> {
  const filter = pitchShiftFilter(semitones);
  const outputRate = opts.outputRate ?? inputRate;
  if (!filter && outputRate === inputRate) return pcm;
  return decodeToBuffer(Readable.from([pcm]), {
    rawInputRate: inputRate,
    sampleRate: outputRate,
    ...(filter ? { filter } : {}),
    signal: opts.signal,
    nice: INTERACTIVE_NICE,
  });
}

/**
 * Shifts consecutive segments of one stream. Each segment gets its own ffmpeg run (exact length, nothing held
 * back between segments), but the run for the next segment is started ahead, while the engine is still
 * synthesizing it, so process start-up stays off the audio's path. Abort the signal to end the spare run.
 */
export class PitchShifter {
  private readonly filter: string | undefined;
  private spare: { input: PassThrough; output: Promise<Buffer> } | undefined;

  constructor(
    private readonly sampleRate: number,
    semitones: number,
    private readonly signal: AbortSignal,
  ) {
    this.filter = pitchShiftFilter(semitones);
    this.prime();
  }

  private prime(): void {
    if (!this.filter || this.signal.aborted) return;
    const input = new PassThrough();
    const output = decodeToBuffer(input, {
      rawInputRate: this.sampleRate,
      sampleRate: this.sampleRate,
      filter: this.filter,
      signal: this.signal,
      nice: INTERACTIVE_NICE,
    });
    output.catch(() => undefined); // a spare run never used ends by the abort; its rejection is expected
    this.spare = { input, output };
  }

  async shift(pcm: Buffer): Promise<Buffer> {
    const run = this.spare;
    if (!run || pcm.length === 0) return pcm;
    this.prime();
    run.input.end(pcm);
    return run.output;
  }
}
