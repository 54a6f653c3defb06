// A microphone's noise floor: pink-ish noise at about -60 dBFS RMS, 16 kHz, the same samples for the same seed. The
// benches put it around real recordings (no live source sends digital silence), and the pocketsphinx worker primes a
// decoder with it when speech starts at the first sample of a stream.

/** `ms` of noise floor as 16 kHz samples. */
export function noiseFloorSamples(ms: number, seed = 1): Int16Array {
  const n = Math.round(ms * 16);
  const out = new Int16Array(n);
  let x = seed;
  let b = 0;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b = 0.97 * b + 0.03 * ((x / 0x7fffffff) * 2 - 1);
    out[i] = Math.round(b * 32768 * 0.02);
  }
  return out;
}
