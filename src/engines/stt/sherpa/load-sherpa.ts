// sherpa-onnx-node is CommonJS with a native library inside: loaded with require, once, on first use (a server
// without models you bring never loads it).
import { createRequire } from 'node:module';
import type sherpaTypes from 'sherpa-onnx-node';
import type { OfflineResult } from './words.js';

export type SherpaModule = typeof sherpaTypes;
export type OfflineRecognizer = sherpaTypes.OfflineRecognizer;

let loaded: SherpaModule | undefined;

export function sherpa(): SherpaModule {
  return (loaded ??= createRequire(import.meta.url)('sherpa-onnx-node') as SherpaModule);
}

/** s16le samples as sherpa-onnx takes them: floats in [-1, 1). */
export function pcmToFloat32(samples: Int16Array): Float32Array {
  const f = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) f[i] = samples[i]! / 32768;
  return f;
}

/**
 * One decoded segment (16 kHz): its text, sub-word tokens and their start times (seconds). `hotwords`: phrases to
 * favour, "/"-separated (transducer models decoded with modified_beam_search only: sherpa-onnx ends the process
 * for any other model given some).
 */
export function decodeSegment(recognizer: OfflineRecognizer, samples: Int16Array, hotwords?: string): OfflineResult {
  const stream = hotwords ? recognizer.createStream(hotwords) : recognizer.createStream();
  stream.acceptWaveform({ samples: pcmToFloat32(samples), sampleRate: 16_000 });
  recognizer.decode(stream);
  const r = recognizer.getResult(stream);
  return { text: r.text, tokens: r.tokens, timestamps: r.timestamps };
}
