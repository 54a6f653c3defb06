// Spoken language identification with sherpa-onnx (a multilingual Whisper encoder and decoder): the configuration
// for an installed model, and the language of one stretch of 16 kHz PCM. Synchronous: callers run it on a worker
// thread.
import type sherpaTypes from 'sherpa-onnx-node';
import type { InstalledModel } from '../model-dir/manifest.js';
import { pcmToFloat32 } from '../stt/sherpa/load-sherpa.js';

export type LanguageIdConfig = sherpaTypes.SpokenLanguageIdentificationConfig;
export type LanguageIdModel = sherpaTypes.SpokenLanguageIdentification;

/** Whisper hears at most 30 s at once (sherpa-onnx warns and drops the rest, tail padding included): cut here, not copied. */
export const MAX_LID_SAMPLES = 29 * 16_000;

export function languageIdConfig(model: InstalledModel): LanguageIdConfig {
  return {
    whisper: { encoder: model.paths.encoder!, decoder: model.paths.decoder! },
    numThreads: model.threads ?? 1,
    provider: 'cpu',
    debug: 0,
  };
}

/** The language code of `samples` (16 kHz), or "" when the model could not tell (sherpa-onnx logs why). */
export function identifySamples(lid: LanguageIdModel, samples: Int16Array): string {
  const stream = lid.createStream();
  stream.acceptWaveform({ samples: pcmToFloat32(samples.subarray(0, MAX_LID_SAMPLES)), sampleRate: 16_000 });
  return lid.compute(stream);
}
