// Pitch shifting of synthesized PCM for cloned voices: ffmpeg's rubberband filter, formant-preserving so the
// base voice's spectral envelope (the timbre a cloned voice was matched on) survives, length unchanged.
import { Readable } from 'node:stream';
import { decodeToBuffer } from './decode.js';

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
  return decodeToBuffer(Readable.from([pcm]), { rawInputRate: inputRate, sampleRate: outputRate, ...(filter ? { filter } : {}), signal: opts.signal });
}
