// The real neural speech model beside the project (../shared/models, on every development machine and in CI; see
// its NOTICE.md): a streaming zipformer transducer trained on GigaSpeech. Tests and benchmarks import it into their
// own data directory with the project's own command, never into the repository. And the clips to hear it on:
// Debian's real recordings (test/real-speech.ts) plus the model's own two test recordings.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, runCli } from './harness.js';
import { type RealClip, testdataClips } from './real-speech.js';

export const REAL_STREAMING_MODEL = path.resolve(ROOT, '..', 'shared', 'models', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile');

/** Whether the model is there (every development machine and CI have it). */
export const hasRealModel = existsSync(path.join(REAL_STREAMING_MODEL, 'tokens.txt'));

/** `parlance models import` of the real model into `dataDir` as `id` (plus `args`); throws with its stderr on failure. */
export async function importRealModel(dataDir: string, id: string, args: string[] = []): Promise<void> {
  const r = await runCli([
    'models',
    'import',
    REAL_STREAMING_MODEL,
    '--family',
    'stt-streaming',
    '--type',
    'transducer',
    '--id',
    id,
    ...args,
    '--data-dir',
    dataDir,
  ]);
  if (r.code !== 0) throw new Error(`models import failed (${r.code}): ${r.stderr}`);
}

/** The model's own test recordings (LibriSpeech read speech, references in trans.txt). */
export function realModelClips(): RealClip[] {
  const dir = path.join(REAL_STREAMING_MODEL, 'test_wavs');
  return readFileSync(path.join(dir, 'trans.txt'), 'utf8')
    .split('\n')
    .map((l) => /^(\S+)\s+(.+)$/.exec(l.trim()))
    .filter((m) => m !== null)
    .map((m) => ({ file: path.join(dir, m[1]!), reference: m[2]!.toLowerCase(), set: 'gigaspeech-test-wavs' }));
}

/** Real English read speech for assertions on the real model: pocketsphinx-testdata and the model's test clips. */
export function realSpeechClips(): RealClip[] {
  return [...testdataClips(), ...realModelClips()];
}
