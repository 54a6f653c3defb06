// How much of a signal's power lies above the telephone band. Audio sampled at 8 kHz (telephony, most call-centre
// recordings) carries nothing above 4 kHz even after it is resampled to 16 kHz for the recognizer, while wideband
// speech always has some: fricatives and breath reach well past 4 kHz. The recognizer picks its narrowband
// adaptation from this (engines/stt/pocketsphinx/narrowband.ts), whatever container or sample rate the audio came in.
import meydaModule from 'meyda';
import { PCM_SAMPLE_RATE } from './decode.js';

type MeydaApi = (typeof meydaModule)['default'];
const Meyda = ((meydaModule as unknown as { default?: MeydaApi }).default ?? meydaModule) as MeydaApi;

const FRAME = 512;
/** Above the 3.4–4 kHz edge of telephone audio and its resampling filter's transition band. */
const CUT_HZ = 4300;
/** The loudest share of frames looked at: silence and noise floors say nothing about the band. */
const LOUDEST_SHARE = 0.3;
/** Frames analysed at most, evenly spread (8 s of a 20 s segment): the answer is the same, the work and garbage bounded. */
const MAX_FRAMES = 256;

/**
 * Share (0..1) of the power above 4.3 kHz in the loudest 30 % of 32 ms frames of 16 kHz mono samples (at most 256
 * frames, evenly spread); NaN when there is under one frame of signal. Resampled 8 kHz audio scores below 1e-4; wideband speech about 1e-3 and up.
 */
export function highBandShare(samples: Int16Array, sampleRate = PCM_SAMPLE_RATE): number {
  const count = Math.floor(samples.length / FRAME);
  if (count === 0) return NaN;
  Meyda.bufferSize = FRAME;
  Meyda.sampleRate = sampleRate;
  Meyda.windowingFunction = 'hanning';
  const cutBin = Math.ceil((CUT_HZ / sampleRate) * FRAME);
  const frames: { total: number; high: number }[] = [];
  const frame = new Float32Array(FRAME);
  const step = Math.max(1, Math.floor(count / MAX_FRAMES));
  for (let i = 0; i < count; i += step) {
    for (let j = 0; j < FRAME; j++) frame[j] = samples[i * FRAME + j]! / 32768;
    const power = Meyda.extract('powerSpectrum', frame) as Float32Array | number[] | null;
    if (!power) continue;
    let total = 0;
    let high = 0;
    for (let b = 1; b < power.length; b++) {
      total += power[b]!;
      if (b >= cutBin) high += power[b]!;
    }
    if (total > 0) frames.push({ total, high });
  }
  if (frames.length === 0) return NaN;
  frames.sort((a, b) => b.total - a.total);
  const loud = frames.slice(0, Math.max(1, Math.ceil(frames.length * LOUDEST_SHARE)));
  const total = loud.reduce((a, f) => a + f.total, 0);
  return loud.reduce((a, f) => a + f.high, 0) / total;
}
