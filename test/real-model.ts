// The real neural speech model beside the project (../shared/models, on every development machine and in CI; see
// its NOTICE.md): a streaming zipformer transducer trained on GigaSpeech. Tests and benchmarks import it into their
// own data directory with the project's own command, never into the repository. And the clips to hear it on:
// Debian's real recordings (test/real-speech.ts) plus the model's own two test recordings.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type Parlance, ROOT, runCli, startParlance, tempDir } from './harness.js';
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

/**
 * A server on a data directory of its own with the real model imported as `id` (plus import `args`) and whatever
 * `prepare` adds to the directory first; stop() also removes the directory.
 */
export async function serveRealModel(
  id: string,
  opts: { args?: string[]; env?: Record<string, string>; prepare?: (dataDir: string) => void | Promise<void> } = {},
): Promise<Parlance> {
  const root = tempDir('parlance-neural-');
  const dataDir = path.join(root, 'data');
  try {
    await importRealModel(dataDir, id, opts.args);
    await opts.prepare?.(dataDir);
    const s = await startParlance({ dataDir, env: opts.env });
    return {
      ...s,
      stop: async () => {
        await s.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

/** 16 kHz mono s16le of any audio file. */
export function pcm16k(file: string): Buffer {
  return execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], { maxBuffer: 1 << 28 });
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
